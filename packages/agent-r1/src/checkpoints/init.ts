/**
 * Starting a run's policy from another run's policy checkpoint (`init`): every parameter must be there
 * with its shape, except a value head the source did not have (a PPO run started from a warm start's
 * policy gets a fresh one). Anything else that does not fit stops the run with the folder and names.
 */
import { join } from 'node:path';
import { MODEL_FILE, type TransformerLM, loadSafetensors } from '@agent-r1/nn';
import { dispose } from '@agent-r1/tensor';
import { loadPolicyWeights } from './agent-description.js';

export async function initPolicy(policy: TransformerLM, dir: string): Promise<void> {
  const file = join(dir, MODEL_FILE);
  const { tensors } = await loadSafetensors(file).catch((e: Error) => {
    throw new Error(`policy ${dir}: cannot read ${MODEL_FILE}: ${e.message}`);
  });
  try {
    loadPolicyWeights(policy, tensors, { policy: dir, source: file });
  } finally {
    dispose(Object.values(tensors));
  }
}
