// A real LangGraph Agent Server (the open-source JS server, @langchain/langgraph-api, in
// memory) serving the deterministic graphs of graphs.mjs, started programmatically: no CLI
// (so no analytics, no browser, no file watcher, no .gitignore edit) and no network.
//
//   PORT=18624 DELAY_MS=1500 node server.mjs    # prints "ready on 18624 ..."
//
// Graphs (assistant_id = graph id, or the assistant's uuid5): echo, ask (see graphs.mjs).
// Env: HOST (127.0.0.1), N_WORKERS (10: concurrent background runs), DATA_DIR (where
// .langgraph_api/ is kept; default a fresh temp dir, so every start is clean; reuse one to
// keep threads across restarts: it is flushed 3 s after a change and on SIGTERM/SIGINT),
// LOG_JSON=true for JSON logs, LOG_LEVEL (debug).
//
// RESPAWN_WORKERS (default 1): the server calls a run's `webhook` inside its worker loop
// with no error handling, so one refused webhook delivery (the receiver down) kills that
// worker for good; after N_WORKERS such failures no run starts any more. With this on, the
// harness starts a replacement worker each time (and says so on stderr). Set 0 to see the
// server's own behaviour.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

// Keep the server and LangChain off the network before anything loads.
for (const k of ['LANGSMITH_TRACING', 'LANGSMITH_TRACING_V2', 'LANGCHAIN_TRACING', 'LANGCHAIN_TRACING_V2']) process.env[k] = 'false';
for (const k of ['LANGSMITH_API_KEY', 'LANGCHAIN_API_KEY']) delete process.env[k];
process.env.LANGGRAPH_CLI_NO_ANALYTICS = '1';
process.env.BROWSER = 'none';

const { startServer } = await import('@langchain/langgraph-api/server');
// Internals the package does not export, loaded by file URL so they are the very modules
// the server uses: the ops store (to hand to the server and to replacement workers) and
// the worker loop.
const apiDist = new URL('.', import.meta.resolve('@langchain/langgraph-api/server'));
const { FileSystemOps } = await import(new URL('storage/ops.mjs', apiDist));
const { FileSystemPersistence } = await import(new URL('storage/persist.mjs', apiDist));
const { queue } = await import(new URL('queue.mjs', apiDist));

const here = dirname(fileURLToPath(import.meta.url));
const port = Number(process.env.PORT || 18624);
const dataDir = process.env.DATA_DIR || mkdtempSync(join(tmpdir(), 'lg-interop-'));
const graphPath = join(here, 'graphs.mjs');
const respawn = process.env.RESPAWN_WORKERS !== '0';

// A port already taken surfaces as an uncaught listen error that would leave the process
// up but serving nothing: exit instead, so a test harness sees the failure.
process.on('uncaughtException', (err) => {
  console.error(`fatal: ${err?.stack || err}`);
  process.exit(1);
});

// Same ops store the server builds when given none (startServer then skips creating it).
const conn = new FileSystemPersistence('.langgraphjs_ops.json', () => ({
  runs: {}, threads: {}, assistants: {}, assistant_versions: [], retry_counter: {},
}));
await conn.initialize(dataDir);
const ops = new FileSystemOps(conn);

process.on('unhandledRejection', (err) => {
  if (respawn && String(err?.stack ?? '').includes('callWebhook')) {
    console.error(`worker died delivering a run webhook (${err?.cause?.code ?? err?.message}); started a replacement`);
    queue(ops);
  }
});

const t0 = performance.now();
const { host, cleanup } = await startServer({
  port,
  host: process.env.HOST || '127.0.0.1',
  nWorkers: Number(process.env.N_WORKERS || 10),
  cwd: dataDir,
  graphs: { echo: `${graphPath}:echo`, ask: `${graphPath}:ask` },
}, { ops });
console.log(`ready on ${port} (${host}, ${Math.round(performance.now() - t0)} ms, data ${dataDir})`);

const stop = async () => {
  try {
    await cleanup();
    await conn.flush();
  } catch (err) {
    console.error(`flushing state on exit failed: ${err?.message ?? err}`);
    process.exitCode = 1;
  }
  process.exit();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
