/**
 * Timing. Each benchmark case builds its inputs once (untimed), then `measure` warms it up and times
 * repeated calls until enough time has passed or enough repetitions were taken. Every call reads its
 * result back, so the time covers the whole computation.
 */

/** One library's implementation of one benchmark, with its inputs already built. */
export interface Runner {
  /** Computes the op and reads the result back (which forces it to finish); returns what was read. */
  run(): ArrayLike<number>;
  /** Frees the inputs built for this runner. */
  dispose(): void;
}

export type Library = 'ours' | 'tfjs';

/** A kernel measured on both libraries, on the same input data. */
export interface Benchmark {
  name: string;
  /** Human-readable shape, e.g. "512x512 @ 512x512". */
  shape: string;
  /** Work per call: floating-point operations or bytes moved, to report a rate. */
  work: { amount: number; unit: 'GFLOP/s' | 'GB/s' };
  /** How far the two libraries' outputs may differ (max abs difference) before the check fails. */
  tolerance: number;
  /** Whether the tfjs side needs tfjs's gradient functions registered. */
  gradients?: boolean;
  setup: Record<Library, () => Runner>;
}

export interface MeasureOptions {
  /** Keep warming up (at least one call) until this much time has passed or maxWarmup calls. */
  warmupMs: number;
  maxWarmup: number;
  /** Time calls until at least minTimeMs and minReps, stopping at maxReps regardless. */
  minTimeMs: number;
  minReps: number;
  maxReps: number;
}

export const DEFAULT_OPTIONS: MeasureOptions = {
  warmupMs: 100,
  maxWarmup: 5,
  minTimeMs: 300,
  minReps: 5,
  maxReps: 200,
};

export const QUICK_OPTIONS: MeasureOptions = {
  warmupMs: 0,
  maxWarmup: 1,
  minTimeMs: 30,
  minReps: 1,
  maxReps: 10,
};

export interface Measurement {
  medianMs: number;
  minMs: number;
  reps: number;
  /** A copy of the output of the first call, to check the libraries agree. */
  output: Float32Array;
}

// Keeps the read results observable so no engine could skip the work.
let sink = 0;
export const sinkValue = () => sink;

export function measure(runner: Runner, options: MeasureOptions): Measurement {
  const warmStart = performance.now();
  const output = Float32Array.from(runner.run());
  let warm = 1;
  while (warm < options.maxWarmup && performance.now() - warmStart < options.warmupMs) {
    sink += runner.run()[0];
    warm++;
  }
  const times: number[] = [];
  const start = performance.now();
  while (
    times.length < options.maxReps &&
    (times.length < options.minReps || performance.now() - start < options.minTimeMs)
  ) {
    const t0 = performance.now();
    const out = runner.run();
    times.push(performance.now() - t0);
    sink += out[0];
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const medianMs = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  return { medianMs, minMs: times[0], reps: times.length, output };
}

/** Largest absolute difference between two outputs (Infinity if their lengths differ or one has NaN). */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= worst)) worst = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
  }
  return worst;
}
