/**
 * The Ask panel: a question typed or picked from the test split goes through the whole agent in the page
 * (the rollout engine, the `<search>` tool over the BM25 index, the answer); tokens stream in as they are
 * generated, each search shows the documents it returned, and a test question's answer is marked right or
 * wrong against its gold answer. Bad input (an empty or too long question, a checkpoint that does not load)
 * is a message on the page; the agent loaded before stays.
 */
import {
  type AgentAnswer,
  type LoadedAgent,
  type QaExample,
  type RolloutEvent,
  multihopPrompt,
} from '@agent-r1/agent/browser';
import type { PageBackend } from './backend.js';
import { callArgumentsText } from './call-text.js';
import { type SearchData, fetchCheckpoint, pageAgent, pickedCheckpoint } from './checkpoint.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function element(tag: string, className: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A search result's `Doc 1 (Title): contents` lines, as title and text. */
function documents(content: string): { title: string; text: string }[] {
  return content
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const m = /^Doc \d+ \((.+?)\): (.*)$/.exec(line);
      return m ? { title: m[1], text: m[2] } : { title: '', text: line };
    });
}

/** Lets the browser paint between tokens (at most every 30 ms, so that yielding costs little). */
function painter(): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < 30) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    last = performance.now();
  };
}

export class AskPanel {
  #agent: LoadedAgent<QaExample> | null = null;
  #running = false;
  readonly #backend: PageBackend;
  readonly #data: SearchData;

  constructor(backend: PageBackend, data: SearchData) {
    this.#backend = backend;
    this.#data = data;
    const select = $<HTMLSelectElement>('test-question');
    data.questions.forEach((q, i) => {
      const option = document.createElement('option');
      option.value = String(i);
      option.textContent = `${q.hops}-hop: ${q.question}`;
      select.append(option);
    });
    select.addEventListener('change', () => {
      const q = data.questions[Number(select.value)];
      if (select.value !== '' && q) $<HTMLTextAreaElement>('question').value = q.question;
    });
    $<HTMLFormElement>('ask-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.ask();
    });
    $<HTMLInputElement>('checkpoint-files').addEventListener('change', (event) => {
      const files = [...((event.target as HTMLInputElement).files ?? [])];
      void this.load(() => pickedCheckpoint(files));
    });
  }

  /** Loads the site's own checkpoint. */
  start(): Promise<void> {
    return this.load(() => fetchCheckpoint());
  }

  message(text: string | null): void {
    const box = $('ask-message');
    box.hidden = text === null;
    box.textContent = text ?? '';
  }

  async load(files: () => Promise<Parameters<typeof pageAgent>[0]>): Promise<void> {
    const policy = $('policy');
    policy.dataset.state = 'loading';
    this.message(null);
    try {
      const agent = await pageAgent(await files(), this.#data, this.#backend);
      this.#agent?.dispose();
      this.#agent = agent;
      const m = agent.description.model;
      const params = agent.policy.parameters().reduce((n, p) => n + p.size, 0);
      policy.textContent =
        `Policy: ${agent.description.task}, from ${agent.dir === 'agent' ? "the site's agent/ folder" : agent.dir} (written by ${agent.description.library}): ` +
        `${m.layers} layers of width ${m.dModel}, ${params.toLocaleString('en')} parameters, ` +
        `a ${m.vocabSize}-token vocabulary; search over ${this.#data.corpus.length.toLocaleString('en')} documents.`;
      policy.dataset.state = 'ready';
    } catch (e) {
      this.message(`The checkpoint did not load: ${(e as Error).message}`);
      policy.dataset.state = this.#agent ? 'ready' : 'error';
    }
    $<HTMLButtonElement>('ask-button').disabled = this.#agent === null;
  }

  /** Why `question` cannot be asked, or null. */
  #problem(agent: LoadedAgent<QaExample>, question: string): string | null {
    if (question.trim() === '') return 'Type a question first, or pick one of the test split.';
    const tokens = agent.task.codec.encode(multihopPrompt({ question })).length;
    const limit = agent.config.rollout.maxLength;
    if (tokens >= limit)
      return `The question is too long for this policy: with its prompt it is ${tokens.toLocaleString('en')} tokens, and the policy reads at most ${limit} in all (searches and answer included). Ask a shorter one.`;
    return null;
  }

  async ask(): Promise<void> {
    const agent = this.#agent;
    if (!agent || this.#running) return;
    const question = $<HTMLTextAreaElement>('question').value;
    const problem = this.#problem(agent, question);
    const episode = $('episode');
    if (problem) {
      this.message(problem);
      return;
    }
    this.message(null);
    const picked = this.#data.questions[Number($<HTMLSelectElement>('test-question').value)];
    const example = picked && picked.question === question ? picked : agent.task.fromQuestion!(question);
    this.#running = true;
    $<HTMLButtonElement>('ask-button').disabled = true;
    episode.replaceChildren(element('p', 'question', `Question: ${question}`));
    episode.dataset.state = 'running';
    try {
      const started = performance.now();
      let generated = 0;
      let action: number[] = [];
      let turn = this.#turn(episode);
      const paint = painter();
      const onEvent = async (event: RolloutEvent) => {
        if (event.type === 'token') {
          generated++;
          action.push(event.token);
          turn.action.textContent = agent.task.codec.decode(action);
          await paint();
          return;
        }
        for (const call of event.step.toolCalls) this.#showCall(turn.box, call);
        action = [];
        if (!event.finished) turn = this.#turn(episode);
        await paint();
      };
      const answer = await agent.run(example, { onEvent });
      if (turn.action.textContent === '') turn.box.remove();
      const seconds = (performance.now() - started) / 1000;
      this.#showAnswer(episode, example, answer);
      episode.append(
        element(
          'p',
          'speed',
          `${generated} tokens generated in ${seconds.toFixed(2)} s: ${(generated / seconds).toFixed(1)} tokens/s on ${this.#backend.kind === 'webgpu' ? 'WebGPU' : this.#backend.kind === 'wasm' ? 'WebAssembly' : 'TypeScript'}`,
        ),
      );
      episode.dataset.state = 'done';
    } catch (e) {
      this.message(`The agent stopped: ${(e as Error).message}`);
      episode.dataset.state = 'error';
    } finally {
      this.#running = false;
      $<HTMLButtonElement>('ask-button').disabled = false;
    }
  }

  #turn(episode: HTMLElement): { box: HTMLElement; action: HTMLElement } {
    const box = element('div', 'turn');
    const action = element('div', 'action');
    box.append(action);
    episode.append(box);
    return { box, action };
  }

  #showCall(
    box: HTMLElement,
    call: { name: string; args: unknown; content: string; success: boolean },
  ): void {
    const div = element('div', 'search-call');
    div.append(
      element('span', 'label', `${call.name}: `),
      element('span', 'query', callArgumentsText(call.args)),
    );
    if (call.success) {
      const list = document.createElement('ol');
      for (const doc of documents(call.content)) {
        const item = document.createElement('li');
        if (doc.title) item.append(element('span', 'doc-title', doc.title), ': ');
        item.append(doc.text);
        list.append(item);
      }
      div.append(list);
    } else div.append(element('p', 'call-error', call.content));
    box.append(div);
  }

  #showAnswer(episode: HTMLElement, example: QaExample, answer: AgentAnswer): void {
    const info = answer.trajectory.info;
    const p = element('p', 'final');
    const given = typeof info.answer === 'string' ? info.answer : null;
    const shown = element('span', 'final-answer', given ?? '(none: the episode ended without an answer)');
    shown.dataset.answered = String(given !== null);
    p.append('Answer: ', shown, ' ');
    if (example.answers.length > 0) {
      const right = info.em === 1;
      const verdict = element('span', 'verdict', right ? '✓ right' : `✗ wrong (gold: ${example.answers[0]})`);
      verdict.dataset.verdict = right ? 'right' : 'wrong';
      p.append(verdict);
    } else {
      const none = element('span', 'verdict', '(no gold answer to check against)');
      none.dataset.verdict = 'none';
      p.append(none);
    }
    episode.append(p);
  }
}
