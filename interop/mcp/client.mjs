// The TypeScript MCP SDK's client against signalgate's /mcp endpoint (streamable HTTP).
// Usage: node client.mjs <mcp url> <agent token> <resourceId> <threadId> <other agent>
// Runs every inbox tool once (and Mastra's notification-inbox, reply and reply_status) and prints one JSON object with what came back; the Go test
// (inboxmcp TestTypeScriptClient) checks it against the gateway's store.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, resourceId, threadId, otherAgent] = process.argv.slice(2);
const thread = { resourceId, threadId };

async function connect(bearer) {
  const client = new Client({ name: "signalgate-ts-interop", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

// A call's structured result, or its tool error text.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: { ...thread, ...args } });
  const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return res.isError ? { isError: true, text } : { isError: false, result: res.structuredContent, text };
}

const out = {};
let refused;
try {
  await connect("not-the-token-0123456789");
} catch (err) {
  refused = String(err);
}
out.wrongToken = refused ?? "connected";

const client = await connect(token);
out.server = client.getServerVersion();
out.tools = (await client.listTools()).tools.map((t) => ({
  name: t.name,
  readOnly: t.annotations?.readOnlyHint ?? false,
  required: t.inputSchema.required ?? [],
}));
out.notify = await call(client, "notify", {
  kind: "handoff", source: "ts-client", summary: "Pick up the flaky test on main", priority: "low", payload: { test: "TestFlaky" },
});
const id = out.notify.result?.recordId;
out.list = await call(client, "inbox_list", { source: ["ts-client"] });
out.search = await call(client, "inbox_search", { query: "FLAKY" });
out.read = await call(client, "inbox_read", { ids: [id] });
out.archive = await call(client, "inbox_archive", { id });
out.dismiss = await call(client, "inbox_dismiss", { id });
out.mastraNotify = await call(client, "notify", { kind: "ci-failure", source: "ts-client", summary: "CI failed on main", priority: "low" });
out.mastraList = await call(client, "notification-inbox", { action: "list", source: "ts-client" });
out.mastraSearch = await call(client, "notification-inbox", { action: "search", query: "ci failed" });
out.mastraNotify2 = await call(client, "notify", { kind: "mention", source: "ts-client", summary: "Jane: ping", priority: "low" });
out.mastraRead = await call(client, "notification-inbox", { action: "read" });
out.mastraNoQuery = await call(client, "notification-inbox", { action: "search" });
out.mastraOtherAgent = await call(client, "notification-inbox", { action: "list", agentId: otherAgent });
out.replyList = await call(client, "inbox_list", { source: ["slack"], status: ["all"] });
out.reply = await call(client, "reply", { id: "ts-reply-1", text: "On it." });
out.replyAgain = await call(client, "reply", { id: "ts-reply-1", text: "On it." });
out.replyConflict = await call(client, "reply", { id: "ts-reply-1", text: "Something else." });
out.replyForeign = await call(client, "reply", { id: "ts-reply-2", text: "x", replyTo: { source: "slack", connector: "acme", channel: "C-ELSEWHERE" } });
out.replyStatus = await call(client, "reply_status", { id: "ts-reply-1" });
out.otherAgent = await call(client, "inbox_list", { agentId: otherAgent });
out.invalid = await call(client, "inbox_list", { limit: 0 });
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
