/** AdamW in place: param, m and v updated by one thread per element (decoupled weight decay, bias-corrected). */
import type { AdamWArgs } from '../../backend.js';
import type { GpuStorage } from '../buffers.js';
import { Params, grid, type GpuQueue } from '../queue.js';
import { GROUP_BUILTINS, LINEAR_GROUP, PARAMS, buffer, sizeOfShape } from '../wgsl.js';

const WG = 256;

export function adamw(queue: GpuQueue, args: AdamWArgs): void {
  const { param, grad, m, v, lr, beta1, beta2, eps, weightDecay, step } = args;
  for (const [what, view] of Object.entries({ param, grad, m, v }))
    if (view.dtype !== 'float32')
      throw new Error(`webgpu adamw: ${what} must be float32, got ${view.dtype} of shape [${view.shape}]`);
  const n = sizeOfShape(param.shape);
  if (n === 0) return;
  const pipeline = queue.pipeline(
    'adamw',
    () => `${PARAMS}
${buffer(1, 'p', 'float32', true)}
${buffer(2, 'g', 'float32')}
${buffer(3, 'm', 'float32', true)}
${buffer(4, 'v', 'float32', true)}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  let lr = pf(5u); let b1 = pf(6u); let b2 = pf(7u); let eps = pf(8u);
  let decay = pf(9u); let c1 = pf(10u); let c2 = pf(11u);
  let gi = g[pu(2u) + i];
  let mi = b1 * m[pu(3u) + i] + (1.0 - b1) * gi;
  let vi = b2 * v[pu(4u) + i] + (1.0 - b2) * gi * gi;
  m[pu(3u) + i] = mi;
  v[pu(4u) + i] = vi;
  let pi0 = p[pu(1u) + i] * decay;
  p[pu(1u) + i] = pi0 - (lr * (mi / c1)) / (sqrt(vi / c2) + eps);
}`,
  );
  // Bias corrections and the decay factor are computed here in float64, once per step.
  const params = new Params()
    .u32(n, param.offset, grad.offset, m.offset, v.offset)
    .f32s(lr, beta1, beta2, eps, 1 - lr * weightDecay, 1 - beta1 ** step, 1 - beta2 ** step);
  queue.dispatch(
    `adamw [${param.shape}]`,
    pipeline,
    [
      { storage: param.storage as GpuStorage, write: true },
      { storage: grad.storage as GpuStorage },
      { storage: m.storage as GpuStorage, write: true },
      { storage: v.storage as GpuStorage, write: true },
    ],
    params,
    grid(Math.ceil(n / WG)),
  );
}
