/**
 * The browser implementation of `ThreadHost` (./pool.ts): Web Workers started from a Blob URL of the worker
 * program, each handed the shared memory, the compiled module and the control block by `postMessage` (a
 * shared `WebAssembly.Memory` and a `WebAssembly.Module` are both structured-cloneable). Shared memory needs
 * a cross-origin-isolated page (COOP `same-origin` + COEP `require-corp`); without it there is no host and
 * the kernels run on the main thread only.
 */
import type { ThreadHost } from './pool.js';

interface WebWorker {
  postMessage(data: unknown): void;
  terminate(): void;
}

/** The globals this host uses; `globalThis` in a page or a worker, or a stand-in in tests. */
export interface WebWorkerGlobals {
  Worker?: new (url: string) => WebWorker;
  Blob?: new (parts: string[], options: { type: string }) => object;
  URL?: { createObjectURL(blob: object): string; revokeObjectURL(url: string): void };
  navigator?: { hardwareConcurrency?: number };
  crossOriginIsolated?: boolean;
  SharedArrayBuffer?: unknown;
}

export function webWorkerHost(
  env: WebWorkerGlobals = globalThis as unknown as WebWorkerGlobals,
): ThreadHost | undefined {
  const { Worker, Blob, URL } = env;
  if (!Worker || !Blob || !URL?.createObjectURL || !env.SharedArrayBuffer) return undefined;
  if (env.crossOriginIsolated === false) return undefined;
  return {
    hardwareThreads: env.navigator?.hardwareConcurrency ?? 1,
    spawn(mainSource: string, data: unknown) {
      // The first message carries `main`'s data; the worker program then waits on the control block.
      const code = `${mainSource}\nself.onmessage = (event) => { self.onmessage = null; main(event.data); };\n`;
      const url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
      let worker: WebWorker;
      try {
        worker = new Worker(url);
      } finally {
        // The worker holds the script once constructed (the URL is resolved when parsed).
        URL.revokeObjectURL(url);
      }
      worker.postMessage(data);
      return { terminate: () => worker.terminate() };
    },
  };
}
