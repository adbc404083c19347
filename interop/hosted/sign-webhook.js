// Standard Webhooks signing that both SDKs' unwrap accept, plus an acceptance matrix.
//
//   node sign-webhook.js                       # self-test: matrix + sample payloads (JSON on stdout)
//   node sign-webhook.js sign SECRET BODYFILE [ID] [TS]
//        -> {"webhook-id":..,"webhook-timestamp":..,"webhook-signature":"v1,.."}
//   node sign-webhook.js verify openai|anthropic SECRET HEADERSJSONFILE BODYFILE
//        -> exit 0 and the parsed event if the SDK's unwrap accepts, exit 1 otherwise
'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');
const { Webhook } = require('standardwebhooks');
const OpenAI = require('openai').default;
const Anthropic = require('@anthropic-ai/sdk').default;

// The recipe, with no library: key = base64decode(secret minus "whsec_");
// sig = base64(HMAC-SHA256(key, `${id}.${ts}.${body}`)); header = "v1," + sig.
function sign(secret, id, ts, body) {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = crypto.createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${mac}` };
}

const openai = new OpenAI({ apiKey: 'sk-test-signalgate', baseURL: 'http://127.0.0.1:9/v1' });
const anthropic = new Anthropic({ apiKey: 'sk-ant-test-signalgate', baseURL: 'http://127.0.0.1:9' });

async function verifyOpenAI(body, headers, secret) {
  try { return { ok: true, event: await openai.webhooks.unwrap(body, headers, secret) }; }
  catch (e) { return { ok: false, error: `${e.constructor.name}: ${e.message}` }; }
}
function verifyAnthropic(body, headers, secret) {
  try { return { ok: true, event: anthropic.beta.webhooks.unwrap(body, { headers, key: secret }) }; }
  catch (e) { return { ok: false, error: `${e.constructor.name}: ${e.message}` }; }
}

async function main() {
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === 'sign') {
    const [secret, file, id = `msg_${crypto.randomUUID()}`, ts = Math.floor(Date.now() / 1000)] = args;
    process.stdout.write(JSON.stringify(sign(secret, id, ts, fs.readFileSync(file, 'utf8'))) + '\n');
    return;
  }
  if (cmd === 'verify') {
    const [which, secret, hfile, bfile] = args;
    const headers = JSON.parse(fs.readFileSync(hfile, 'utf8'));
    const body = fs.readFileSync(bfile, 'utf8');
    const r = which === 'openai' ? await verifyOpenAI(body, headers, secret) : verifyAnthropic(body, headers, secret);
    process.stdout.write(JSON.stringify(r) + '\n');
    process.exit(r.ok ? 0 : 1);
  }

  // Self-test.
  const secret = 'whsec_' + Buffer.from('signalgate-test-webhook-secret!!').toString('base64');
  const now = Math.floor(Date.now() / 1000);
  const samples = {
    openai: [
      { id: 'evt_1', object: 'event', created_at: now, type: 'agent.session.in_progress', data: { id: 'sess_fake_1', environment_type: 'openai_hosted', environment_id: 'env_fake' } },
      { id: 'evt_2', object: 'event', created_at: now, type: 'agent.session.idle', data: { id: 'sess_fake_1', environment_type: 'openai_hosted', environment_id: 'env_fake' } },
      { id: 'evt_3', object: 'event', created_at: now, type: 'agent.session.action_required', data: { id: 'sess_fake_1', required_action: { type: 'computer_use_approval_request' } } },
      { id: 'evt_4', object: 'event', created_at: now, type: 'agent.session.failed', data: { id: 'sess_fake_1', environment_type: 'none' } },
    ],
    anthropic: ['session.status_run_started', 'session.status_idled', 'session.requires_action', 'session.status_terminated'].map((t, i) => ({
      id: `wevt_${i + 1}`, type: 'event', created_at: new Date(now * 1000).toISOString(),
      data: { id: 'sesn_fake_1', type: t, organization_id: 'org_fake', workspace_id: 'wrkspc_fake' },
    })),
  };

  const results = { secret, samples: [], matrix: [] };
  for (const [vendor, events] of Object.entries(samples)) {
    for (const ev of events) {
      const body = JSON.stringify(ev);
      const headers = sign(secret, `msg_${ev.id}`, now, body);
      const libSig = new Webhook(secret).sign(`msg_${ev.id}`, new Date(now * 1000), body);
      const o = await verifyOpenAI(body, headers, secret);
      const a = verifyAnthropic(body, headers, secret);
      results.samples.push({ vendor, type: ev.type === 'event' ? ev.data.type : ev.type, headers, sameAsStandardwebhooksLib: libSig === headers['webhook-signature'], openaiUnwrap: o.ok, anthropicUnwrap: a.ok, body: ev });
    }
  }

  // Acceptance matrix: where the two SDKs agree and differ.
  const body = JSON.stringify(samples.openai[1]);
  const good = sign(secret, 'msg_x', now, body);
  const bare = good['webhook-signature'].slice(3);
  const rawSecret = 'plain-text-secret';
  const rawSigned = (() => { // HMAC keyed with the UTF-8 bytes of the secret, as openai does for non-whsec_ secrets
    const mac = crypto.createHmac('sha256', Buffer.from(rawSecret, 'utf8')).update(`msg_x.${now}.${body}`).digest('base64');
    return { ...good, 'webhook-signature': `v1,${mac}` };
  })();
  const cases = [
    ['valid v1,<sig>', body, good, secret],
    ['upper-case header names', body, Object.fromEntries(Object.entries(good).map(([k, v]) => [k.toUpperCase(), v])), secret],
    ['secret without whsec_ prefix (same base64)', body, good, secret.slice(6)],
    ['several signatures, good one second', body, { ...good, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${good['webhook-signature']}` }, secret],
    ['signature without the v1, prefix', body, { ...good, 'webhook-signature': bare }, secret],
    ['v1a, (asymmetric) prefix', body, { ...good, 'webhook-signature': `v1a,${bare}` }, secret],
    ['body re-serialized (pretty JSON)', JSON.stringify(samples.openai[1], null, 2), good, secret],
    ['timestamp 290s old', body, sign(secret, 'msg_x', now - 290, body), secret],
    ['timestamp 310s old', body, sign(secret, 'msg_x', now - 310, body), secret],
    ['timestamp 290s in the future', body, sign(secret, 'msg_x', now + 290, body), secret],
    ['timestamp 310s in the future', body, sign(secret, 'msg_x', now + 310, body), secret],
    ['timestamp in milliseconds', body, sign(secret, 'msg_x', now * 1000, body), secret],
    ['missing webhook-id', body, { 'webhook-timestamp': good['webhook-timestamp'], 'webhook-signature': good['webhook-signature'] }, secret],
    ['wrong webhook-id', body, { ...good, 'webhook-id': 'msg_y' }, secret],
    ['raw (non-base64) secret, HMAC keyed by its UTF-8 bytes', body, rawSigned, rawSecret],
  ];
  for (const [name, b, h, s] of cases) {
    const o = await verifyOpenAI(b, h, s);
    const a = verifyAnthropic(b, h, s);
    results.matrix.push({ case: name, openai: o.ok ? 'accept' : `reject (${o.error})`, anthropic: a.ok ? 'accept' : `reject (${a.error})` });
  }

  // A fixed vector (for a Go unit test of the HMAC; its timestamp is old, so unwrap rejects it now).
  const vbody = '{"id":"evt_1","object":"event","created_at":1767225600,"type":"agent.session.idle","data":{"id":"sess_fake_1","environment_type":"none"}}';
  results.vector = { secret, id: 'msg_vector', timestamp: 1767225600, body: vbody, headers: sign(secret, 'msg_vector', 1767225600, vbody) };
  process.stdout.write(JSON.stringify(results, null, 2) + '\n');
}
main().catch((e) => { console.error(e); process.exit(1); });
