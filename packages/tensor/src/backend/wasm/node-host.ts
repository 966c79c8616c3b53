/**
 * The Node implementation of `ThreadHost` (./pool.ts): node:worker_threads, reached through
 * `process.getBuiltinModule` so that nothing imports a Node module statically and the kernel code still
 * loads in a browser (where this returns undefined and ./web-host.ts serves instead).
 * Workers are unref'd: a process that used the kernels exits when its own work is done.
 */
import type { ThreadHost } from './pool.js';

interface NodeWorker {
  unref(): void;
  terminate(): Promise<number>;
}

interface NodeProcess {
  getBuiltinModule?: (name: string) => unknown;
}

export function nodeThreadHost(): ThreadHost | undefined {
  const proc = (globalThis as { process?: NodeProcess }).process;
  const threads = proc?.getBuiltinModule?.('node:worker_threads') as
    | { Worker: new (code: string, options: { eval: true; workerData: unknown }) => NodeWorker }
    | undefined;
  const os = proc?.getBuiltinModule?.('node:os') as { availableParallelism?: () => number } | undefined;
  if (!threads || !os?.availableParallelism) return undefined;
  const hardwareThreads = os.availableParallelism();
  return {
    hardwareThreads,
    spawn(mainSource: string, data: unknown) {
      // A dynamic import works whether Node evaluates the code as CommonJS or, when the process runs with
      // --input-type=module (inherited by workers), as an ES module.
      const code = `${mainSource}\nimport('node:worker_threads').then((w) => main(w.workerData));\n`;
      const worker = new threads.Worker(code, { eval: true, workerData: data });
      worker.unref();
      return {
        terminate: () => {
          void worker.terminate();
        },
      };
    },
  };
}
