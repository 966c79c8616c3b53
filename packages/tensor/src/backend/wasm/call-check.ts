/**
 * A debugging mode for the thread split (./runtime.ts `parallel`): the calls of a job run one after another
 * on the calling thread, either in reverse order or with every call's writes recorded. Threads run a job's
 * calls at the same time in any interleaving, which is only safe when no call writes memory that another
 * call of the job reads or writes. `reverse` shows a dependence on order (results differ from the forward
 * run); `disjoint-writes` throws when the calls of two threads change the same word (a shared scratch row,
 * an overlapping output), which a sequential run never shows. Both keep the split a threaded run would use, so they test
 * what the threads will run. Slow (`disjoint-writes` compares the used memory after each thread's share): for tests
 * and investigations, not for training.
 */
import type { Call } from './pool.js';

export type CallCheck = 'off' | 'reverse' | 'disjoint-writes';

/**
 * Runs `calls` in the order or with the checks `mode` asks for. `lanes`: how many threads the pool would
 * split them over (contiguous ranges, as ./pool.ts does); `disjoint-writes` compares what each range
 * writes. `words` gives an Int32Array over the part of the memory in use now.
 */
export function runCallsChecked(
  mode: Exclude<CallCheck, 'off'>,
  kernel: string,
  calls: readonly Call[],
  lanes: number,
  run: (call: Call) => void,
  words: () => Int32Array,
): void {
  if (mode === 'reverse') {
    for (let c = calls.length - 1; c >= 0; c--) run(calls[c]);
    return;
  }
  const n = calls.length;
  const ranges = Math.max(1, Math.min(lanes, n));
  const bound = (lane: number) => Math.floor((lane * n) / ranges);
  // writer[i]: the range that changed word i, or -1.
  const writer = new Int32Array(words().length).fill(-1);
  let before = words().slice();
  for (let lane = 0; lane < ranges; lane++) {
    for (let c = bound(lane); c < bound(lane + 1); c++) run(calls[c]);
    const after = words();
    const size = Math.min(before.length, after.length);
    for (let i = 0; i < size; i++) {
      if (before[i] === after[i]) continue;
      const w = writer[i];
      if (w >= 0 && w !== lane)
        throw new Error(
          `wasm kernel '${kernel}': calls ${bound(w)}–${bound(w + 1) - 1} and ${bound(lane)}–${bound(lane + 1) - 1} ` +
            `of ${n} (threads ${w} and ${lane}) both write byte ${4 * i}`,
        );
      writer[i] = lane;
    }
    if (lane + 1 < ranges) before = after.slice();
  }
}
