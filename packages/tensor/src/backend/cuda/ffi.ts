/**
 * koffi, loaded on demand: CPU-only users never load a native module. koffi is an optionalDependency of
 * @agent-r1/tensor; when it is missing the error says so.
 */
/**
 * The part of koffi's API this backend uses, declared here so that the package's published types do not
 * reference koffi's (an optional dependency a user may not have installed).
 */
export interface KoffiModule {
  load(path: string): { func(prototype: string): (...args: unknown[]) => unknown };
  alloc(type: string, count: number): unknown;
  view(pointer: unknown, length: number): ArrayBuffer;
}

let cached: Promise<KoffiModule> | null = null;

export function loadKoffi(): Promise<KoffiModule> {
  // A variable specifier keeps TypeScript from resolving (and the published types from naming) the module.
  const name = 'koffi';
  cached ??= import(name).then(
    (m: { default?: KoffiModule } & KoffiModule) => m.default ?? m,
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
