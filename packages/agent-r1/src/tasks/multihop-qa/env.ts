/**
 * The multi-hop QA episode, apart from the dataset's files: the prompt, the `<search>`/`<answer>` tags, the
 * answer's scores, the environment over a search index, and the task as an agent needs it to answer
 * (`multihopAnswering`: tokenizer, stop tokens, environment, typed questions). Nothing here reads files, so
 * a web page builds the same episodes as `multihopQaTask` (./task.ts) from a corpus and a tokenizer it
 * fetched.
 */
import type { Tokenizer } from '@agent-r1/nn';
import type { EnvFactory } from '../../mdp/env.js';
import { type CallRecord, ToolEnv } from '../../mdp/tool-env.js';
import { exactMatch, f1Score, normalizeAnswer } from '../../rewards/qa.js';
import type { ChatTools } from '../../tools/formats/chat.js';
import { ANSWER_TAG, type ToolCallFormat } from '../../tools/formats/format.js';
import { TagsFormat } from '../../tools/formats/tags.js';
import { ToolRegistry } from '../../tools/registry.js';
import type { Tool } from '../../tools/tool.js';
import type { AgentTask, TaskVocabulary } from '../task.js';
import type { Doc, QaExample } from './data/types.js';
import { COMPARE_TOOL, LARGEST, ONLY, compareTool, verdictLabel } from './compare-tool.js';
import { retrievalReward } from './retrieval-reward.js';
import type { SearchIndex } from './search/bm25.js';
import { SEARCH_TOOL, searchTool } from './search/tool.js';
import { comparesWithTool } from './plan.js';

export const MULTIHOP_SPECIAL_TOKENS = [
  '<search>',
  '</search>',
  '<result>',
  '</result>',
  '<answer>',
  '</answer>',
  '<eos>',
] as const;

/** The `compare` tool's tags and its verdict's marker, special tokens of the tokenizer when the tool is on. */
export const COMPARE_SPECIAL_TOKENS = ['<compare>', '</compare>', LARGEST] as const;

/** The tags of the plan a policy writes before each tool call and its answer (`taskOptions.plan`). */
export const THINK_SPECIAL_TOKENS = ['<think>', '</think>'] as const;

/** Which comparisons the compare tool serves: area figures, and (`compareStatements`) what the pages state. */
export interface CompareOptions {
  /**
   * A second tool, `compare` (`<compare>label number ; label number</compare>` → the label of the
   * largest), for the comparisons' numbers; default false (search only).
   */
  compareTool?: boolean;
  /**
   * With `compareTool`: the scripted searcher compares the landlocked comparisons' statements too
   * (`Mongolia is landlocked ; Peru is not landlocked` → `Only: Mongolia`), and `Only:` is a special token;
   * default false.
   */
  compareStatements?: boolean;
}

/** How the episodes a policy learns from are written: its tools, and whether it plans (./plan.ts). */
export interface StyleOptions extends CompareOptions {
  /**
   * The scripted demonstrations think a plan before each tool call (`<think> country capital</think>`:
   * what the searches still to come are to find, then `compare` where they call that tool) and the empty
   * plan before the answer, and the think tags are special tokens; default false.
   */
  plan?: boolean;
}

/**
 * The tokenizer's special tokens: the tags and `<eos>`, the compare tags when that tool is on, the
 * verdict of statements (`Only:`) when it compares them, and the think tags when the policy plans.
 */
export function multihopSpecialTokens(options: StyleOptions = {}): string[] {
  return [
    ...MULTIHOP_SPECIAL_TOKENS,
    ...(options.compareTool ? COMPARE_SPECIAL_TOKENS : []),
    ...(options.compareTool && options.compareStatements ? [ONLY] : []),
    ...(options.plan ? THINK_SPECIAL_TOKENS : []),
  ];
}

/** Characters of each document a search shows by default (3 of them fit ~96 tokens). */
export const MULTIHOP_SNIPPET_CHARS = 80;

/**
 * The retrieval reward with `algorithm.processRewards` on: 0.3 in all for finding every supporting
 * document (0.15 each for a 2-hop question), so that an exact answer (1) stays worth several times any
 * amount of searching.
 */
export const DEFAULT_RETRIEVAL_REWARD = 0.3;

export interface MultihopEnvOptions extends StyleOptions {
  /** Most actions per episode; default 4 (3 searches and an answer). */
  maxTurns?: number;
  /** Documents per search; default 3. */
  topK?: number;
  /** Each document's text is cut to this many characters; default MULTIHOP_SNIPPET_CHARS (80). */
  maxCharsPerDoc?: number;
  /** Bonus for a well-formed answer; default 0.1. */
  formatReward?: number;
  /**
   * Process reward for retrieving the question's supporting documents, split evenly over them and paid
   * for each one the first time a search shows it (`retrievalReward`); default 0 (none). Needs the corpus
   * documents (`makeMultihopEnv`'s `docs`).
   */
  retrievalReward?: number;
  /**
   * Pay the answer to a comparison the compare tool serves (`comparesWithTool`) its outcome reward only
   * where it names the verdict of a compare call the episode made (`Largest: X` → `X`): a right answer
   * after a refused call, or against the verdict, is a guess. The reported EM is not changed. Default
   * false.
   */
  comparisonsNeedVerdict?: boolean;
}

/** Whether `answer` names the label of a compare verdict among the episode's successful `calls`. */
export function answersAVerdict(answer: string, calls: readonly CallRecord[]): boolean {
  const named = normalizeAnswer(answer);
  return calls.some((call) => {
    const label = call.name === COMPARE_TOOL ? verdictLabel(call.content) : null;
    return label !== null && normalizeAnswer(label) === named;
  });
}

/**
 * The compact prompt: the question and one line of instruction (tiny models: short). It names the search
 * tool only, also where the compare tool is on: a policy trained from scratch learns the tools from the
 * demonstrations, and 3-hop episodes already fill the preset's 384-token context.
 */
export function multihopPrompt(example: Pick<QaExample, 'question'>): string {
  return `Question: ${example.question}\nSearch with <search>query</search>, then reply <answer>answer</answer>.\n`;
}

export function multihopFormat(options: CompareOptions = {}): TagsFormat {
  return new TagsFormat({
    tags: [
      { tag: 'search', tool: SEARCH_TOOL, argument: 'query' },
      ...(options.compareTool ? [{ tag: 'compare', tool: COMPARE_TOOL, argument: 'values' }] : []),
    ],
  });
}

/**
 * How an episode is written: its prompt, the format of calls, answers and results, and the scripted
 * searcher's actions in that format. `tagStyle` is the compact one a policy trained from scratch learns;
 * `chatStyle` is a pretrained chat model's own (its template's prompt, Hermes tool calls).
 */
export interface MultihopStyle {
  format: ToolCallFormat;
  prompt(example: Pick<QaExample, 'question'>): string;
  search(query: string): string;
  answer(answer: string): string;
  /** How many searches a text of actions and observations holds. */
  searchesIn(text: string): number;
  /** A call of the `compare` tool (`compareValuesText`), where the episode has that tool. */
  compare?(values: string): string;
  /** Whether the scripted searcher also compares what the pages state (`X is [not] landlocked`) with it. */
  compareStatements?: boolean;
  /** The plan before a tool call, the empty one before the answer (`StyleOptions.plan`). */
  think?(plan: string): string;
  /** How many compare calls a text of actions and observations holds. */
  comparesIn(text: string): number;
}

const occurrencesOf = (text: string, piece: string) => text.split(piece).length - 1;

export function tagStyle(options: StyleOptions = {}): MultihopStyle {
  return {
    ...(options.plan
      ? { think: (plan: string) => (plan === '' ? '<think></think>' : `<think> ${plan}</think>`) }
      : {}),
    format: multihopFormat(options),
    prompt: multihopPrompt,
    search: (query) => `<search> ${query}</search>`,
    answer: (answer) => `<${ANSWER_TAG}> ${answer}</${ANSWER_TAG}>`,
    searchesIn: (text) => occurrencesOf(text, '<search>'),
    ...(options.compareTool
      ? {
          compare: (values: string) => `<compare> ${values}</compare>`,
          compareStatements: options.compareStatements === true,
        }
      : {}),
    comparesIn: (text) => occurrencesOf(text, '<compare>'),
  };
}

/** The system instruction of a chat model's episode (the template adds the tools and their syntax). */
export const MULTIHOP_CHAT_INSTRUCTION =
  'Answer the question. Search for the facts you need with the search tool; when you know the answer, reply with only the answer within <answer></answer> XML tags.';

/**
 * A pretrained chat model's episode: `chat` (its template's conventions) over the task's `tools`;
 * `options.compareStatements` as in `tagStyle`.
 */
export function chatStyle(
  chat: ChatTools,
  tools: readonly Tool[],
  options: Pick<CompareOptions, 'compareStatements'> = {},
): MultihopStyle {
  const render = (name: string, argument: string) => (value: string) =>
    chat.format.renderCall({ name, args: { [argument]: value } });
  // A tool's calls are counted by the rendered text that precedes their argument (`{"name": "search", …`).
  const counter = (call: (value: string) => string) => {
    const prefix = call('\uE000').split('\uE000')[0];
    return (text: string) => occurrencesOf(text, prefix);
  };
  const search = render(SEARCH_TOOL, 'query');
  const compare = render(COMPARE_TOOL, 'values');
  return {
    format: chat.format,
    prompt: (example) => chat.prompt(MULTIHOP_CHAT_INSTRUCTION, example.question, tools),
    search,
    answer: (answer) => chat.format.renderAnswer(answer),
    searchesIn: counter(search),
    ...(tools.some((t) => t.name === COMPARE_TOOL)
      ? { compare, compareStatements: options.compareStatements === true }
      : {}),
    comparesIn: counter(compare),
  };
}

/** 1 when a gold answer occurs in the normalised prediction (SQuAD normalisation, whole words). */
export function substringMatch(prediction: string, golds: readonly string[]): number {
  const p = ` ${normalizeAnswer(prediction)} `;
  return golds.some((g) => {
    const n = normalizeAnswer(g);
    return n !== '' && p.includes(` ${n} `);
  })
    ? 1
    : 0;
}

/** EM, F1 and substring EM of an answer. */
export function scoreAnswer(
  answer: string,
  golds: readonly string[],
): { em: number; f1: number; subEm: number } {
  return { em: exactMatch(answer, golds), f1: f1Score(answer, golds), subEm: substringMatch(answer, golds) };
}

/** The task's tools: `search` over `index` (and `compare` where `options.compareTool`), showing `options.topK` documents cut to `options.maxCharsPerDoc`. */
export function multihopTools(index: SearchIndex, options: MultihopEnvOptions = {}): ToolRegistry {
  const tools = new ToolRegistry().register(
    searchTool(index, {
      defaultK: options.topK ?? 3,
      maxK: options.topK ?? 3,
      maxCharsPerDoc: options.maxCharsPerDoc ?? MULTIHOP_SNIPPET_CHARS,
    }),
  );
  return options.compareTool ? tools.register(compareTool()) : tools;
}

/**
 * The environment factory: a ToolEnv with the `search` tool over `index`; `docs` (the corpus by id) lets it
 * pay `options.retrievalReward`.
 */
export function makeMultihopEnv(
  index: SearchIndex,
  options: MultihopEnvOptions = {},
  docs?: ReadonlyMap<string, Doc>,
  style: MultihopStyle = tagStyle(),
): EnvFactory<QaExample> {
  const retrieval = options.retrievalReward ?? 0;
  if (retrieval !== 0 && docs === undefined)
    throw new Error('makeMultihopEnv: retrievalReward needs the corpus documents (docs)');
  const tools = multihopTools(index, options);
  return () =>
    new ToolEnv<QaExample>({
      tools,
      format: style.format,
      maxTurns: options.maxTurns ?? 4,
      formatReward: options.formatReward ?? 0.1,
      buildPrompt: (ex) => style.prompt(ex),
      score: (ex, answer, calls) => {
        const s = scoreAnswer(answer, ex.answers);
        const guessed =
          options.comparisonsNeedVerdict === true &&
          comparesWithTool(ex.kind, options) &&
          !answersAVerdict(answer, calls);
        return {
          reward: guessed ? 0 : s.em,
          info: { ...s, hops: ex.hops, kind: ex.kind, gold: ex.answers[0] ?? '' },
        };
      },
      ...(retrieval !== 0 && docs
        ? {
            processRewards: true,
            callReward: (ex, call, earlier) => retrievalReward(ex, call, earlier, docs, retrieval),
          }
        : {}),
    });
}

/**
 * The environment options of a run: its turns, and the retrieval reward where `algorithm.processRewards`
 * is on. Supporting documents are known only in the built-in corpus, so a user's corpus gets none.
 */
export function multihopEnvOptions(
  config: { rollout: { maxTurns: number }; algorithm?: { processRewards: boolean } },
  options: MultihopEnvOptions = {},
  builtInCorpus = true,
): MultihopEnvOptions {
  return {
    ...options,
    maxTurns: config.rollout.maxTurns,
    retrievalReward: builtInCorpus
      ? (options.retrievalReward ?? (config.algorithm?.processRewards ? DEFAULT_RETRIEVAL_REWARD : 0))
      : 0,
  };
}

/** The vocabulary of a task whose tokenizer is ours (a trained BPE): `<eos>` and the closing tags end an action. */
export function tagVocabulary(tokenizer: Tokenizer, options: CompareOptions = {}): TaskVocabulary {
  return {
    codec: { encode: (t) => tokenizer.encode(t), decode: (ids) => tokenizer.decode(ids) },
    vocabSize: tokenizer.vocabSize,
    tokenizer,
    stopTokens: [tokenizer.tokenId('<eos>')],
    stopStrings: multihopFormat(options).stop,
  };
}

/**
 * What the agent needs of the task to answer questions, shared by `multihopQaTask` and a page that has
 * only a checkpoint's tokenizer and a corpus: the vocabulary (codec, stop tokens: `tagVocabulary` of a
 * trained BPE, or a pretrained model's), the answer metrics, the environment and typed questions. A
 * `Tokenizer` stands for its `tagVocabulary`.
 */
export function multihopAnswering(
  makeEnv: EnvFactory<QaExample>,
  vocabulary: Tokenizer | TaskVocabulary,
): Pick<AgentTask<QaExample>, 'name' | 'answerMetrics' | 'makeEnv' | 'fromQuestion' | keyof TaskVocabulary> {
  return {
    name: 'multihop-qa',
    answerMetrics: ['em', 'f1', 'subEm'],
    makeEnv,
    ...('codec' in vocabulary ? vocabulary : tagVocabulary(vocabulary)),
    fromQuestion: (question) => ({
      id: 'user',
      question,
      answers: [],
      hops: 0,
      kind: 'user',
      supportingDocs: [],
    }),
  };
}
