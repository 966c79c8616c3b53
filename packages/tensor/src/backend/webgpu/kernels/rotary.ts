/** Rotary position embedding (and its adjoint) by one thread per element of dense views; see `RotaryArgs`. */
import type { RotaryArgs } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, PARAMS, buffer, sizeOfShape } from '../wgsl.js';

const WG = 256;

export function rotary(queue: GpuQueue, { x, cos, sin, out, transpose }: RotaryArgs): void {
  for (const [what, view] of Object.entries({ x, cos, sin, out }))
    if (view.dtype !== 'float32')
      throw new Error(`webgpu rotary: ${what} must be float32, got ${view.dtype} of shape [${view.shape}]`);
  const n = sizeOfShape(x.shape);
  if (n === 0) return;
  const [, H, T, D] = x.shape;
  const pipeline = queue.pipeline(
    `rotary|${transpose}`,
    () => `${PARAMS}
${buffer(1, 'x', 'float32')}
${buffer(2, 'c', 'float32')}
${buffer(3, 's', 'float32')}
${buffer(4, 'out', 'float32', true)}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  let D = pu(5u); let H = pu(6u); let T = pu(7u);
  let d = i % D;
  let row = i / D;
  let half = D / 2u;
  let j = select(d - half, d + half, d < half);
  // The angle row of this (batch, position): rows of x run over (b, h, t), the tables' over (b, t).
  let angle = ((row / (H * T)) * T + row % T) * D;
  let xi = x[pu(1u) + i];
  let xj = x[pu(1u) + row * D + j];
  let si = s[pu(3u) + angle + ${transpose ? 'j' : 'd'}];
  out[pu(4u) + i] = xi * c[pu(2u) + angle + d] + xj * si;
}`,
  );
  const params = new Params().u32(n, x.offset, cos.offset, sin.offset, out.offset, D, H, T);
  queue.dispatch(
    `rotary${transpose ? ' transposed' : ''} [${x.shape}]`,
    pipeline,
    [
      { storage: x.storage as GpuStorage },
      { storage: cos.storage as GpuStorage },
      { storage: sin.storage as GpuStorage },
      { storage: out.storage as GpuStorage, write: true },
    ],
    params,
    grid(Math.ceil(n / WG)),
  );
}
