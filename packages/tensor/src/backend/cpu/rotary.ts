/** Rotary position embedding (and its adjoint) over dense rows; see `RotaryArgs`. */
import type { RotaryArgs } from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense } from './strided.js';

export function rotary({ x, cos, sin, out, transpose }: RotaryArgs): void {
  assertDense('rotary', x, cos, sin, out);
  const [B, H, T, D] = x.shape;
  const half = D / 2;
  const [xs, c, s, o] = [dataOf(x), dataOf(cos), dataOf(sin), dataOf(out)];
  // Each product is rounded to float32 before the sum, as a multiply kernel's stores would round it.
  const f32 = x.dtype === 'float32';
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let t = 0; t < T; t++) {
        const row = ((b * H + h) * T + t) * D;
        const xr = x.offset + row;
        const or = out.offset + row;
        const angle = (b * T + t) * D;
        const cr = cos.offset + angle;
        const sr = sin.offset + angle;
        // Element i pairs with i + half in the first half and with i − half in the second; the sine
        // is element i's own, or (transposed) its partner's.
        for (let i = 0; i < D; i++) {
          const j = i < half ? i + half : i - half;
          const a = xs[xr + i] * c[cr + i];
          const p = xs[xr + j] * s[sr + (transpose ? j : i)];
          o[or + i] = f32 ? Math.fround(a) + Math.fround(p) : a + p;
        }
      }
}
