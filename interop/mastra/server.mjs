// A real Mastra server for signalgate's interop test: one agent whose model is a
// deterministic mock (AI SDK LanguageModelV2) that holds each turn open for DELAY_MS, so
// the test can deliver into an active run, and records every prompt it was given.
//
// A turn whose newest user message mentions `needs-approval` calls the `deploy` tool,
// which needs approval; one mentioning `ask-user` calls Mastra's built-in `ask_user`, and one
// mentioning `ask-env` the `pick_env` tool, which both suspend for an answer. Either way the
// run is suspended until POST /api/agents/interopAgent/send-tool-approval (with resumeData
// for a suspended tool); the turn after the tool result answers as usual. Tool results show
// in the recorded prompts as `[tool-result <tool>] <output JSON>`.
//
//   PORT=4111 DELAY_MS=1500 node server.mjs
//
// A second agent, `modelAgent`, has no static model: it picks one per request from
// requestContext.model (e.g. ifIdle.streamOptions.requestContext) and fails without it.
//
// Test-only routes: GET /test/prompts (what the model saw, and modelAgent's model), POST
// /test/reset, GET /test/tools (how many times deploy ran, and the resumeData pick_env was
// resumed with).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { askUserTool, createTool } from '@mastra/core/tools';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';
import { MastraServer } from '@mastra/hono';
import { z } from 'zod';

const port = Number(process.env.PORT || 4111);
const delayMs = Number(process.env.DELAY_MS || 1500);

const prompts = [];
let turns = 0;
let toolCalls = 0;
let deploys = 0; // times the deploy tool really ran (after an approval)
const picked = []; // the resumeData pick_env was resumed with

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });

// promptText flattens a LanguageModelV2 prompt to role-tagged text lines.
function promptText(prompt) {
  return prompt.map((m) => {
    const parts = typeof m.content === 'string' ? [m.content]
      : m.content.map((p) => {
        if (p.type === 'text') return p.text;
        if (p.type === 'tool-result') return `[tool-result ${p.toolName}] ${JSON.stringify(p.output)}`;
        return `[${p.type}]`;
      });
    return { role: m.role, text: parts.join('') };
  });
}

// suspendingCall is the tool call a turn makes: when the newest message is a user
// message mentioning a trigger (not the tool result that follows the resume).
function suspendingCall(prompt) {
  const last = prompt[prompt.length - 1];
  if (!last || last.role !== 'user') return undefined;
  const text = promptText([last])[0].text;
  if (text.includes('needs-approval')) return { toolName: 'deploy', input: '{}' };
  if (text.includes('ask-user')) return { toolName: 'ask_user', input: JSON.stringify({ question: 'Which environment?' }) };
  if (text.includes('ask-env')) return { toolName: 'pick_env', input: '{}' };
  return undefined;
}

const mockModel = {
  specificationVersion: 'v2',
  provider: 'signalgate-mock',
  modelId: 'mock-1',
  supportedUrls: {},
  async doGenerate(options) {
    const n = ++turns;
    prompts.push({ turn: n, messages: promptText(options.prompt), temperature: options.temperature });
    await sleep(delayMs, options.abortSignal);
    return {
      content: [{ type: 'text', text: `ack ${n}` }],
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      warnings: [],
    };
  },
  async doStream(options) {
    const n = ++turns;
    prompts.push({ turn: n, messages: promptText(options.prompt), temperature: options.temperature });
    const call = suspendingCall(options.prompt);
    if (call) {
      const id = `call-${++toolCalls}`;
      return {
        stream: new ReadableStream({
          start(controller) {
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'tool-call', toolCallId: id, ...call });
            controller.enqueue({
              type: 'finish',
              finishReason: 'tool-calls',
              usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
            });
            controller.close();
          },
        }),
      };
    }
    const stream = new ReadableStream({
      async start(controller) {
        controller.enqueue({ type: 'stream-start', warnings: [] });
        await sleep(delayMs, options.abortSignal);
        controller.enqueue({ type: 'text-start', id: 't' });
        controller.enqueue({ type: 'text-delta', id: 't', delta: `ack ${n}` });
        controller.enqueue({ type: 'text-end', id: 't' });
        controller.enqueue({
          type: 'finish',
          finishReason: 'stop',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        });
        controller.close();
      },
    });
    return { stream };
  },
};

const deploy = createTool({
  id: 'deploy',
  description: 'Deploy the service (needs approval).',
  requireApproval: true,
  execute: async () => { deploys++; return { deployed: true }; },
});

// pick_env suspends with a question, as a tool written with Mastra's suspend does, and
// returns the answer it is resumed with.
const pickEnv = createTool({
  id: 'pick_env',
  description: 'Ask which environment to deploy to.',
  inputSchema: z.object({}),
  suspendSchema: z.object({ question: z.string() }),
  resumeSchema: z.string(),
  execute: async (_input, context) => {
    const answer = context?.agent?.resumeData;
    if (answer !== undefined) { picked.push(answer); return { environment: answer }; }
    await context?.agent?.suspend({ question: 'Deploy to which environment?' });
    return undefined;
  },
});

const storage = new LibSQLStore({ id: 'interop', url: process.env.LIBSQL_URL || ':memory:' });
const agent = new Agent({
  id: 'interopAgent',
  name: 'interopAgent',
  instructions: 'You are the signalgate interop agent.',
  model: mockModel,
  tools: { deploy, ask_user: askUserTool, pick_env: pickEnv },
  memory: new Memory({ storage }),
});
// modelAgent picks its model per request, as an app choosing the model from the request
// context: requestContext.model names a mock model (recorded with the prompt); without
// one it has no model and the run cannot start ("No model selected").
function namedModel(id) {
  const record = (result) => { prompts[prompts.length - 1].model = id; return result; };
  return { ...mockModel, modelId: id,
    doGenerate: (options) => record(mockModel.doGenerate(options)),
    doStream: (options) => record(mockModel.doStream(options)) };
}
const modelAgent = new Agent({
  id: 'modelAgent',
  name: 'modelAgent',
  instructions: 'You are the signalgate interop agent that picks its model per request.',
  model: ({ requestContext }) => {
    const id = requestContext?.get('model');
    if (!id) throw new Error('No model selected');
    return namedModel(id);
  },
  memory: new Memory({ storage }),
});
const mastra = new Mastra({ agents: { interopAgent: agent, modelAgent }, storage, logger: false });

const app = new Hono();
app.get('/test/prompts', (c) => c.json({ prompts }));
app.post('/test/reset', (c) => { prompts.length = 0; return c.json({ ok: true }); });
app.get('/test/tools', (c) => c.json({ deploy: deploys, picked }));
app.get('/test/ready', (c) => c.json({ ok: true }));
const server = new MastraServer({ app, mastra });
await server.init();

serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  console.log(`ready on ${info.port}`);
});
