/**
 * Reading a step's scalar results (losses, metrics) as numbers once the step's work is queued: one
 * transfer for all of them, as a promise, so that it works on every backend (WebGPU's reads are promises)
 * and gives exactly the numbers a synchronous read would.
 */
import { type Tensor, concat, promoteTypes, tidy } from '@agent-r1/tensor';

/** The numbers of the given scalar tensors (absent entries stay absent); the tensors are disposed. */
export async function readScalars<K extends string>(
  scalars: Partial<Record<K, Tensor>>,
): Promise<Partial<Record<K, number>>> {
  const entries = Object.entries(scalars).filter((e): e is [K, Tensor] => e[1] !== undefined);
  if (entries.length === 0) return {};
  try {
    for (const [name, t] of entries)
      if (t.size !== 1) throw new Error(`readScalars: ${name} has shape [${t.shape}], not a scalar`);
    const dtype = entries.map(([, t]) => t.dtype).reduce(promoteTypes);
    const stacked = tidy(() => concat(entries.map(([, t]) => t.reshape([1]).cast(dtype))));
    try {
      const values = await stacked.data();
      return Object.fromEntries(entries.map(([name], i) => [name, values[i]])) as Partial<Record<K, number>>;
    } finally {
      stacked.dispose();
    }
  } finally {
    for (const [, t] of entries) t.dispose();
  }
}
