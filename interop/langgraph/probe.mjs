// Walks the LangGraph Agent Server HTTP API the way signalgate's langgraph target does and
// prints each request and (trimmed) answer, so the shapes can be checked against a server.
//   BASE=http://127.0.0.1:18624 HOOK=http://127.0.0.1:18625/hook node probe.mjs [scenario...]
// Scenarios: create, reject, enqueue, interrupt, rollback, join, wait, error, ask, deadhook.
// Run the server with DELAY_MS=0 (each scenario sets its own delay through `context`).
import { randomUUID } from 'node:crypto';

const BASE = process.env.BASE || 'http://127.0.0.1:18624';
const HOOK = process.env.HOOK || 'http://127.0.0.1:18625/hook';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(method, path, body) {
  const res = await fetch(BASE + path, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json;
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: res.status, ct: res.headers.get('content-type'), loc: res.headers.get('content-location'), json };
}
const show = (label, r) => console.log(`${label} -> ${r.status} ${typeof r.json === 'string' ? r.json : JSON.stringify(trim(r.json))}`);
function trim(v) {
  if (Array.isArray(v)) return v.map(trim);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      if (['kwargs', 'config', 'created_at', 'updated_at', 'additional_kwargs', 'response_metadata', 'tool_calls', 'invalid_tool_calls', 'usage_metadata'].includes(k)) continue;
      o[k] = trim(x);
    }
    return o;
  }
  return v;
}
const msg = (text) => ({ messages: [{ role: 'user', content: text }] });
async function newThread() {
  const id = randomUUID();
  show('POST /threads', await call('POST', '/threads', { thread_id: id, if_exists: 'do_nothing', metadata: { sg_agent: 'a', sg_thread: id } }));
  return id;
}
const run = (t, body) => call('POST', `/threads/${t}/runs`, body);
const thread = (t) => call('GET', `/threads/${t}`);
async function waitIdle(t) {
  for (let i = 0; i < 200; i++) { const r = await thread(t); if (r.json.status !== 'busy') return r; await sleep(100); }
  throw new Error('still busy');
}

const scenarios = {
  async create() {
    const t = await newThread();
    const r = await run(t, { assistant_id: 'echo', input: msg('hi'), webhook: `${HOOK}?s=create`, context: { delay_ms: 300 } });
    show('POST run', r);
    show('GET thread (busy?)', await thread(t));
    show('GET run', await call('GET', `/threads/${t}/runs/${r.json.run_id}`));
    show('GET thread (idle)', await waitIdle(t));
    show('GET run (after)', await call('GET', `/threads/${t}/runs/${r.json.run_id}`));
    show('GET state', await call('GET', `/threads/${t}/state`));
  },
  async reject() {
    const t = await newThread();
    show('run1', await run(t, { assistant_id: 'echo', input: msg('one'), context: { delay_ms: 1500 } }));
    show('run2 reject', await run(t, { assistant_id: 'echo', input: msg('two'), multitask_strategy: 'reject' }));
    show('run3 default', await run(t, { assistant_id: 'echo', input: msg('three') }));
    await waitIdle(t);
  },
  async enqueue() {
    const t = await newThread();
    const a = await run(t, { assistant_id: 'echo', input: msg('one'), context: { delay_ms: 1000 }, webhook: `${HOOK}?s=enqueue1` });
    const b = await run(t, { assistant_id: 'echo', input: msg('two'), multitask_strategy: 'enqueue', webhook: `${HOOK}?s=enqueue2` });
    show('run1', a); show('run2 enqueue', b);
    show('runs list', await call('GET', `/threads/${t}/runs`));
    const th = await waitIdle(t);
    console.log('messages', (th.json.values?.messages ?? []).map((m) => `${m.type}:${m.content}`));
    show('run1 after', await call('GET', `/threads/${t}/runs/${a.json.run_id}`));
    show('run2 after', await call('GET', `/threads/${t}/runs/${b.json.run_id}`));
  },
  async interrupt() {
    const t = await newThread();
    const a = await run(t, { assistant_id: 'echo', input: msg('one'), context: { delay_ms: 3000 }, webhook: `${HOOK}?s=interrupt1` });
    await sleep(500);
    const b = await run(t, { assistant_id: 'echo', input: msg('two'), multitask_strategy: 'interrupt', webhook: `${HOOK}?s=interrupt2` });
    show('run2 interrupt', b);
    const th = await waitIdle(t);
    console.log('messages', (th.json.values?.messages ?? []).map((m) => `${m.type}:${m.content}`));
    show('run1 after', await call('GET', `/threads/${t}/runs/${a.json.run_id}`));
    show('run2 after', await call('GET', `/threads/${t}/runs/${b.json.run_id}`));
  },
  async rollback() {
    const t = await newThread();
    const a = await run(t, { assistant_id: 'echo', input: msg('one'), context: { delay_ms: 3000 }, webhook: `${HOOK}?s=rollback1` });
    await sleep(500);
    const b = await run(t, { assistant_id: 'echo', input: msg('two'), multitask_strategy: 'rollback', webhook: `${HOOK}?s=rollback2` });
    show('run2 rollback', b);
    const th = await waitIdle(t);
    console.log('messages', (th.json.values?.messages ?? []).map((m) => `${m.type}:${m.content}`));
    show('run1 after', await call('GET', `/threads/${t}/runs/${a.json.run_id}`));
    show('run2 after', await call('GET', `/threads/${t}/runs/${b.json.run_id}`));
  },
  async join() {
    const t = await newThread();
    const a = await run(t, { assistant_id: 'echo', input: msg('joined'), context: { delay_ms: 800 } });
    const t0 = Date.now();
    const j = await call('GET', `/threads/${t}/runs/${a.json.run_id}/join`);
    show(`GET join (${Date.now() - t0} ms)`, j);
    show('GET join again', await call('GET', `/threads/${t}/runs/${a.json.run_id}/join`));
    show('POST join (wrong method)', await call('POST', `/threads/${t}/runs/${a.json.run_id}/join`, {}));
  },
  async wait() {
    const t = await newThread();
    const r = await call('POST', `/threads/${t}/runs/wait`, { assistant_id: 'echo', input: msg('waited'), context: { delay_ms: 300 } });
    show('POST runs/wait', r);
    console.log('content-location', r.loc);
  },
  async error() {
    const t = await newThread();
    const a = await run(t, { assistant_id: 'echo', input: msg('please fail-run'), webhook: `${HOOK}?s=error` });
    const th = await waitIdle(t);
    show('thread after error', th);
    show('run after error', await call('GET', `/threads/${t}/runs/${a.json.run_id}`));
    show('join after error', await call('GET', `/threads/${t}/runs/${a.json.run_id}/join`));
    show('next run on errored thread', await run(t, { assistant_id: 'echo', input: msg('after error') }));
    show('thread', await waitIdle(t));
  },
  async ask() {
    const t = await newThread();
    const a = await run(t, { assistant_id: 'ask', input: msg('deploy?'), webhook: `${HOOK}?s=ask1` });
    const th = await waitIdle(t);
    show('thread interrupted', th);
    show('run after interrupt', await call('GET', `/threads/${t}/runs/${a.json.run_id}`));
    show('state', await call('GET', `/threads/${t}/state`));
    show('run without resume on interrupted thread', await run(t, { assistant_id: 'ask', input: msg('another'), multitask_strategy: 'reject', context: { delay_ms: 200 } }));
    const th2 = await waitIdle(t);
    show('thread after plain run', th2);
    const b = await run(t, { assistant_id: 'ask', command: { resume: 'yes, go' }, webhook: `${HOOK}?s=ask2` });
    show('resume run', b);
    show('thread after resume', await waitIdle(t));
  },
  async askecho() {
    // same via the echo graph's "ask-user" trigger, resumed with a structured value
    const t = await newThread();
    await run(t, { assistant_id: 'echo', input: msg('ask-user: which env?') });
    show('thread interrupted', await waitIdle(t));
    show('resume', await run(t, { assistant_id: 'echo', command: { resume: { env: 'prod', by: 'U123' } } }));
    show('thread after resume', await waitIdle(t));
  },
  async deadhook() {
    const t = await newThread();
    await run(t, { assistant_id: 'echo', input: msg('dead hook'), webhook: 'http://127.0.0.1:9/nothing' });
    show('thread after dead hook', await waitIdle(t));
    const t2 = await newThread();
    await run(t2, { assistant_id: 'echo', input: msg('next') });
    show('another thread still served', await waitIdle(t2));
  },
};

const names = process.argv.slice(2);
for (const n of names.length ? names : Object.keys(scenarios)) {
  console.log(`\n=== ${n}`);
  await scenarios[n]();
}
