/** Median ms of `reps` calls of `once` after `warmups` calls (so that the engine has optimised the loops). */
export function medianMs(once: () => void, reps: number, warmups = 10): number {
  for (let i = 0; i < warmups; i++) once();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    once();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(reps / 2)];
}
