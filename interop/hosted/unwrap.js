// The vendors' own verdicts on session webhooks: reads a JSON array of
// {vendor: "openai"|"anthropic", secret, headers, body} on stdin and prints, for each, whether
// that vendor's webhooks.unwrap takes it ({ok, error}). The Go tests of targets/session
// require the gateway to take exactly the same deliveries.
'use strict';
const OpenAI = require('openai').default;
const Anthropic = require('@anthropic-ai/sdk').default;

const openai = new OpenAI({ apiKey: 'sk-unused', baseURL: 'http://127.0.0.1:9/v1' });
const anthropic = new Anthropic({ apiKey: 'sk-ant-unused', baseURL: 'http://127.0.0.1:9' });

async function verdict(c) {
  try {
    if (c.vendor === 'openai') await openai.webhooks.unwrap(c.body, c.headers, c.secret);
    else anthropic.beta.webhooks.unwrap(c.body, { headers: c.headers, key: c.secret });
    return { ok: true };
  } catch (e) {
    return { ok: false, error: `${e.constructor.name}: ${e.message}` };
  }
}

(async () => {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const out = [];
  for (const c of JSON.parse(input)) out.push(await verdict(c));
  process.stdout.write(JSON.stringify(out) + '\n');
})();
