/**
 * AdamW in place: param, m and v updated by one thread per element (decoupled weight decay, bias-corrected),
 * in f32, with the update's arithmetic from the kernel IR (kernel-ir/optim.ts).
 */
import { ADAMW_M, ADAMW_P, ADAMW_V } from '../../../kernel-ir/optim.js';
import { wgslFunction } from '../../../kernel-ir/render-wgsl.js';
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
${[ADAMW_M, ADAMW_V, ADAMW_P].map((f) => wgslFunction(f, 'f32', f.name)).join('\n')}
@compute @workgroup_size(${WG})
fn main(${GROUP_BUILTINS}) {
  ${LINEAR_GROUP}
  let i = group * ${WG}u + lid.x;
  if (i >= pu(0u)) { return; }
  let lr = pf(5u); let b1 = pf(6u); let b2 = pf(7u); let eps = pf(8u);
  let decay = pf(9u); let c1 = pf(10u); let c2 = pf(11u);
  let gi = g[pu(2u) + i];
  let mi = adamw_m(m[pu(3u) + i], gi, b1);
  let vi = adamw_v(v[pu(4u) + i], gi, b2);
  m[pu(3u) + i] = mi;
  v[pu(4u) + i] = vi;
  p[pu(1u) + i] = adamw_p(p[pu(1u) + i], mi, vi, decay, lr, c1, c2, eps);
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
