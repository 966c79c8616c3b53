/**
 * The times in ms of `reps` calls of `once`, sorted, after `warmups` calls (so that the engine has
 * optimised the loops).
 */
export function timesMs(once: () => void, reps: number, warmups = 10): number[] {
  for (let i = 0; i < warmups; i++) once();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    once();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}

/** The median of `timesMs`. */
export function medianMs(once: () => void, reps: number, warmups = 10): number {
  return timesMs(once, reps, warmups)[Math.floor(reps / 2)];
}
