// Walks an A2A server the way signalgate's a2a target does (JSON-RPC, v1.0 and v0.3) and
// prints each request and answer, so the shapes can be checked against a server.
//   BASE=http://127.0.0.1:18641 HOOK=http://127.0.0.1:18625/a2a node probe.mjs [scenario...]
import { randomUUID } from 'node:crypto';

const BASE = process.env.BASE || 'http://127.0.0.1:18641';
const HOOK = process.env.HOOK || 'http://127.0.0.1:18625/a2a';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let seq = 0;

async function rpc(agent, method, params, { v1 = true, headers = {} } = {}) {
  const res = await fetch(`${BASE}/${agent}/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(v1 ? { 'A2A-Version': '1.0' } : {}), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params }),
  });
  const json = await res.json();
  return { status: res.status, json };
}
function brief(r) {
  const x = r.json.result ?? r.json.error;
  const t = x?.task ?? (x?.kind === 'task' || x?.status ? x : null);
  if (t) {
    return `task ${t.id.slice(0, 8)} ctx=${t.contextId} state=${t.status?.state} msg=${JSON.stringify(t.status?.message?.parts)} artifacts=${JSON.stringify((t.artifacts ?? []).map((a) => a.parts))} history=${(t.history ?? []).length}`;
  }
  return JSON.stringify(r.json);
}
const show = (label, r) => console.log(`${label} -> ${r.status} ${brief(r)}`);
const v1msg = (text, extra = {}) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra.message },
  ...(extra.configuration ? { configuration: extra.configuration } : {}),
});
const v03msg = (text, extra = {}) => ({
  message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra.message },
  ...(extra.configuration ? { configuration: extra.configuration } : {}),
});
async function waitState(agent, id, want, v1 = true) {
  for (let i = 0; i < 100; i++) {
    const r = await rpc(agent, v1 ? 'GetTask' : 'tasks/get', { id }, { v1 });
    const st = r.json.result?.status?.state;
    if (want.includes(st)) return r;
    await sleep(100);
  }
  throw new Error(`task ${id} never reached ${want}`);
}

const scenarios = {
  async raw() {
    const ctx = `ctx-${randomUUID()}`;
    const r = await rpc('echo', 'SendMessage', v1msg('<signal id="s1">hi</signal>', { message: { contextId: ctx, metadata: { delay_ms: 100 }, parts: [{ text: '<signal id="s1">hi</signal>' }, { data: { event: 'check_run', id: 7 }, mediaType: 'application/json' }] } }));
    console.log('v1 SendMessage (blocking) full answer:', JSON.stringify(r.json));
    const g = await rpc('echo', 'GetTask', { id: r.json.result.task.id, historyLength: 1 });
    console.log('v1 GetTask historyLength=1:', JSON.stringify(g.json));
  },
  async nonblocking() {
    const ctx = `ctx-${randomUUID()}`;
    const r = await rpc('echo', 'SendMessage', v1msg('slow', { message: { contextId: ctx, metadata: { delay_ms: 1000 } }, configuration: { returnImmediately: true } }));
    show('v1 SendMessage returnImmediately', r);
    const id = r.json.result.task.id;
    show('GetTask right after', await rpc('echo', 'GetTask', { id }));
    await sleep(300);
    show('GetTask later', await rpc('echo', 'GetTask', { id }));
    show('GetTask done', await waitState('echo', id, ['TASK_STATE_COMPLETED']));
    show('next message same contextId, no taskId', await rpc('echo', 'SendMessage', v1msg('again', { message: { contextId: ctx } })));
    show('message to the completed task', await rpc('echo', 'SendMessage', v1msg('late', { message: { contextId: ctx, taskId: id } })));
    show('GetTask unknown', await rpc('echo', 'GetTask', { id: randomUUID() }));
    show('ListTasks by context', await rpc('echo', 'ListTasks', { contextId: ctx }));
  },
  async running() {
    const ctx = `ctx-${randomUUID()}`;
    const r = await rpc('echo', 'SendMessage', v1msg('first', { message: { contextId: ctx, metadata: { delay_ms: 1500 } }, configuration: { returnImmediately: true } }));
    const id = r.json.result.task.id;
    await sleep(300);
    show('state before 2nd message', await rpc('echo', 'GetTask', { id }));
    const t0 = Date.now();
    const r2 = await rpc('echo', 'SendMessage', v1msg('second', { message: { contextId: ctx, taskId: id } }));
    show(`2nd message to working task (blocking, ${Date.now() - t0} ms)`, r2);
    show('final', await waitState('echo', id, ['TASK_STATE_COMPLETED']));
    const r3 = await rpc('echo', 'SendMessage', v1msg('first', { message: { contextId: ctx, metadata: { delay_ms: 1000 } }, configuration: { returnImmediately: true } }));
    const r4 = await rpc('echo', 'SendMessage', v1msg('nb second', { message: { contextId: ctx, taskId: r3.json.result.task.id } , configuration: { returnImmediately: true } }));
    show('2nd message to working task (returnImmediately)', r4);
    show('wrong contextId for task', await rpc('echo', 'SendMessage', v1msg('x', { message: { contextId: 'other', taskId: r3.json.result.task.id } })));
    await waitState('echo', r3.json.result.task.id, ['TASK_STATE_COMPLETED']);
  },
  async ask() {
    const ctx = `ctx-${randomUUID()}`;
    const r = await rpc('ask', 'SendMessage', v1msg('deploy?', { message: { contextId: ctx } }));
    show('v1 ask: first message (blocking)', r);
    const id = r.json.result.task.id;
    show('GetTask', await rpc('ask', 'GetTask', { id }));
    show('follow-up with taskId', await rpc('ask', 'SendMessage', v1msg('yes, go', { message: { contextId: ctx, taskId: id } })));
    const e = await rpc('echo', 'SendMessage', v1msg('auth-user please', { message: { contextId: ctx } }));
    show('echo auth-required', e);
    show('answer auth', await rpc('echo', 'SendMessage', v1msg('signed in', { message: { contextId: ctx, taskId: e.json.result.task.id } })));
    show('echo fail-task', await rpc('echo', 'SendMessage', v1msg('fail-task', { message: { contextId: ctx } })));
    show('echo reject-task', await rpc('echo', 'SendMessage', v1msg('reject-task', { message: { contextId: ctx } })));
  },
  async cancel() {
    const r = await rpc('echo', 'SendMessage', v1msg('long', { message: { metadata: { delay_ms: 1500 } }, configuration: { returnImmediately: true } }));
    const id = r.json.result.task.id;
    await sleep(200);
    show('CancelTask', await rpc('echo', 'CancelTask', { id }));
    show('after cancel', await waitState('echo', id, ['TASK_STATE_CANCELED']));
  },
  async push() {
    const ctx = `ctx-${randomUUID()}`;
    const r = await rpc('echo', 'SendMessage', v1msg('pushed', { message: { contextId: ctx, metadata: { delay_ms: 300 } }, configuration: { returnImmediately: true, taskPushNotificationConfig: { url: `${HOOK}?v=1&s=inline`, token: 'tok-inline' } } }));
    show('v1 SendMessage with taskPushNotificationConfig', r);
    const id = r.json.result.task.id;
    await waitState('echo', id, ['TASK_STATE_COMPLETED']);
    const r2 = await rpc('echo', 'SendMessage', v1msg('later push', { message: { contextId: ctx, metadata: { delay_ms: 800 } }, configuration: { returnImmediately: true } }));
    const id2 = r2.json.result.task.id;
    const c = await rpc('echo', 'CreateTaskPushNotificationConfig', { taskId: id2, url: `${HOOK}?v=1&s=create`, token: 'tok-create' });
    console.log('v1 CreateTaskPushNotificationConfig ->', JSON.stringify(c.json));
    const c2 = await rpc('echo', 'CreateTaskPushNotificationConfig', { taskId: id2, id: 'mine', url: `${HOOK}?v=1&s=auth`, authentication: { scheme: 'Bearer', credentials: 'secret-bearer' } });
    console.log('v1 CreateTaskPushNotificationConfig (authentication) ->', JSON.stringify(c2.json));
    console.log('v1 ListTaskPushNotificationConfigs ->', JSON.stringify((await rpc('echo', 'ListTaskPushNotificationConfigs', { taskId: id2 })).json));
    await waitState('echo', id2, ['TASK_STATE_COMPLETED']);
    await sleep(300);
  },
  async v03() {
    const ctx = `ctx-${randomUUID()}`;
    const r = await rpc('echo', 'message/send', v03msg('legacy', { message: { contextId: ctx, metadata: { delay_ms: 500 } }, configuration: { blocking: false, pushNotificationConfig: { url: `${HOOK}?v=0.3&s=inline`, token: 'tok-v03' } } }), { v1: false });
    console.log('v0.3 message/send blocking:false ->', JSON.stringify(r.json));
    const id = r.json.result.id;
    const s = await rpc('echo', 'tasks/pushNotificationConfig/set', { taskId: id, pushNotificationConfig: { url: `${HOOK}?v=0.3&s=set`, token: 'tok-set' } }, { v1: false });
    console.log('v0.3 tasks/pushNotificationConfig/set ->', JSON.stringify(s.json));
    const g = await waitState('echo', id, ['completed'], false);
    console.log('v0.3 tasks/get ->', JSON.stringify(g.json));
    const a = await rpc('ask', 'message/send', v03msg('deploy?', { message: { contextId: ctx } }), { v1: false });
    show('v0.3 ask', a);
    show('v0.3 follow-up', await rpc('ask', 'message/send', v03msg('ok', { message: { contextId: ctx, taskId: a.json.result.id } }), { v1: false }));
    show('v0.3 tasks/get unknown', await rpc('echo', 'tasks/get', { id: randomUUID() }, { v1: false }));
    show('v0.3 method with A2A-Version 1.0', await rpc('echo', 'message/send', v03msg('x'), { v1: true }));
    show('v1 method without A2A-Version', await rpc('echo', 'SendMessage', v1msg('x'), { v1: false }));
    show('v1 method, A2A-Version 0.3', await rpc('echo', 'SendMessage', v1msg('x'), { v1: false, headers: { 'A2A-Version': '0.3' } }));
    show('v1 SendMessage v0.3-shaped message', await rpc('echo', 'SendMessage', v03msg('kind-shaped')));
    await sleep(300);
  },
};

const names = process.argv.slice(2);
for (const n of names.length ? names : Object.keys(scenarios)) {
  console.log(`\n=== ${n}`);
  await scenarios[n]();
}
