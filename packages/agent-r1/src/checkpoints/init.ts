/**
 * Starting a run's policy from another run's policy checkpoint (`init`): every parameter must be there
 * with its shape, except a value head the source did not have (a PPO run started from a warm start's
 * policy gets a fresh one). Anything else that does not fit stops the run with the folder and names.
 */
import { join } from 'node:path';
import {
  MODEL_FILE,
  type TransformerLM,
  compareStateDict,
  loadSafetensors,
  loadStateDict,
} from '@agent-r1/nn';
import { dispose } from '@agent-r1/tensor';

export async function initPolicy(policy: TransformerLM, dir: string): Promise<void> {
  const file = join(dir, MODEL_FILE);
  const { tensors } = await loadSafetensors(file).catch((e: Error) => {
    throw new Error(`policy ${dir}: cannot read ${MODEL_FILE}: ${e.message}`);
  });
  try {
    const { missing, unexpected, mismatched } = compareStateDict(policy, tensors);
    const problems = [
      ...missing.filter((name) => !name.startsWith('valueHead.')).map((n) => `missing ${n}`),
      ...unexpected.filter((name) => !name.startsWith('valueHead.')).map((n) => `unexpected ${n}`),
      ...mismatched.map((m) => `${m.name}: expected ${m.expected}, got ${m.got}`),
    ];
    if (problems.length > 0) {
      const shown = problems.slice(0, 2).join('; ');
      const more = problems.length > 2 ? ` and ${problems.length - 2} more` : '';
      throw new Error(`policy ${dir}: the checkpoint does not fit this model's config (${shown}${more})`);
    }
    loadStateDict(policy, tensors, { strict: false, source: file });
  } finally {
    dispose(Object.values(tensors));
  }
}
