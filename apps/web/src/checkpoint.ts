/**
 * What the Ask panel loads: a policy checkpoint's three files (fetched from the site's `agent/` folder or
 * picked by the user) and the search corpus with the test questions (the site's `data/`, written by
 * scripts/site.ts from the same dataset the Node task builds), and the agent made of them.
 */
import {
  AGENT_FILE,
  type AgentFileContents,
  type Doc,
  type LoadedAgent,
  type QaExample,
  SearchIndex,
  TOKENIZER_FILE,
  agentFromFiles,
  multihopTaskFromCorpus,
} from '@agent-r1/agent/browser';
import { MODEL_FILE } from '@agent-r1/nn';
import type { PageBackend } from './backend.js';

export interface SearchData {
  corpus: Doc[];
  questions: QaExample[];
  index: SearchIndex;
}

async function fetchOk(url: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`cannot fetch ${url}: ${(e as Error).message}`);
  }
  if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
  return response;
}

/** The checkpoint the site serves under `base` (agent.json, tokenizer.json, model.safetensors). */
export async function fetchCheckpoint(base = 'agent'): Promise<AgentFileContents> {
  const [agent, tokenizer, model] = await Promise.all([
    fetchOk(`${base}/${AGENT_FILE}`).then((r) => r.text()),
    fetchOk(`${base}/${TOKENIZER_FILE}`).then((r) => r.text()),
    fetchOk(`${base}/${MODEL_FILE}`).then(async (r) => new Uint8Array(await r.arrayBuffer())),
  ]);
  return { source: base, agent, tokenizer, model };
}

/** The checkpoint files the user picked, found by name. */
export async function pickedCheckpoint(files: readonly File[]): Promise<AgentFileContents> {
  const byName = new Map(files.map((f) => [f.name, f]));
  const missing = [AGENT_FILE, TOKENIZER_FILE, MODEL_FILE].filter((name) => !byName.has(name));
  if (missing.length > 0)
    throw new Error(
      `choose the three files of a policy folder: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing`,
    );
  return {
    source: 'the chosen files',
    agent: await byName.get(AGENT_FILE)!.text(),
    tokenizer: await byName.get(TOKENIZER_FILE)!.text(),
    model: new Uint8Array(await byName.get(MODEL_FILE)!.arrayBuffer()),
  };
}

/** The corpus and test questions the site serves under `base`, and the BM25 index over the corpus. */
export async function fetchSearchData(base = 'data'): Promise<SearchData> {
  const [corpus, questions] = await Promise.all([
    fetchOk(`${base}/corpus.json`).then((r) => r.json() as Promise<Doc[]>),
    fetchOk(`${base}/questions.json`).then((r) => r.json() as Promise<QaExample[]>),
  ]);
  return { corpus, questions, index: SearchIndex.build(corpus) };
}

/** The multi-hop agent of a checkpoint, over the page's corpus, on the page's backend. */
export function pageAgent(
  files: AgentFileContents,
  data: SearchData,
  backend: PageBackend,
): Promise<LoadedAgent<QaExample>> {
  return agentFromFiles<QaExample>(files, {
    backend: backend.device,
    backendLine: backend.line,
    task: ({ description, config, tokenizer }) => {
      if (description.task !== 'multihop-qa')
        throw new Error(
          `${files.source}: a policy of task "${description.task}"; this page asks multi-hop questions (task "multihop-qa")`,
        );
      if (!tokenizer) throw new Error(`${files.source}: no ${TOKENIZER_FILE}`);
      return multihopTaskFromCorpus({
        config,
        tokenizer,
        corpus: data.corpus,
        questions: data.questions,
        index: data.index,
      });
    },
  });
}
