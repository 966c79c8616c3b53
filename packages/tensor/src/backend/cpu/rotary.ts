/** Rotary position embedding (and its adjoint) over dense rows; see `RotaryArgs`. */
import type { RotaryArgs } from '../backend.js';
import { dataOf } from './storage.js';
import { assertDense } from './strided.js';

const exact = (v: number) => v;

export function rotary({ x, cos, sin, out, transpose }: RotaryArgs): void {
  assertDense('rotary', x, cos, sin, out);
  const [B, H, T, D] = x.shape;
  const half = D / 2;
  const [xs, c, s, o] = [dataOf(x), dataOf(cos), dataOf(sin), dataOf(out)];
  // Each product rounded to float32 before the sum, as a multiply kernel's stores would round it.
  const round = x.dtype === 'float32' ? Math.fround : exact;
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let t = 0; t < T; t++) {
        const row = ((b * H + h) * T + t) * D;
        const xr = x.offset + row;
        const or = out.offset + row;
        const angle = (b * T + t) * D;
        const cr = cos.offset + angle;
        const sr = sin.offset + angle;
        for (let i = 0; i < D; i++) {
          const j = i < half ? i + half : i - half;
          const si = s[sr + (transpose ? j : i)];
          o[or + i] = round(xs[xr + i] * c[cr + i]) + round(xs[xr + j] * si);
        }
      }
}
