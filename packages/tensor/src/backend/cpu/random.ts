import { splitCounter, threefry2x32, wordToUnit } from '../../random.js';
import type { RandomArgs, View } from '../backend.js';
import { dataOf } from './storage.js';

/** Element i draws from counter + i; normals use Box–Muller on the two words of one block. */
export function random(out: View, args: RandomArgs): void {
  const o = dataOf(out);
  const [k0, k1] = args.key;
  const n = out.shape.reduce((a, b) => a * b, 1);
  const range = args.b - args.a;
  for (let i = 0; i < n; i++) {
    const [c0, c1] = splitCounter(args.counter + i);
    const [w0, w1] = threefry2x32(k0, k1, c0, c1);
    let value: number;
    if (args.distribution === 'uniform') value = args.a + range * wordToUnit(w0);
    else if (args.distribution === 'randint') value = args.a + (w0 % range);
    else
      value =
        args.a + args.b * Math.sqrt(-2 * Math.log(wordToUnit(w0))) * Math.cos(2 * Math.PI * wordToUnit(w1));
    o[out.offset + i] = value;
  }
}
