/**
 * @tensorflow/tfjs-backend-wasm in Node, single-threaded (SIMD) or multi-threaded (SIMD + pthreads).
 *
 * The threaded build starts its pthread workers from Blob URLs and hands them its own main script as a Blob,
 * which Node's worker_threads cannot load. For the benchmark only, `Blob` and `URL.createObjectURL` are
 * replaced while the backend initialises so each "blob" is a temporary file (with the `require$$N` names the
 * fesm bundle expects defined), and the message that passes the main script to a worker carries its path.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as wt from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs-core';
import { getThreadsCount, setThreadsCount, setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

const BUNDLE_REQUIRES =
  "var require$$0=require('fs'),require$$1=require('path'),require$$2=require('worker_threads')," +
  "require$$3=require('perf_hooks'),require$$4=require('os'),commonjsGlobal=globalThis;\n";

function shimBlobsAsFiles(): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'tfjs-wasm-'));
  let count = 0;
  class FileBlob {
    readonly path: string;
    constructor(parts: string[]) {
      this.path = path.join(dir, `blob${count++}.js`);
      writeFileSync(this.path, BUNDLE_REQUIRES + parts.join(''));
    }
  }
  (globalThis as { Blob: unknown }).Blob = FileBlob;
  (URL as unknown as { createObjectURL: (b: FileBlob) => string }).createObjectURL = (b) => b.path;
  const post = wt.Worker.prototype.postMessage;
  wt.Worker.prototype.postMessage = function (this: wt.Worker, message: unknown, ...rest: never[]) {
    const m = message as { urlOrBlob?: unknown } | null;
    if (m && m.urlOrBlob instanceof FileBlob) message = { ...m, urlOrBlob: m.urlOrBlob.path };
    return post.call(this, message, ...rest);
  };
}

/** Selects tfjs's wasm backend; returns the thread count it reports. */
export async function initTfjsWasm(threads: number): Promise<number> {
  const require = createRequire(import.meta.url);
  const dist = path.dirname(
    require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'),
  );
  tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', threads > 1);
  if (threads > 1) {
    shimBlobsAsFiles();
    setThreadsCount(threads);
  }
  setWasmPaths(`${dist}/`);
  tf.enableProdMode();
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs-backend-wasm did not initialise');
  await tf.ready();
  return getThreadsCount();
}
