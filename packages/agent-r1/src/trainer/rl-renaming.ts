/**
 * Entity renaming in RL (`AgentTask.renameChance('rl')`), as in the warm start. Each step draws, for each
 * of its examples with that chance, one renaming that every sample of the example's group shares; the
 * names come from the example's scripted demonstration (recorded once per example), as in the warm start;
 * with `train.renameToFit`, only a renaming under which that demonstration fits the rollout's limits.
 */
import type { Generator } from '@agent-r1/tensor';
import type { EntityRenaming, AgentTask } from '../tasks/task.js';
import type { TrainConfig } from './config.js';
import {
  type Demonstration,
  demonstrationTexts,
  recordDemonstration,
  renamedDemonstration,
} from './demonstrations.js';

/** The renamings of one step's examples (an example left out keeps its names). */
export type StepRenamings<E> = (examples: readonly E[]) => Promise<Map<E, EntityRenaming>>;

/** Null when the task renames nothing in RL; throws when it asks for renaming it cannot do. */
export function rlRenamings<E>(
  config: TrainConfig,
  task: AgentTask<E>,
  generator: Generator,
): StepRenamings<E> | null {
  const chance = task.renameChance?.('rl') ?? 0;
  if (chance === 0) return null;
  const { renameEntities, scripted } = task;
  if (!renameEntities || !scripted)
    throw new Error(
      `task "${task.name}" renames entities in RL (chance ${chance}) but has no renameEntities and scripted policy`,
    );
  const recorded = new Map<E, { demo: Demonstration; texts: string[] }>();
  return async (examples) => {
    const out = new Map<E, EntityRenaming>();
    for (const example of examples) {
      if (out.has(example) || generator.random() >= chance) continue;
      let record = recorded.get(example);
      if (!record) {
        const index = task.train.indexOf(example);
        const demo = await recordDemonstration(
          task.makeEnv(),
          example,
          scripted(example, index),
          task.codec,
          config.rollout,
        );
        record = { demo, texts: demonstrationTexts(demo) };
        recorded.set(example, record);
      }
      const { demo, texts } = record;
      const draw = (fit?: 'no-longer') => renameEntities(example, texts, generator, 'rl', fit);
      if (!config.train.renameToFit) {
        out.set(example, draw());
        continue;
      }
      const fitting = renamedDemonstration(demo, task.codec, config.rollout, draw, true);
      if (fitting) out.set(example, fitting.renaming);
    }
    return out;
  };
}
