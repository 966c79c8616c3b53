/**
 * A debugging mode for the thread split (./runtime.ts `parallel`): the calls of a job run one after another
 * on the calling thread, in reverse order or with the writes of each thread's share recorded. Threads run a
 * job's calls at the same time in any interleaving, which is only safe when no call writes memory that
 * another call of the job reads or writes. `reverse` shows a dependence on order (results differ from the
 * forward run); `disjoint-writes` throws when the shares of two threads change the same word (a shared
 * scratch row, an overlapping output), which a sequential run never shows. Both keep the split a threaded
 * run would use, so they test what the threads will run. Slow (`disjoint-writes` compares the used memory
 * after each thread's share): for tests and investigations, not for training.
 */
import { type Call, shareStart } from './pool.js';

export type CallCheck = 'off' | 'reverse' | 'disjoint-writes';

/**
 * Runs `calls` in the order or with the checks `mode` asks for. `lanes`: how many threads the pool would
 * split them over (into the pool's contiguous ranges, ./pool.ts `shareStart`); `disjoint-writes` compares
 * what each range writes. `words` gives an Int32Array over the part of the memory in use now.
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
  const bound = (lane: number) => shareStart(lane, n, ranges);
  const size = words().length;
  if (writer.length < size) writer = new Int32Array(size).fill(-1);
  if (before.length < size) before = new Int32Array(size);
  before.set(words());
  const touched: number[] = [];
  try {
    for (let lane = 0; lane < ranges; lane++) {
      for (let c = bound(lane); c < bound(lane + 1); c++) run(calls[c]);
      const after = words();
      for (let i = 0; i < size; i++) {
        if (before[i] === after[i]) continue;
        const w = writer[i];
        if (w >= 0 && w !== lane)
          throw new Error(
            `wasm kernel '${kernel}': calls ${bound(w)}–${bound(w + 1) - 1} and ${bound(lane)}–${bound(lane + 1) - 1} ` +
              `of ${n} (threads ${w} and ${lane}) both write byte ${4 * i}`,
          );
        if (w < 0) touched.push(i);
        writer[i] = lane;
        before[i] = after[i];
      }
    }
  } finally {
    for (const i of touched) writer[i] = -1;
  }
}

// Kept between jobs: the range that wrote each word (−1: none), and the memory as it was.
let writer = new Int32Array(0);
let before = new Int32Array(0);
