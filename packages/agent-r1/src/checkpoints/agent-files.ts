/**
 * What makes a policy checkpoint folder self-describing: `agent.json` (the task and its options, the
 * model's config, the resolved training config, the library's version) and, for a task whose tokenizer is
 * data, `tokenizer.json`. They are written with the weights in one atomic save (saveCheckpoint's `files`),
 * so `eval`, `chat` and `loadAgent` need nothing but the folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODEL_FILE, type TransformerConfig, type TransformerLM } from '@agent-r1/nn';
import type { AgentTask } from '../tasks/task.js';
import { LIBRARY_NAME, libraryVersion } from '../version.js';
import type { TrainConfig } from '../trainer/config.js';

export const AGENT_FILE = 'agent.json';
export const TOKENIZER_FILE = 'tokenizer.json';
const FORMAT = 'agent-r1-agent';
const VERSION = 1;

/** The contents of `agent.json`. */
export interface AgentDescription {
  format: typeof FORMAT;
  version: typeof VERSION;
  /** The library that wrote it, e.g. "@agent-r1/agent 0.1.0". */
  library: string;
  task: string;
  taskOptions: Record<string, unknown>;
  /** The policy's TransformerLM config (vocabulary included; no device). */
  model: Omit<TransformerConfig, 'device'>;
  /** The resolved training config of the run. */
  config: TrainConfig;
}

/** The files that describe `policy` (trained on `task` under `config`), for saveCheckpoint's `files`. */
export function agentFiles(config: TrainConfig, task: AgentTask<unknown>, policy: TransformerLM) {
  const { device: _, ...model } = policy.config;
  const description: AgentDescription = {
    format: FORMAT,
    version: VERSION,
    library: `${LIBRARY_NAME} ${libraryVersion()}`,
    task: config.task,
    taskOptions: config.taskOptions ?? {},
    model,
    config,
  };
  const files: Record<string, string> = { [AGENT_FILE]: `${JSON.stringify(description, null, 2)}\n` };
  if (task.tokenizer) files[TOKENIZER_FILE] = `${JSON.stringify(task.tokenizer.toJSON())}\n`;
  return files;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The description of the checkpoint folder `dir`; null for a folder written before they had one. */
export function readAgentDescription(dir: string): AgentDescription | null {
  const path = join(dir, AGENT_FILE);
  if (!existsSync(path)) return null;
  let d: unknown;
  try {
    d = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${path}: not valid JSON (${(e as Error).message})`);
  }
  if (!isObject(d) || d.format !== FORMAT || d.version !== VERSION)
    throw new Error(`${path}: not a version-${VERSION} ${FORMAT} description`);
  for (const key of ['task', 'library'] as const)
    if (typeof d[key] !== 'string') throw new Error(`${path}: "${key}" must be a string`);
  for (const key of ['taskOptions', 'model', 'config'] as const)
    if (!isObject(d[key])) throw new Error(`${path}: "${key}" must be an object`);
  return d as unknown as AgentDescription;
}

/**
 * Checks that `task` is the one the described policy was trained on: the same task, the same vocabulary
 * and (where saved) the same tokenizer. A mismatch is one line naming the folder and what differs.
 */
export function checkTaskFits(dir: string, description: AgentDescription, task: AgentTask<unknown>): void {
  if (description.task !== task.name)
    throw new Error(`policy ${dir}: trained on task "${description.task}", not "${task.name}"`);
  if (description.model.vocabSize !== task.vocabSize)
    throw new Error(
      `policy ${dir}: its vocabulary has ${description.model.vocabSize} tokens, task "${task.name}"'s ${task.vocabSize} (another tokenizer)`,
    );
  const saved = join(dir, TOKENIZER_FILE);
  if (task.tokenizer && existsSync(saved)) {
    const same = readFileSync(saved, 'utf8').trim() === JSON.stringify(task.tokenizer.toJSON());
    if (!same)
      throw new Error(
        `policy ${dir}: task "${task.name}" built another tokenizer than the one it was trained with (${saved})`,
      );
  }
}

/** The policy folder of `dir`: `dir` itself when it holds weights, else its `policy/` (a run's checkpoint.dir). */
export function policyFolder(dir: string): string {
  if (existsSync(join(dir, MODEL_FILE))) return dir;
  const policy = join(dir, 'policy');
  if (existsSync(join(policy, MODEL_FILE))) return policy;
  throw new Error(`${dir}: no ${MODEL_FILE} there nor in ${policy} (is it a checkpoint folder?)`);
}

/** The saved config of the checkpoint folder `dir` (or its `policy/`), when it describes itself. */
export function savedConfig(dir: string): TrainConfig | null {
  try {
    return readAgentDescription(policyFolder(dir))?.config ?? null;
  } catch {
    return null;
  }
}
