/**
 * koffi, loaded on demand: CPU-only users never load a native module. koffi is an optionalDependency of
 * @agent-r1/tensor; when it is missing the error says so.
 */
import type * as Koffi from 'koffi';

export type KoffiModule = typeof Koffi;

let cached: Promise<KoffiModule> | null = null;

export function loadKoffi(): Promise<KoffiModule> {
  cached ??= import('koffi').then(
    (m) => ((m as unknown as { default?: KoffiModule }).default ?? m) as KoffiModule,
    (e: Error) => {
      cached = null;
      throw new Error(
        `cuda: the FFI package 'koffi' could not be loaded (${e.message}); it is an optional dependency of @agent-r1/tensor: install it to use the cuda backend`,
      );
    },
  );
  return cached;
}

/** The pointer koffi returns through an `_Out_ void **` argument (a BigInt in koffi 3). */
export function outPointer(box: unknown[]): bigint {
  const v = box[0];
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  throw new Error(`cuda: expected a pointer from the driver, got ${String(v)}`);
}
