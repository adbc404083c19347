// Records the HTTP requests the official `@anthropic-ai/sdk` sends for the managed
// agents session calls signalgate needs, against a local fake.
// Usage: node record-anthropic.js [out.json]
'use strict';
const fs = require('node:fs');
const Anthropic = require('@anthropic-ai/sdk').default;
const { VERSION } = require('@anthropic-ai/sdk/version');
const { startRecorder } = require('./recorder');

const SESSION = {
  id: 'sesn_fake_1', type: 'session', status: 'idle', title: null, metadata: {},
  agent: { id: 'agent_fake', version: 1 }, environment_id: 'env_fake', archived_at: null, budget: null,
  created_at: '2026-05-01T00:00:00Z', updated_at: '2026-05-01T00:00:00Z', resources: [], vault_ids: [],
  outcome_evaluations: [], stats: {}, usage: {},
};

(async () => {
  let failOnce = true;
  const rec = await startRecorder([
    { method: 'POST', match: /^\/v1\/sessions$/, reply: (e) => ({ status: 200, body: { ...SESSION, metadata: e.body.metadata || {} } }) },
    { method: 'GET', match: /^\/v1\/sessions\/[^/?]+(\?.*)?$/, reply: () => ({ status: 200, body: SESSION }) },
    { method: 'GET', match: /^\/v1\/sessions\/[^/]+\/events(\?.*)?$/, reply: () => ({ status: 200, body: { data: [
      { id: 'sevt_tool', type: 'agent.tool_use', name: 'bash', input: { command: 'rm -rf build' }, processed_at: '2026-05-01T00:00:01Z', evaluated_permission: 'ask' },
      { id: 'sevt_idle', type: 'session.status_idle', processed_at: '2026-05-01T00:00:02Z', stop_details: null, stop_reason: { type: 'requires_action', event_ids: ['sevt_tool'] } },
    ], next_page: null } }) },
    { method: 'POST', match: /^\/v1\/sessions\/[^/]+\/events$/, reply: (e) => {
      if (JSON.stringify(e.body).includes('retry me') && failOnce) {
        failOnce = false;
        return { status: 500, headers: { 'retry-after-ms': '10' }, body: { type: 'error', error: { type: 'api_error', message: 'boom' } } };
      }
      return { status: 200, body: { data: e.body.events.map((ev, i) => ({ id: `sevt_sent_${i}`, processed_at: null, ...ev })) } };
    } },
  ]);

  const client = new Anthropic({ apiKey: 'sk-ant-test-signalgate', baseURL: `http://127.0.0.1:${rec.port}` });
  const cases = [];
  const run = async (name, fn) => {
    const before = rec.recorded.length;
    let result, error;
    try { result = await fn(); } catch (err) { error = String(err); }
    cases.push({ name, result: result === undefined ? null : result, error, requests: rec.recorded.slice(before) });
  };

  const signalText = '<signal id="sig_1" priority="high" source="slack">deploy failed on main</signal>';

  cases.push({ name: 'note: events.create exists?', result: typeof client.beta.sessions.events.create, requests: [] });

  await run('sessions.create (agent id string, environment_id, metadata)', () =>
    client.beta.sessions.create({
      agent: 'agent_fake', environment_id: 'env_fake',
      metadata: { signalgate_agent: 'builder', signalgate_resource: 'repo:acme/app', signalgate_thread: 'T1' },
    }));

  await run('sessions.create with extra betas (SDK appends managed-agents-2026-04-01 after them)', () =>
    client.beta.sessions.create({ agent: 'agent_fake', environment_id: 'env_fake', betas: ['some-other-beta-2026-01-01'] }));

  await run('sessions.events.send (user.message)', () =>
    client.beta.sessions.events.send('sesn_fake_1', {
      events: [{ type: 'user.message', content: [{ type: 'text', text: signalText }] }],
    }));

  await run('sessions.events.send retried after a 500 (no idempotency header at all)', () =>
    client.beta.sessions.events.send('sesn_fake_1', {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'retry me' }] }],
    }));

  await run('sessions.events.send with a caller-supplied Idempotency-Key request header (passes through)', () =>
    client.beta.sessions.events.send('sesn_fake_1', {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'keyed' }] }],
    }, { headers: { 'Idempotency-Key': 'sig_2' } }));

  await run('sessions.retrieve', () => client.beta.sessions.retrieve('sesn_fake_1'));

  await run('events.list (after session.requires_action: find stop_reason.event_ids)', async () => {
    const page = await client.beta.sessions.events.list('sesn_fake_1', { order: 'desc', limit: 20 });
    return page.data;
  });

  await run('answer requires_action: user.tool_confirmation allow', () =>
    client.beta.sessions.events.send('sesn_fake_1', { events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_tool', result: 'allow' }] }));

  await run('answer requires_action: user.tool_confirmation deny with message', () =>
    client.beta.sessions.events.send('sesn_fake_1', { events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_tool', result: 'deny', deny_message: 'denied in Slack by @alice' }] }));

  await run('interrupt', () =>
    client.beta.sessions.events.send('sesn_fake_1', { events: [{ type: 'user.interrupt' }] }));

  await rec.close();
  const out = { sdk: '@anthropic-ai/sdk', version: VERSION, node: process.version, cases };
  const json = JSON.stringify(out, null, 2);
  if (process.argv[2]) fs.writeFileSync(process.argv[2], json + '\n');
  process.stdout.write(json + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
