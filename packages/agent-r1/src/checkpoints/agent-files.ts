/**
 * What makes a policy checkpoint folder self-describing: `agent.json` (the task and its options, the
 * model's config, the resolved training config, the library's version) and, for a task whose tokenizer is
 * data, `tokenizer.json` (with `tokenizer_config.json` and its chat template, for a pretrained model's). They are written with the weights in one atomic save (saveCheckpoint's `files`),
 * so `eval`, `chat` and `loadAgent` need nothing but the folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODEL_FILE, type TransformerLM } from '@agent-r1/nn';
import type { AgentTask } from '../tasks/task.js';
import { LIBRARY_NAME, libraryVersion } from '../version.js';
import type { TrainConfig } from '../trainer/config.js';
import {
  AGENT_FILE,
  AGENT_FORMAT,
  AGENT_FORMAT_VERSION,
  type AgentDescription,
  TOKENIZER_FILE,
  checkDescribedTask,
  parseAgentDescription,
} from './agent-description.js';

export { AGENT_FILE, type AgentDescription, TOKENIZER_FILE } from './agent-description.js';

/** The files that describe `policy` (trained on `task` under `config`), for saveCheckpoint's `files`. */
export function agentFiles(config: TrainConfig, task: AgentTask<unknown>, policy: TransformerLM) {
  const { device: _, ...model } = policy.config;
  const description: AgentDescription = {
    format: AGENT_FORMAT,
    version: AGENT_FORMAT_VERSION,
    library: `${LIBRARY_NAME} ${libraryVersion()}`,
    task: config.task,
    taskOptions: config.taskOptions ?? {},
    model,
    config,
  };
  const files: Record<string, string> = { [AGENT_FILE]: `${JSON.stringify(description, null, 2)}\n` };
  if (task.tokenizer)
    Object.assign(
      files,
      task.tokenizer.files?.() ?? { [TOKENIZER_FILE]: `${JSON.stringify(task.tokenizer.toJSON())}\n` },
    );
  return files;
}

/** The description of the checkpoint folder `dir`; null for a folder written before they had one. */
export function readAgentDescription(dir: string): AgentDescription | null {
  const path = join(dir, AGENT_FILE);
  if (!existsSync(path)) return null;
  return parseAgentDescription(readFileSync(path, 'utf8'), path);
}

/**
 * Checks that `task` is the one the described policy was trained on: the same task, the same vocabulary
 * and (where saved) the same tokenizer. A mismatch is one line naming the folder and what differs.
 */
export function checkTaskFits(dir: string, description: AgentDescription, task: AgentTask<unknown>): void {
  const saved = join(dir, TOKENIZER_FILE);
  const text = task.tokenizer && existsSync(saved) ? readFileSync(saved, 'utf8') : undefined;
  checkDescribedTask(dir, description, task, text === undefined ? undefined : { text, source: saved });
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
