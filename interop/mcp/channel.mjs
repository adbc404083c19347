// The TypeScript MCP SDK's client standing in for Claude Code in front of `gateway channel`:
// it starts the channel over stdio as Claude Code does, takes notifications/claude/channel and
// notifications/claude/channel/permission with the schemas Claude Code 2.1.337 declares, and
// is driven line by line.
// Usage: node channel.mjs <command> [args…]   (the channel server's command line)
// stdin, one JSON object a line: {"cmd":"tools"} | {"cmd":"call","name":…,"arguments":{…}} |
//   {"cmd":"permission_request","params":{…}} | {"cmd":"close"}
// stdout, one JSON object a line: {"type":"ready",capabilities,instructions,server} |
//   {"type":"channel",params} | {"type":"permission",params} | {"type":"tools",tools} |
//   {"type":"result",name,result} | {"type":"error",error}
import readline from "node:readline";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const ChannelNotification = z.object({
  method: z.literal("notifications/claude/channel"),
  params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()).optional() }),
});
const PermissionVerdict = z.object({
  method: z.literal("notifications/claude/channel/permission"),
  params: z.object({ request_id: z.string(), behavior: z.enum(["allow", "deny"]) }),
});

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "claude-code", title: "Claude Code", version: "2.1.337" }, { capabilities: {} });
client.setNotificationHandler(ChannelNotification, (n) => out({ type: "channel", params: n.params }));
client.setNotificationHandler(PermissionVerdict, (n) => out({ type: "permission", params: n.params }));
await client.connect(transport);
out({ type: "ready", capabilities: client.getServerCapabilities(), instructions: client.getInstructions(), server: client.getServerVersion() });

for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const cmd = JSON.parse(line);
  try {
    if (cmd.cmd === "close") break;
    if (cmd.cmd === "tools") out({ type: "tools", tools: (await client.listTools()).tools });
    if (cmd.cmd === "call") out({ type: "result", name: cmd.name, result: await client.callTool({ name: cmd.name, arguments: cmd.arguments }) });
    if (cmd.cmd === "permission_request") await client.notification({ method: "notifications/claude/channel/permission_request", params: cmd.params });
  } catch (err) {
    out({ type: "error", error: String(err) });
  }
}
await client.close();
