/**
 * The learning-rate multiplier of a stage (RL or warm start) from its config: `schedule`, `warmupSteps`,
 * `minLrRatio` and the stage's step count, one definition for both stages.
 */
import { type LrSchedule as Multiplier, constant, warmupCosine, warmupLinear } from '@agent-r1/nn';
import type { LrSchedule } from './config.js';

export interface ScheduleOptions {
  schedule: LrSchedule;
  warmupSteps: number;
  /** Steps of the stage: a decaying schedule reaches minLrRatio there. */
  steps: number;
  /** The multiplier a decaying schedule ends at (0: the rate decays to nothing). */
  minLrRatio: number;
}

export function lrMultiplier(o: ScheduleOptions): Multiplier {
  const decay = {
    warmupSteps: o.warmupSteps,
    totalSteps: Math.max(o.steps, o.warmupSteps),
    minRatio: o.minLrRatio,
  };
  if (o.schedule === 'cosine') return warmupCosine(decay);
  if (o.schedule === 'linear') return warmupLinear(decay);
  return constant({ warmupSteps: o.warmupSteps });
}
