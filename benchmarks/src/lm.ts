/**
 * Language-model benchmark: `npx tsx --conditions=@agent-r1/source benchmarks/src/lm.ts
 * [--train-steps 5] [--gen-reps 3] [--kernels wasm|ts] [--threads 1] [--torch auto|off] [--rounds 2]
 * [--busy 0] [--out file.json]`.
 *
 * The default agent policy (dModel 64, 2 layers, 4 heads, 2 kv heads, SwiGLU, RMSNorm, tied embeddings,
 * vocab 4096, maxLength 512) on the CPU backend, with the WebAssembly kernels on `--threads` threads (default
 * 1) or the TypeScript ones (`--kernels ts`):
 *  - training: forward + cross-entropy + backward + AdamW step on batches of 8×128 random tokens; the median
 *    step of `--train-steps` after 2 warm-up steps, as tokens/s (1024 tokens per step);
 *  - generation: `generate` with the KV cache (batch 1 and batch 8, a 32-token prompt, 64 new tokens,
 *    temperature 1); and, for comparison, batch 1 without a cache, one full forward over the whole sequence
 *    per new token, with the same sampling. Median of `--gen-reps` runs after three warm-up runs; tokens/s counts
 *    new tokens over the whole call (prefill included).
 * PyTorch as an anchor: when `/usr/bin/python3` has torch (Debian: `apt-get install -y python3-torch`), the
 * same model and work in plain torch (./anchors/torch_lm.py, one thread) run too, `--rounds` times alternated
 * with ours (ours, torch, ours, torch, ...), and each round's ratios are printed; `--torch off` skips it.
 * `--busy N` runs N CPU-bound processes (an empty loop each) beside both for the whole run: contention.
 * Prints a table and writes JSON (default: benchmarks/results/lm.json).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AdamW, TransformerLM, type TransformerConfig, generate, sampleToken } from '@agent-r1/nn';
import {
  Generator,
  crossEntropy,
  enableWasmKernels,
  memory,
  noGrad,
  rand,
  randint,
  tensor,
  tidy,
  waitForWasmWorkers,
} from '@agent-r1/tensor';
import { LM_CONFIG } from './lm-model.js';
import { timesMs } from './median.js';

const { values } = parseArgs({
  options: {
    'train-steps': { type: 'string', default: '5' },
    'gen-reps': { type: 'string', default: '3' },
    kernels: { type: 'string', default: 'wasm' },
    threads: { type: 'string', default: '1' },
    torch: { type: 'string', default: 'auto' },
    rounds: { type: 'string', default: '2' },
    busy: { type: 'string', default: '0' },
    out: { type: 'string' },
  },
  strict: true,
});
const trainSteps = Number(values['train-steps']);
const genReps = Number(values['gen-reps']);
const rounds = Number(values.rounds);
const kernels =
  values.kernels === 'ts' ? 'TypeScript kernels' : `WebAssembly kernels, ${values.threads} thread(s)`;
if (values.kernels !== 'ts') {
  if (!enableWasmKernels({ threads: Number(values.threads) })) throw new Error('no WebAssembly SIMD here');
  waitForWasmWorkers();
}
const TORCH_PYTHON = '/usr/bin/python3';
const TORCH_SCRIPT = fileURLToPath(new URL('./anchors/torch_lm.py', import.meta.url));
const outFile = values.out
  ? resolve(process.cwd(), values.out)
  : fileURLToPath(new URL('../results/lm.json', import.meta.url));

const CONFIG: TransformerConfig = LM_CONFIG;
const TRAIN_BATCH = 8;
const TRAIN_LENGTH = 128;
const PROMPT = 32;
const NEW_TOKENS = 64;
/** Untimed generate calls first: one left the first round's batch 1 a third slower (code still warming up). */
const GEN_WARMUP = 3;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

interface Result {
  name: string;
  shape: string;
  /** Median and minimum time of one timed unit (a training step, or a whole generate call). */
  medianMs: number;
  minMs: number;
  reps: number;
  tokens: number;
  tokensPerSecond: number;
}

function timed(warmup: number, reps: number, fn: () => void): { medianMs: number; minMs: number } {
  const times = timesMs(fn, reps, warmup);
  return { medianMs: median(times), minMs: times[0] };
}

function result(name: string, shape: string, tokens: number, reps: number, t: ReturnType<typeof timed>) {
  return { name, shape, ...t, reps, tokens, tokensPerSecond: tokens / (t.medianMs / 1e3) };
}

function checkNoLeak(what: string, before: number): void {
  const now = memory().tensors;
  if (now !== before) console.warn(`warning: ${what} left ${now - before} tensors alive`);
}

function benchTraining(): Result {
  const model = new TransformerLM(CONFIG);
  const opt = new AdamW(model.parameters(), { lr: 1e-3 });
  const gen = new Generator(1);
  const shape = [TRAIN_BATCH, TRAIN_LENGTH + 1];
  const step = () =>
    tidy(() => {
      const batch = randint(0, CONFIG.vocabSize, shape, { generator: gen, dtype: 'int32' });
      const x = batch.narrow(1, 0, TRAIN_LENGTH).contiguous();
      const y = batch.narrow(1, 1, TRAIN_LENGTH).contiguous();
      const loss = crossEntropy(model.forward(x).logits, y);
      loss.backward();
      opt.step();
      opt.zeroGrad();
      return loss.itemSync();
    });
  step(); // creates the optimizer's moments
  const before = memory().tensors;
  const t = timed(1, trainSteps, step);
  checkNoLeak('training', before);
  opt.dispose();
  model.dispose();
  return result(
    'train fwd+bwd+AdamW',
    `${TRAIN_BATCH}x${TRAIN_LENGTH}`,
    TRAIN_BATCH * TRAIN_LENGTH,
    trainSteps,
    t,
  );
}

function prompts(batch: number): number[][] {
  const g = new Generator(2);
  const ids = randint(0, CONFIG.vocabSize, [batch, PROMPT], { generator: g, dtype: 'int32' });
  const data = Array.from(ids.dataSync());
  ids.dispose();
  return Array.from({ length: batch }, (_, b) => data.slice(b * PROMPT, (b + 1) * PROMPT));
}

/** Tokens sampled by the last cached batch-1 run, to check the uncached loop samples the same ones. */
let cachedTokens: number[] = [];

function benchCached(model: TransformerLM, batch: number): Result {
  const rows = prompts(batch);
  const run = () => {
    const out = generate(model, rows, { maxNewTokens: NEW_TOKENS, generator: new Generator(3) });
    out.cache.dispose();
    if (out.tokens.some((t) => t.length !== NEW_TOKENS)) throw new Error('generate stopped early');
    if (batch === 1) cachedTokens = out.tokens[0];
  };
  const before = memory().tensors;
  const t = timed(GEN_WARMUP, genReps, run);
  checkNoLeak(`generate batch ${batch}`, before);
  return result('generate, KV cache', `B${batch} ${PROMPT}+${NEW_TOKENS}`, batch * NEW_TOKENS, genReps, t);
}

/** Batch 1, no cache: the whole sequence goes through the model for every new token. */
function benchUncached(model: TransformerLM): Result {
  const [prompt] = prompts(1);
  const run = () => {
    const generator = new Generator(3);
    const seq = [...prompt];
    for (let i = 0; i < NEW_TOKENS; i++) {
      const logits = noGrad(() =>
        tidy(() => {
          const ids = tensor([seq], { dtype: 'int32' });
          const all = model.forward(ids).logits.dataSync();
          return Float64Array.from(all.subarray((seq.length - 1) * CONFIG.vocabSize));
        }),
      );
      const draw = rand([1], { generator, dtype: 'float64' });
      const u = draw.dataSync()[0];
      draw.dispose();
      seq.push(sampleToken(logits, u).token);
    }
    const same = seq.slice(PROMPT).every((t, i) => t === cachedTokens[i]);
    if (!same) console.warn('warning: the uncached loop sampled other tokens than generate with the cache');
  };
  const before = memory().tensors;
  const t = timed(GEN_WARMUP, genReps, run);
  checkNoLeak('generate without a cache', before);
  return result('generate, no cache', `B1 ${PROMPT}+${NEW_TOKENS}`, NEW_TOKENS, genReps, t);
}

const machine = {
  cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
  cores: os.cpus().length,
  node: process.version,
  os: `${os.platform()} ${os.release()} ${os.arch()}`,
  date: new Date().toISOString(),
  loadAverage: os.loadavg()[0],
};
console.log(
  `Machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.os}; load ${machine.loadAverage.toFixed(2)}; ${machine.date}`,
);
const probe = new TransformerLM(CONFIG);
const parameters = probe.numParameters();
console.log(
  `Model: dModel ${CONFIG.dModel}, ${CONFIG.layers} layers, ${CONFIG.heads} heads (${CONFIG.kvHeads} kv), SwiGLU, vocab ${CONFIG.vocabSize}, maxLength ${CONFIG.maxLength}; ${parameters} parameters; CPU backend\n`,
);

interface TorchResult {
  torch: string;
  threads: number;
  trainMs: number;
  gen: Record<'1' | '8', number>;
}

function torchAvailable(): boolean {
  if (values.torch === 'off') return false;
  try {
    execFileSync(TORCH_PYTHON, ['-c', 'import torch'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function runTorch(): TorchResult {
  const args = [TORCH_SCRIPT, '--train-steps', String(trainSteps), '--gen-reps', String(genReps)];
  return JSON.parse(execFileSync(TORCH_PYTHON, args, { encoding: 'utf8' }).trim().split('\n').at(-1)!);
}

const hogs = Array.from({ length: Number(values.busy) }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
process.on('exit', () => {
  for (const h of hogs) h.kill();
});
if (hogs.length > 0) console.log(`${hogs.length} busy process(es) running beside the benchmark.`);
const started = performance.now();
probe.eval();
const withTorch = torchAvailable();
console.log(`Ours: ${kernels}. PyTorch anchor: ${withTorch ? `${TORCH_PYTHON}, one thread` : 'off'}.\n`);
/** Each round: ours (training, batch 1, batch 8), then PyTorch's, so that the two sides alternate. */
const perRound: { ours: Result[]; torch: TorchResult | null }[] = [];
for (let round = 0; round < Math.max(1, rounds); round++) {
  const ours = [benchTraining(), benchCached(probe, 1), benchCached(probe, 8)];
  perRound.push({ ours, torch: withTorch ? runTorch() : null });
}
const results: Result[] = [...perRound[0].ours, benchUncached(probe)];
probe.dispose();
for (const h of hogs) h.kill();

const header = ['benchmark', 'shape', 'median ms', 'min ms', 'reps', 'tokens', 'tokens/s'];
const cells = results.map((r) => [
  r.name,
  r.shape,
  r.medianMs.toFixed(1),
  r.minMs.toFixed(1),
  String(r.reps),
  String(r.tokens),
  r.tokensPerSecond.toFixed(r.tokensPerSecond >= 100 ? 0 : 1),
]);
const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
const line = (c: string[]) =>
  c.map((x, i) => (i < 2 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
console.log([line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n'));
const cached = results.find((r) => r.name === 'generate, KV cache' && r.shape.startsWith('B1 '));
const uncached = results.find((r) => r.name === 'generate, no cache');
const gain = cached && uncached ? cached.tokensPerSecond / uncached.tokensPerSecond : null;
if (gain !== null) console.log(`\nKV cache speed-up at batch 1: ${gain.toFixed(1)}x`);
if (withTorch) {
  const rows = perRound.map(({ ours, torch }, round) => {
    const t = torch as TorchResult;
    const b1 = (NEW_TOKENS * 1e3) / t.gen['1'];
    const b8 = (8 * NEW_TOKENS * 1e3) / t.gen['8'];
    return [
      `round ${round + 1}`,
      `${ours[0].medianMs.toFixed(0)} / ${t.trainMs.toFixed(0)} ms = ${(t.trainMs / ours[0].medianMs).toFixed(2)}x`,
      `${ours[1].tokensPerSecond.toFixed(0)} / ${b1.toFixed(0)} = ${(ours[1].tokensPerSecond / b1).toFixed(2)}x`,
      `${ours[2].tokensPerSecond.toFixed(0)} / ${b8.toFixed(0)} = ${(ours[2].tokensPerSecond / b8).toFixed(2)}x`,
    ];
  });
  console.log(
    `\nOurs / PyTorch ${perRound[0].torch?.torch} (training step: PyTorch's time / ours; generation: tokens/s)`,
  );
  for (const r of [['', 'train step 8x128', 'generate B1 tok/s', 'generate B8 tok/s'], ...rows])
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(8) : c.padStart(30))).join(''));
}
console.log(`Total ${((performance.now() - started) / 1e3).toFixed(1)} s.`);

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(
  outFile,
  `${JSON.stringify({ machine, model: { ...CONFIG, parameters }, kernels, busy: hogs.length, results, cacheSpeedup: gain, rounds: perRound }, null, 2)}\n`,
);
console.log(`Results written to ${outFile}`);
