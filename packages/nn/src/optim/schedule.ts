/**
 * Learning-rate schedules: pure functions from a step to a multiplier of the base rate, to pass to
 * `optimizer.setLrScale(schedule(optimizer.steps))` before each step (or `step(baseLr * schedule(i))`).
 * `step` counts the optimizer steps already taken (0 before the first), as in Hugging Face's schedules: the
 * warm-up ramps linearly from 0 at step 0 to 1 at `warmupSteps`, then the rate decays to `minRatio` at
 * `totalSteps` and stays there.
 */
export type LrSchedule = (step: number) => number;

export interface WarmupOptions {
  warmupSteps?: number;
}

export interface DecayOptions extends WarmupOptions {
  totalSteps: number;
  /** The multiplier at and after totalSteps (default 0). */
  minRatio?: number;
}

function checkStep(name: string, step: number): void {
  if (!Number.isFinite(step) || step < 0) throw new Error(`${name}: step must be a number >= 0, got ${step}`);
}

function checkWarmup(name: string, warmupSteps: number): void {
  if (!Number.isSafeInteger(warmupSteps) || warmupSteps < 0)
    throw new Error(`${name}: warmupSteps must be an integer >= 0, got ${warmupSteps}`);
}

function checkDecay(name: string, o: DecayOptions): Required<DecayOptions> {
  const warmupSteps = o.warmupSteps ?? 0;
  const minRatio = o.minRatio ?? 0;
  checkWarmup(name, warmupSteps);
  if (!Number.isSafeInteger(o.totalSteps) || o.totalSteps < warmupSteps)
    throw new Error(
      `${name}: totalSteps must be an integer >= warmupSteps (${warmupSteps}), got ${o.totalSteps}`,
    );
  if (!(minRatio >= 0 && minRatio <= 1))
    throw new Error(`${name}: minRatio must be in [0, 1], got ${minRatio}`);
  return { warmupSteps, totalSteps: o.totalSteps, minRatio };
}

/** 1 throughout, after an optional linear warm-up. */
export function constant(options: WarmupOptions = {}): LrSchedule {
  const warmupSteps = options.warmupSteps ?? 0;
  checkWarmup('constant', warmupSteps);
  return (step) => {
    checkStep('constant', step);
    return step < warmupSteps ? step / warmupSteps : 1;
  };
}

/** Linear warm-up, then a linear decay from 1 to minRatio over [warmupSteps, totalSteps]. */
export function warmupLinear(options: DecayOptions): LrSchedule {
  const { warmupSteps, totalSteps, minRatio } = checkDecay('warmupLinear', options);
  return (step) => {
    checkStep('warmupLinear', step);
    if (step < warmupSteps) return step / warmupSteps;
    if (step >= totalSteps) return minRatio;
    const progress = (step - warmupSteps) / (totalSteps - warmupSteps);
    return minRatio + (1 - minRatio) * (1 - progress);
  };
}

/** Linear warm-up, then a half-cosine decay from 1 to minRatio over [warmupSteps, totalSteps]. */
export function warmupCosine(options: DecayOptions): LrSchedule {
  const { warmupSteps, totalSteps, minRatio } = checkDecay('warmupCosine', options);
  return (step) => {
    checkStep('warmupCosine', step);
    if (step < warmupSteps) return step / warmupSteps;
    if (step >= totalSteps) return minRatio;
    const progress = (step - warmupSteps) / (totalSteps - warmupSteps);
    return minRatio + (1 - minRatio) * 0.5 * (1 + Math.cos(Math.PI * progress));
  };
}
