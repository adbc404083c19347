// Deterministic graphs for signalgate's langgraph interop test: no model, no network.
//
// echo: a MessagesState graph whose one node answers the newest human message with an AI
//   message "echo: <text>" after a delay (so a run stays busy long enough to deliver into it).
//   The delay is, in order: context.delay_ms, config.configurable.delay_ms, env DELAY_MS, 0.
//   The wait ends early when the run is cancelled (multitask interrupt/rollback, cancel).
//   A human message containing "fail-run" makes the node throw (the run ends in error);
//   one containing "ask-user" makes it call interrupt() first and echo the resume value.
//   Each answer's response_metadata.node_started_at is when its node began (epoch ms),
//   and context.started_url, when given, is POSTed {text, at} as the node begins; the node
//   goes on once that POST is answered (a test holds a run live by answering late).
// ask: a MessagesState graph whose node always calls interrupt({question, last}) and, once
//   resumed with Command({resume}), appends the AI message "answer: <resume>".
import { AIMessage } from '@langchain/core/messages';
import { MessagesAnnotation, StateGraph, interrupt } from '@langchain/langgraph';

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (!ms) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });

function lastHumanText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    const type = typeof m._getType === 'function' ? m._getType() : m.type ?? m.role;
    if (type === 'human' || type === 'user') {
      if (typeof m.content === 'string') return m.content;
      return (m.content ?? []).map((p) => (typeof p === 'string' ? p : p.text ?? '')).join('');
    }
  }
  return '';
}

function delayOf(config) {
  const v = config?.context?.delay_ms ?? config?.configurable?.delay_ms ?? process.env.DELAY_MS ?? 0;
  return Number(v) || 0;
}

// announce tells context.started_url (when given) that a node began: {text, at} as JSON,
// so a test waits for a run to be running instead of polling. Failures are ignored.
async function announce(config, text, at) {
  const url = config?.context?.started_url;
  if (!url) return;
  try {
    // A test may hold the node by answering late; a cancelled run lets go.
    await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, at }), signal: config?.signal });
  } catch {}
}

// started marks an answer with when its node began (ms since the epoch): the load tool
// reads it as the moment the run started.
const started = (content, at) => new AIMessage({ content, response_metadata: { node_started_at: at } });

async function echoNode(state, config) {
  const at = Date.now();
  const text = lastHumanText(state.messages);
  await announce(config, text, at);
  await sleep(delayOf(config), config?.signal);
  if (text.includes('fail-run')) throw new Error('echo: asked to fail');
  if (text.includes('ask-user')) {
    const answer = interrupt({ question: 'ask-user', last: text });
    return { messages: [started(`answer: ${typeof answer === 'string' ? answer : JSON.stringify(answer)}`, at)] };
  }
  return { messages: [started(`echo: ${text}`, at)] };
}

async function askNode(state, config) {
  const text = lastHumanText(state.messages);
  await sleep(delayOf(config), config?.signal);
  const answer = interrupt({ question: 'Approve?', last: text });
  return { messages: [new AIMessage(`answer: ${typeof answer === 'string' ? answer : JSON.stringify(answer)}`)] };
}

export const echo = new StateGraph(MessagesAnnotation)
  .addNode('echo', echoNode)
  .addEdge('__start__', 'echo')
  .addEdge('echo', '__end__')
  .compile();

export const ask = new StateGraph(MessagesAnnotation)
  .addNode('ask', askNode)
  .addEdge('__start__', 'ask')
  .addEdge('ask', '__end__')
  .compile();
