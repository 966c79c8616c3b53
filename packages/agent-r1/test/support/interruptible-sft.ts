/**
 * A pass-through `sftStep` that a test can make throw after some steps, to interrupt a stage (the warm
 * start, pretraining) the way a killed run would. In the test file:
 *
 *   vi.mock('../src/trainer/sft.js', async (importOriginal) =>
 *     (await import('./support/interruptible-sft.js')).interruptible(await importOriginal()));
 *
 * then `Object.assign(interrupt, { afterSteps: 5, done: 0 })` before the run that should stop.
 */
import type * as Sft from '../../src/trainer/sft.js';

export const interrupt = { afterSteps: Number.POSITIVE_INFINITY, done: 0 };

export function interruptible(original: typeof Sft): typeof Sft {
  return {
    ...original,
    sftStep: (...args) => {
      if (++interrupt.done > interrupt.afterSteps) throw new Error('interrupted');
      return original.sftStep(...args);
    },
  };
}
