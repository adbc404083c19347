// Records the HTTP requests the official `openai` SDK sends for the Agents API
// session calls signalgate needs, against a local fake. Usage: node record-openai.js [out.json]
'use strict';
const fs = require('node:fs');
const OpenAI = require('openai').default;
const { VERSION } = require('openai/version');
const { startRecorder } = require('./recorder');

const SESSION = {
  id: 'sess_fake_1', object: 'agent.session', created_at: 1760000000, last_active_at: 1760000000,
  agent: { id: 'agent_fake', model: 'gpt-fake', name: null, instructions: null },
  environment: { type: 'none' }, error: null, metadata: {}, required_actions: [],
  status: 'idle', usage: null, vault_ids: [],
};

(async () => {
  let failOnce = true;
  const rec = await startRecorder([
    { method: 'POST', match: /^\/v1\/agents\/sessions$/, reply: (e) => ({ status: 200, body: { ...SESSION, metadata: e.body.metadata || {} } }) },
    { method: 'GET', match: /^\/v1\/agents\/sessions\/[^/]+$/, reply: () => ({ status: 200, body: { ...SESSION, status: 'requires_action', required_actions: [
      { type: 'computer_use_approval_request', request_id: 'req_1', turn_id: 'turn_1', request: { type: 'browser_origin_access', origin: 'https://example.com', reason: 'needs docs' } },
      { type: 'function_call', call_id: 'call_1', name: 'deploy', arguments: { env: 'prod' }, turn_id: 'turn_1' },
    ] } }) },
    { method: 'POST', match: /^\/v1\/agents\/sessions\/[^/]+\/events$/, reply: (e) => {
      // The "retry" case: first attempt fails with 500 so the SDK retries.
      if (e.headers['idempotency-key'] === 'sig_retry') {
        if (failOnce) { failOnce = false; return { status: 500, headers: { 'retry-after-ms': '10' }, body: { error: { message: 'boom' } } }; }
      }
      return { status: 202 };
    } },
  ]);

  const client = new OpenAI({ apiKey: 'sk-test-signalgate', baseURL: `http://127.0.0.1:${rec.port}/v1` });
  const cases = [];
  const run = async (name, fn) => {
    const before = rec.recorded.length;
    let result, error;
    try { result = await fn(); } catch (err) { error = String(err); }
    cases.push({ name, result: result === undefined ? null : result, error, requests: rec.recorded.slice(before) });
  };

  const signalText = '<signal id="sig_1" priority="high" source="slack">deploy failed on main</signal>';

  await run('sessions.create (saved agent, prewarmed hosted environment, metadata)', () =>
    client.beta.agents.sessions.create({
      agent_id: 'agent_fake',
      environment: { type: 'openai_hosted', environment_id: 'env_fake' },
      metadata: { signalgate_agent: 'builder', signalgate_resource: 'repo:acme/app', signalgate_thread: 'T1' },
    }));

  await run('sessions.create (environment none: input is required at creation)', () =>
    client.beta.agents.sessions.create({
      agent_id: 'agent_fake',
      environment: { type: 'none' },
      input: [{ role: 'user', content: [{ type: 'input_text', text: signalText }] }],
      metadata: { signalgate_thread: 'T1' },
    }));

  await run('sessions.events.create (agent.session.input.message + Idempotency-Key)', () =>
    client.beta.agents.sessions.events.create('sess_fake_1', {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: signalText }] }] }],
      'Idempotency-Key': 'sig_1',
    }));

  await run('sessions.events.create retried after a 500 (same Idempotency-Key, X-Stainless-Retry-Count 0 then 1)', () =>
    client.beta.agents.sessions.events.create('sess_fake_1', {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'retry me' }] }] }],
      'Idempotency-Key': 'sig_retry',
    }));

  await run('sessions.events.create without Idempotency-Key (SDK adds none of its own)', () =>
    client.beta.agents.sessions.events.create('sess_fake_1', {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'no key' }] }] }],
    }));

  await run('sessions.retrieve (after agent.session.action_required: read required_actions)', () =>
    client.beta.agents.sessions.retrieve('sess_fake_1'));

  await run('answer action_required: computer_use_approval_request_result (browser_origin_access)', () =>
    client.beta.agents.sessions.events.create('sess_fake_1', {
      events: [{ type: 'agent.session.input.computer_use_approval_request_result', request_id: 'req_1', response: { type: 'browser_origin_access', decision: 'approve' } }],
      'Idempotency-Key': 'approval_req_1',
    }));

  await run('answer action_required: tool_result (function_call)', () =>
    client.beta.agents.sessions.events.create('sess_fake_1', {
      events: [{ type: 'agent.session.input.tool_result', call_id: 'call_1', turn_id: 'turn_1', success: false, error: 'denied by reviewer in Slack' }],
      'Idempotency-Key': 'approval_call_1',
    }));

  await run('cancel the active turn', () =>
    client.beta.agents.sessions.events.create('sess_fake_1', { events: [{ type: 'agent.session.input.cancel' }] }));

  await rec.close();
  const out = { sdk: 'openai', version: VERSION, node: process.version, cases };
  const json = JSON.stringify(out, null, 2);
  if (process.argv[2]) fs.writeFileSync(process.argv[2], json + '\n');
  process.stdout.write(json + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
