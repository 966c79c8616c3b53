/**
 * Where a decode step goes: `npx tsx --conditions=@agent-r1/source benchmarks/src/decode.ts [--threads 1]
 * [--busy 0] [--reps 30] [--batch 1,8] [--prompt 32]`. On the LM benchmark's model (./lm.ts) with the
 * WebAssembly kernels: the kernel launches of one decode step by kernel, then for each batch size the median
 * generate call (a `--prompt`-token prompt, 32 by default, at most 448; 64 new tokens) and, with threads, the jobs handed to workers per call, the time the main
 * thread blocked on them and the shares it took back (see packages/tensor/src/backend/wasm/pool.ts).
 * `--busy N` runs N CPU-bound processes beside it. For a CPU profile, run it under
 * `node --cpu-prof --cpu-prof-dir=DIR --import tsx --conditions=@agent-r1/source` and summarise the
 * profile with ./cpuprofile-top.ts.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { TransformerLM, extend, generate } from '@agent-r1/nn';
import {
  Generator,
  enableWasmKernels,
  getBackend,
  randint,
  waitForWasmWorkers,
  wasmWorkerInfo,
} from '@agent-r1/tensor';
import { LM_CONFIG } from './lm-model.js';

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1' },
    busy: { type: 'string', default: '0' },
    reps: { type: 'string', default: '30' },
    batch: { type: 'string', default: '1,8' },
    prompt: { type: 'string', default: '32' },
  },
  strict: true,
});
const PROMPT = Number(values.prompt);
if (!Number.isInteger(PROMPT) || PROMPT < 1 || PROMPT + 64 > LM_CONFIG.maxLength)
  throw new Error(
    `--prompt: a whole number of tokens from 1 to ${LM_CONFIG.maxLength - 64}, got ${values.prompt}`,
  );
enableWasmKernels({ threads: Number(values.threads) });
waitForWasmWorkers();
const model = new TransformerLM(LM_CONFIG);
model.eval();

function prompts(batch: number): number[][] {
  const ids = randint(0, 4096, [batch, PROMPT], { generator: new Generator(2), dtype: 'int32' });
  const data = Array.from(ids.dataSync());
  ids.dispose();
  return Array.from({ length: batch }, (_, b) => data.slice(b * PROMPT, (b + 1) * PROMPT));
}

/** Kernel launches of one decode step (after the prompt's prefill) by kernel, counted by wrapping them. */
function launches(batch: number): Map<string, number> {
  const cache = model.createCache(batch);
  extend(model, cache, prompts(batch));
  const kernels = getBackend('cpu').kernels as unknown as Record<string, (...a: unknown[]) => unknown>;
  const saved = { ...kernels };
  const counts = new Map<string, number>();
  for (const [name, fn] of Object.entries(saved)) {
    if (typeof fn !== 'function') continue;
    kernels[name] = (...args: unknown[]) => {
      const key = name === 'binary' || name === 'unary' ? `${name} ${args[0]}` : name;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return fn(...args);
    };
  }
  try {
    extend(
      model,
      cache,
      Array.from({ length: batch }, () => [7]),
    );
  } finally {
    Object.assign(kernels, saved);
    cache.dispose();
  }
  return counts;
}

const hogs = Array.from({ length: Number(values.busy) }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
try {
  for (const batch of values.batch.split(',').map(Number)) {
    const counts = [...launches(batch)].sort((a, b) => b[1] - a[1]);
    const total = counts.reduce((s, [, n]) => s + n, 0);
    console.log(
      `batch ${batch}: ${total} kernel launches a decode step (${counts.map(([k, n]) => `${k} ${n}`).join(', ')})`,
    );
    const rows = prompts(batch);
    const run = () =>
      generate(model, rows, { maxNewTokens: 64, generator: new Generator(3) }).cache.dispose();
    for (let i = 0; i < 5; i++) run();
    const before = wasmWorkerInfo();
    const times: number[] = [];
    const reps = Number(values.reps);
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      run();
      times.push(performance.now() - t0);
    }
    const after = wasmWorkerInfo();
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1];
    // (waitMs and takenBack are absent from workerInfo before 2026-12-04: n/a.)
    const per = (x: number) => (Number.isFinite(x) ? (x / reps).toFixed(1) : 'n/a');
    console.log(
      `  generate ${PROMPT}+64: median ${median.toFixed(1)} ms (${((batch * 64 * 1e3) / median).toFixed(0)} tokens/s, ${(median / 65).toFixed(2)} ms a forward); per call: ${per(after.sharedJobs - before.sharedJobs)} jobs handed to workers, ${per(after.waitMs - before.waitMs)} ms blocked on them, ${per(after.takenBack - before.takenBack)} shares taken back`,
    );
  }
} finally {
  for (const h of hogs) h.kill();
}
process.exit(0);
