// A real A2A server (@a2a-js/sdk, JSON-RPC + HTTP+JSON/REST, A2A v1.0 with the v0.3 compat
// layer on) serving two deterministic agents that need no model, for signalgate's a2a
// target interop test. No network beyond the loopback listener.
//
//   PORT=18641 DELAY_MS=1000 node server.mjs     # prints "ready on 18641 ..."
//   LEGACY=0 serves v1.0 only (default: v1.0 and v0.3 on the same endpoints).
//
// Agents (each with its own card, JSON-RPC and REST endpoints, push notifications):
//   /echo  works a task: submitted -> working -> (DELAY_MS, or message metadata.delay_ms)
//          -> artifact "echo: <text>" -> completed, the status message holding the same
//          text. A message sent to a task this agent is still working is accepted: it is
//          answered by the same task (one more artifact) before the task completes.
//          A message whose text contains "ask-user" ends in input-required instead (a
//          follow-up with the task's id completes it: "answer: <text>"); "auth-user" the
//          same with auth-required; "fail-task" ends in failed; "reject-task" in rejected.
//   /ask   always answers the first message with input-required (the question as the
//          status message) and completes on the follow-up message with "answer: <text>".
//   /hold  works like echo, but each task stays working on its first message until POST
//          /test/release (so a test decides when it ends, without waiting on time).
// Cards: /<agent>/.well-known/agent-card.json (and /.well-known/agent-card.json = echo).
// Endpoints: /<agent>/jsonrpc (v1.0 SendMessage... and v0.3 message/send...), /<agent>/rest.
// The same agents under /v03/<agent> have cards that declare only A2A v0.3 interfaces
// (an agent that still speaks only v0.3, as a client reading its card sees it).
//
// Test-only routes: GET /test/received (every message each agent's executor was handed:
// agent, taskId, contextId, messageId, role, parts, metadata, and `at`, when it was handed
// over, in ms since the epoch), GET /test/requests (JSON-RPC requests served, by method),
// POST /test/release (ends every held task, or ?context=<contextId>'s), POST /test/forget
// (?context=<contextId>: the agents no longer know that context's tasks, as after a
// restart of an agent that keeps tasks in memory), POST /test/reset.
import express from 'express';
import { AGENT_CARD_PATH, A2A_PROTOCOL_VERSION, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { createLegacyAwarePushNotificationSender } from '@a2a-js/sdk/compat/v0_3/server';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';

const port = Number(process.env.PORT || 18641);
const host = process.env.HOST || '127.0.0.1';
const defaultDelay = Number(process.env.DELAY_MS || 0);
const base = process.env.PUBLIC_URL || `http://${host}:${port}`;
// LEGACY=0 serves A2A v1.0 only (no v0.3 interfaces on the cards, no v0.3 JSON-RPC methods).
const legacy = process.env.LEGACY !== '0';

const received = [];
const requests = { total: 0, byMethod: {} };
// held are the release functions of the hold agent's working tasks, by contextId.
const held = new Map();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => new Date().toISOString();
const uuid = () => crypto.randomUUID();

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const agentMessage = (taskId, contextId, text) => ({
  role: Role.ROLE_AGENT, messageId: uuid(), taskId, contextId, parts: [textPart(text)],
  metadata: {}, extensions: [], referenceTaskIds: [],
});
const textOf = (msg) => (msg?.parts ?? [])
  .filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');
const status = (taskId, contextId, state, text) => AgentEvent.statusUpdate({
  taskId, contextId, metadata: {},
  status: { state, timestamp: now(), message: text == null ? undefined : agentMessage(taskId, contextId, text) },
});
const artifact = (taskId, contextId, text) => AgentEvent.artifactUpdate({
  taskId, contextId, lastChunk: true, append: false, metadata: undefined,
  artifact: { artifactId: uuid(), name: 'echo', description: '', parts: [textPart(text)], metadata: undefined, extensions: [] },
});
function record(agent, ctx) {
  const m = ctx.userMessage;
  received.push({
    at: Date.now(), agent, taskId: ctx.taskId, contextId: ctx.contextId, messageId: m.messageId,
    role: m.role, taskState: ctx.task?.status?.state ?? null,
    parts: m.parts.map((p) => ({ [p.content?.$case ?? 'none']: p.content?.value, mediaType: p.mediaType })),
    metadata: m.metadata ?? {},
  });
}
// ForgetfulStore is the SDK's in-memory task store, whose tasks a test can make unknown
// (POST /test/forget), as a restarted agent's are.
const stores = [];
class ForgetfulStore {
  constructor() {
    this.inner = new InMemoryTaskStore();
    this.forgotten = new Set();
    this.contexts = new Map(); // taskId -> contextId
    stores.push(this);
  }
  async load(taskId, ctx) { return this.forgotten.has(taskId) ? undefined : this.inner.load(taskId, ctx); }
  async save(task, ctx) {
    if (this.forgotten.has(task.id)) return;
    this.contexts.set(task.id, task.contextId);
    return this.inner.save(task, ctx);
  }
  async list(params, ctx) {
    const r = await this.inner.list(params, ctx);
    return { ...r, tasks: r.tasks.filter((t) => !this.forgotten.has(t.id)) };
  }
  forget(contextId) {
    let n = 0;
    for (const [taskId, ctx] of this.contexts) {
      if (ctx === contextId && !this.forgotten.has(taskId)) { this.forgotten.add(taskId); n++; }
    }
    return n;
  }
}

const delayOf = (msg) => Number(msg?.metadata?.delay_ms ?? defaultDelay) || 0;

// EchoExecutor keeps one job per task it is working; a message for such a task joins the
// job's inbox instead of starting a second execution (the SDK hands every message for a
// non-terminal task to execute(), on the task's shared event bus).
class EchoExecutor {
  constructor(name, { alwaysAsk = false, hold = false } = {}) {
    this.name = name;
    this.alwaysAsk = alwaysAsk;
    this.hold = hold;
    this.jobs = new Map(); // taskId -> { inbox: Message[], done: Promise, cancelled: bool }
  }

  async execute(ctx, bus) {
    record(this.name, ctx);
    const { taskId, contextId, userMessage: msg, task } = ctx;
    const running = this.jobs.get(taskId);
    if (running) {
      running.inbox.push(msg);
      // Acknowledge on the task's bus: a non-blocking send resolves on the next event it
      // sees, so without this it would wait for the running job's next step.
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING));
      await running.done; // return only once the task is settled, so the bus stays up
      return;
    }
    let finish;
    const job = { inbox: [msg], done: new Promise((r) => (finish = r)), cancelled: false };
    this.jobs.set(taskId, job);
    try {
      const resumed = task && (task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED
        || task.status?.state === TaskState.TASK_STATE_AUTH_REQUIRED);
      if (!task) {
        bus.publish(AgentEvent.task({
          id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now(), message: undefined },
          artifacts: [], history: [msg], metadata: {},
        }));
      }
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING));
      const replies = [];
      while (job.inbox.length) {
        const m = job.inbox.shift();
        const text = textOf(m);
        await sleep(delayOf(m));
        if (this.hold && !resumed && replies.length === 0) {
          await new Promise((release) => {
            const waiting = held.get(contextId) ?? [];
            waiting.push(release);
            held.set(contextId, waiting);
          });
        }
        if (job.cancelled) {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_CANCELED, 'canceled'));
          return;
        }
        if (resumed && replies.length === 0) {
          replies.push(`answer: ${text}`);
        } else if (this.alwaysAsk && !resumed) {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, `Approve? (${text})`));
          return;
        } else if (text.includes('ask-user')) {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, `Which one? (${text})`));
          return;
        } else if (text.includes('auth-user')) {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_AUTH_REQUIRED, 'Please sign in.'));
          return;
        } else if (text.includes('fail-task')) {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_FAILED, 'asked to fail'));
          return;
        } else if (text.includes('reject-task')) {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_REJECTED, 'asked to reject'));
          return;
        } else {
          replies.push(`echo: ${text}`);
        }
        bus.publish(artifact(taskId, contextId, replies.at(-1)));
      }
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, replies.join('\n')));
    } finally {
      this.jobs.delete(taskId);
      finish();
    }
  }

  cancelTask = async (taskId) => {
    const job = this.jobs.get(taskId);
    if (job) job.cancelled = true;
  };
}

// card is the agent card of the agent mounted at path; onlyV03 declares its interfaces as
// A2A v0.3 only.
function card(path, name, description, onlyV03) {
  const ifs = [
    { url: `${base}/${path}/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: onlyV03 ? '0.3' : A2A_PROTOCOL_VERSION },
    { url: `${base}/${path}/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: onlyV03 ? '0.3' : A2A_PROTOCOL_VERSION },
  ];
  return {
    name,
    description,
    supportedInterfaces: legacy && !onlyV03 ? duplicateInterfacesForLegacy(ifs, ['JSONRPC', 'HTTP+JSON']) : ifs,
    provider: { organization: 'signalgate interop', url: base },
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: [{
      id: name, name, description, tags: ['interop'], examples: ['hello'],
      inputModes: ['text/plain', 'application/json'], outputModes: ['text/plain'], securityRequirements: [],
    }],
    documentationUrl: '',
    signatures: [],
  };
}

function mountAgent(app, path, name, executor, description, onlyV03 = false) {
  const pushStore = new InMemoryPushNotificationStore();
  const pushSender = createLegacyAwarePushNotificationSender(pushStore, { timeout: 5000 });
  const handler = new DefaultRequestHandler(
    card(path, name, description, onlyV03), new ForgetfulStore(), executor, undefined, pushStore, pushSender,
  );
  const router = express.Router();
  router.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: legacy } }));
  router.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: legacy } }));
  router.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: legacy } }));
  app.use(`/${path}`, router);
  return handler;
}

const app = express();
app.get('/test/received', (_req, res) => res.json(received));
app.get('/test/requests', (_req, res) => res.json(requests));
app.post('/test/release', (req, res) => {
  let n = 0;
  for (const [ctx, waiting] of held) {
    if (req.query.context && req.query.context !== ctx) continue;
    for (const release of waiting) { release(); n++; }
    held.delete(ctx);
  }
  res.json({ released: n });
});
app.post('/test/forget', (req, res) => {
  let n = 0;
  for (const st of stores) n += st.forget(String(req.query.context ?? ''));
  res.json({ forgotten: n });
});
app.post('/test/reset', (_req, res) => {
  received.length = 0;
  requests.total = 0;
  requests.byMethod = {};
  res.json({ ok: true });
});
// Counts the JSON-RPC requests (the requests per signal a client makes), by method.
app.use(express.json({ limit: '4mb' }), (req, _res, next) => {
  if (req.method === 'POST' && req.path.endsWith('/jsonrpc') && typeof req.body?.method === 'string') {
    requests.total++;
    requests.byMethod[req.body.method] = (requests.byMethod[req.body.method] ?? 0) + 1;
  }
  next();
});
const agents = [
  ['echo', { }, 'Echoes each message back by working a task.'],
  ['ask', { alwaysAsk: true }, 'Asks for input, then answers.'],
  ['hold', { hold: true }, 'Echoes each message back once the test releases its task.'],
];
let echo;
for (const [name, opts, description] of agents) {
  const h = mountAgent(app, name, name, new EchoExecutor(name, opts), description);
  if (name === 'echo') echo = h;
  if (legacy) mountAgent(app, `v03/${name}`, name, new EchoExecutor(name, opts), description, true);
}
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: echo, legacyCompat: { enabled: legacy } }));

const t0 = performance.now();
const server = app.listen(port, host, () => {
  console.log(`ready on ${port} (${Math.round(performance.now() - t0)} ms; cards ${base}/echo/${AGENT_CARD_PATH}, ${base}/ask/${AGENT_CARD_PATH})`);
});
server.on('error', (err) => { console.error(`fatal: ${err.stack || err}`); process.exit(1); });
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
