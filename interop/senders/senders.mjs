// Providers' official webhook libraries, driven by the Go tests in connectors/generic:
// stdin is a JSON array of cases, stdout the JSON array of results, in order.
//   {"lib": "discord"|"linear"|"shopify", "key", "body", "headers", "now"}  -> {"ok", "error"}
//   {"lib": "octokit", "key", "body"}                                      -> {"signature"}
//   {"lib": "linear-documents", "names"}      -> {"documents": {name: the SDK's GraphQL document}}
// "now" (Unix ms) stands in for the clock of libraries that check freshness, so the
// Go side keeps its fixed test time.
import { verifyKey } from 'discord-interactions';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import '@shopify/shopify-api/adapters/web-api';
import { shopifyApi, ApiVersion } from '@shopify/shopify-api';
import { sign } from '@octokit/webhooks-methods';

const realNow = Date.now;

function header(headers, name) {
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() === want) return v;
  return '';
}

async function run(c) {
  switch (c.lib) {
    case 'discord': {
      const ok = await verifyKey(c.body, header(c.headers, 'X-Signature-Ed25519'), header(c.headers, 'X-Signature-Timestamp'), c.key);
      return { ok };
    }
    case 'linear': {
      Date.now = () => c.now ?? realNow();
      try {
        const ok = new LinearWebhookClient(c.key).verify(Buffer.from(c.body), header(c.headers, 'Linear-Signature'));
        return { ok };
      } catch (e) {
        return { ok: false, error: String(e.message ?? e) };
      } finally {
        Date.now = realNow;
      }
    }
    case 'shopify': {
      const shopify = shopifyApi({
        apiKey: 'signalgate-interop', apiSecretKey: c.key, hostName: 'localhost',
        apiVersion: ApiVersion.October25, isEmbeddedApp: false, logger: { level: 0 },
      });
      const rawRequest = new Request('https://localhost/webhooks', { method: 'POST', headers: c.headers, body: c.body });
      const res = await shopify.webhooks.validate({ rawBody: c.body, rawRequest });
      return { ok: res.valid, error: res.valid ? undefined : String(res.reason) };
    }
    case 'linear-documents': {
      // @linear/sdk's generated operations (LinearDocument.*Document), as the text the SDK sends.
      const { LinearDocument } = await import('@linear/sdk');
      return { documents: Object.fromEntries(c.names.map((n) => [n, LinearDocument[n] ? String(LinearDocument[n]) : ''])) };
    }
    case 'octokit':
      return { signature: await sign(c.key, c.body) };
    default:
      return { error: `unknown lib ${c.lib}` };
  }
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const c of JSON.parse(input)) out.push(await run(c));
process.stdout.write(JSON.stringify(out));
