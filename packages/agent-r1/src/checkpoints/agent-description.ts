/**
 * The contents of a self-describing checkpoint, as text and bytes: `agent.json` parsed and checked, a task
 * checked against it, and the weights put into the model it describes. No file system here: Node's
 * `loadAgent` reads the folder (./agent-files.ts, ./init.ts) and a web page fetches the same files
 * (./agent-from-files.ts); both go through these functions.
 */
import { type TransformerConfig, type TransformerLM, compareStateDict, loadStateDict } from '@agent-r1/nn';
import type { Tensor } from '@agent-r1/tensor';
import type { AgentTask } from '../tasks/task.js';
import type { TrainConfig } from '../trainer/config.js';

export const AGENT_FILE = 'agent.json';
export const TOKENIZER_FILE = 'tokenizer.json';
export const AGENT_FORMAT = 'agent-r1-agent';
export const AGENT_FORMAT_VERSION = 1;

/** The contents of `agent.json`. */
export interface AgentDescription {
  format: typeof AGENT_FORMAT;
  version: typeof AGENT_FORMAT_VERSION;
  /** The library that wrote it, e.g. "@agent-r1/agent 0.1.0". */
  library: string;
  task: string;
  taskOptions: Record<string, unknown>;
  /** The policy's TransformerLM config (vocabulary included; no device). */
  model: Omit<TransformerConfig, 'device'>;
  /** The resolved training config of the run. */
  config: TrainConfig;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses the text of an `agent.json`; errors start with `source` (the file's path or name). */
export function parseAgentDescription(text: string, source: string): AgentDescription {
  let d: unknown;
  try {
    d = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not valid JSON (${(e as Error).message})`);
  }
  if (!isObject(d) || d.format !== AGENT_FORMAT || d.version !== AGENT_FORMAT_VERSION)
    throw new Error(`${source}: not a version-${AGENT_FORMAT_VERSION} ${AGENT_FORMAT} description`);
  for (const key of ['task', 'library'] as const)
    if (typeof d[key] !== 'string') throw new Error(`${source}: "${key}" must be a string`);
  for (const key of ['taskOptions', 'model', 'config'] as const)
    if (!isObject(d[key])) throw new Error(`${source}: "${key}" must be an object`);
  return d as unknown as AgentDescription;
}

/** Whether `saved` (JSON text, however laid out) holds `value`; text that is not JSON is an error. */
function sameJson(saved: { text: string; source: string }, value: unknown): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(saved.text);
  } catch (e) {
    throw new Error(`${saved.source}: not valid JSON (${(e as Error).message})`);
  }
  return JSON.stringify(parsed) === JSON.stringify(value);
}

/**
 * Checks that `task` is the one the described policy was trained on: the same task, the same vocabulary
 * and, where the checkpoint saved one (`savedTokenizer`: the text of its tokenizer.json and where it came
 * from), the same tokenizer. A mismatch is one line naming the policy and what differs.
 */
export function checkDescribedTask(
  policy: string,
  description: AgentDescription,
  task: AgentTask<unknown>,
  savedTokenizer?: { text: string; source: string },
): void {
  if (description.task !== task.name)
    throw new Error(`policy ${policy}: trained on task "${description.task}", not "${task.name}"`);
  if (description.model.vocabSize !== task.vocabSize)
    throw new Error(
      `policy ${policy}: its vocabulary has ${description.model.vocabSize} tokens, task "${task.name}"'s ${task.vocabSize} (another tokenizer)`,
    );
  if (task.tokenizer && savedTokenizer && !sameJson(savedTokenizer, task.tokenizer.toJSON()))
    throw new Error(
      `policy ${policy}: task "${task.name}" built another tokenizer than the one it was trained with (${savedTokenizer.source})`,
    );
}

/**
 * Puts a checkpoint's tensors (read from `source`) into `policy`: every parameter must be there with its
 * shape, except a value head the checkpoint did not have (a PPO run started from a warm start's policy
 * gets a fresh one). Anything else that does not fit is one error naming `policy` (the folder) and the
 * parameters. The tensors are the caller's to dispose.
 */
export function loadPolicyWeights(
  policy: TransformerLM,
  tensors: Record<string, Tensor>,
  where: { policy: string; source: string },
): void {
  const { missing, unexpected, mismatched } = compareStateDict(policy, tensors);
  const problems = [
    ...missing.filter((name) => !name.startsWith('valueHead.')).map((n) => `missing ${n}`),
    ...unexpected.filter((name) => !name.startsWith('valueHead.')).map((n) => `unexpected ${n}`),
    ...mismatched.map((m) => `${m.name}: expected ${m.expected}, got ${m.got}`),
  ];
  if (problems.length > 0) {
    const shown = problems.slice(0, 2).join('; ');
    const more = problems.length > 2 ? ` and ${problems.length - 2} more` : '';
    throw new Error(
      `policy ${where.policy}: the checkpoint does not fit this model's config (${shown}${more})`,
    );
  }
  loadStateDict(policy, tensors, { strict: false, source: where.source });
}
