/**
 * A trained agent from its checkpoint folder alone: the folder's agent.json names the task, its options
 * and the model; the run's config comes back from it (with any overrides), the backend is set up, the task
 * rebuilt and checked against the saved tokenizer, and the weights loaded (./agent.ts has `ask`).
 */
import { createTask } from '../tasks/registry.js';
import type { AgentTask } from '../tasks/task.js';
import { policyFolder, readAgentDescription } from './agent-files.js';
import { checkpointTaskContext } from './pretrained.js';
import { prepareBackend } from '../trainer/backend-setup.js';
import { type PartialTrainConfig, resolveConfig } from '../trainer/config.js';
import { loadPolicyFrom } from '../evaluation/report.js';
import { type LoadedAgent, describedAgent } from './agent.js';

export { type AgentAnswer, type AskOptions, type LoadedAgent, describedAgent, transcript } from './agent.js';

/**
 * Loads the agent of a checkpoint folder (a policy folder, or a run's checkpoint.dir holding `policy/`).
 * `overrides` change the saved config (e.g. `backend`, `rollout.maxTurns`), as on the command line.
 */
export async function loadAgent<Example = unknown>(
  dir: string,
  options: { overrides?: readonly string[] | PartialTrainConfig } = {},
): Promise<LoadedAgent<Example>> {
  const folder = policyFolder(dir);
  const description = readAgentDescription(folder);
  if (!description)
    throw new Error(
      `${folder}: no agent.json (written before checkpoints described themselves): load it with loadPolicyFrom(dir, config, task) and the config it was trained with`,
    );
  const config = resolveConfig({ base: description.config, overrides: options.overrides });
  const backendLine = await prepareBackend(config);
  const task = (await createTask(config, await checkpointTaskContext(config, folder))) as AgentTask<Example>;
  const policy = await loadPolicyFrom(folder, config, task);
  return describedAgent({ dir: folder, description, config, backendLine, task, policy });
}
