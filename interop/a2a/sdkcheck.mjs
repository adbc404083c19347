// Drives the server with the SDK's own client (card discovery, v1.0 JSON-RPC), to check that
// what signalgate sends matches the SDK.   BASE=http://127.0.0.1:18641 node sdkcheck.mjs
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, taskStateToJSON } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';
const base = process.env.BASE || 'http://127.0.0.1:18641';
const factory = new ClientFactory();
const client = await factory.createFromUrl(`${base}/echo/`) // trailing slash: the card path is resolved relative to it;
const card = await client.getAgentCard();
console.log('card', card.name, card.supportedInterfaces.map((i) => `${i.protocolBinding}@${i.protocolVersion}`));
const msg = (text, extra = {}) => ({
  tenant: '', metadata: {},
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId: '', contextId: 'ctx-sdk', extensions: [], metadata: {}, referenceTaskIds: [], ...extra },
  configuration: undefined,
});
const r = await client.sendMessage(msg('via sdk'));
console.log('sendMessage', r.id, taskStateToJSON(r.status.state), r.artifacts[0].parts[0].content.value);
const g = await client.getTask({ tenant: '', id: r.id, historyLength: undefined });
console.log('getTask', taskStateToJSON(g.status.state));
const ask = await (await factory.createFromUrl(`${base}/ask/`)).sendMessage(msg('deploy?'));
console.log('ask', taskStateToJSON(ask.status.state), ask.status.message.parts[0].content.value);
