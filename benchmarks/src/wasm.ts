/**
 * Every kernel the wasm backend registers, against the TypeScript kernel it replaces, in one process on the
 * same inputs: each kernel is called directly (getBackend('cpu').kernels.<name>) with the plain TypeScript
 * kernels, then the wasm kernels on 1 thread, then on 2 threads. A wasm kernel earns its registration only
 * if it is faster than the TypeScript one here. Run from benchmarks/:
 *
 *   npx tsx --conditions=@agent-r1/source src/wasm.ts [--quick] [--out file.json]
 *
 * Prints the median ms per configuration, the speed-ups over TS, and the max |difference| to the TS
 * output; writes them to JSON (default results/wasm-kernels.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as T from '@agent-r1/tensor';
import { DEFAULT_OPTIONS, QUICK_OPTIONS, type Runner, maxAbsDiff, measure } from './harness.js';
import { ours, randint, randn } from './inputs.js';

interface Case {
  name: string;
  shape: string;
  /** Calls the kernel on inputs built once; returns the output tensor to read. */
  setup(): { call: () => T.Tensor; dispose: () => void };
}

const kernels = () => T.getBackend('cpu').kernels;
const zeros = (shape: number[], dtype: T.DType = 'float32') => T.zeros(shape, { dtype });

/** A view of `t` broadcast over `shape` (stride 0 on the new leading axes), as the op layer passes it. */
function broadcastView(t: T.Tensor, shape: number[]): T.View {
  const lead = shape.length - t.shape.length;
  const strides = shape.map((_, i) => (i < lead || t.shape[i - lead] === 1 ? 0 : t.strides[i - lead]));
  return { storage: t.storage, dtype: t.dtype, shape, strides, offset: t.offset };
}

function kernelCase(name: string, shape: string, build: () => [T.Tensor, () => void, T.Tensor[]]): Case {
  return {
    name,
    shape,
    setup() {
      const [out, call, inputs] = build();
      return {
        call: () => {
          call();
          return out;
        },
        dispose: () => T.dispose([out, ...inputs]),
      };
    },
  };
}

function cases(): Case[] {
  const x2 = (r: number, c: number, seed: number, std = 1) => ours(randn([r, c], seed, std));
  const list: Case[] = [];
  list.push(
    kernelCase('matmul', '512x512 @ 512x512', () => {
      const [a, b, o] = [x2(512, 512, 1), x2(512, 512, 2), zeros([512, 512])];
      return [o, () => kernels().matmul(a, b, o), [a, b]];
    }),
  );
  for (const log of [false, true]) {
    list.push(
      kernelCase(log ? 'logSoftmax' : 'softmax', '4096x1024', () => {
        const [x, o] = [x2(4096, 1024, 3, 3), zeros([4096, 1024])];
        return [o, () => kernels().softmax(x, o, log), [x]];
      }),
      kernelCase(log ? 'logSoftmaxBackward' : 'softmaxBackward', '4096x1024', () => {
        const x = x2(4096, 1024, 4, 3);
        const y = log ? T.logSoftmax(x) : T.softmax(x);
        const [g, o] = [x2(4096, 1024, 5), zeros([4096, 1024])];
        return [o, () => kernels().softmaxBackward(y, g, o, log), [x, y, g]];
      }),
    );
  }
  list.push(
    kernelCase('logprobs', '4096x8192', () => {
      const [x, t] = [x2(4096, 8192, 6, 3), ours(randint(8192, [4096], 7))];
      const [o, l] = [zeros([4096]), zeros([4096])];
      return [o, () => kernels().logprobs(x, t, o, l), [x, t, l]];
    }),
    kernelCase('logprobsBackward', '4096x8192', () => {
      const [x, t] = [x2(4096, 8192, 8, 3), ours(randint(8192, [4096], 9))];
      const lse = T.logsumexp(x, -1);
      const [g, o] = [ours(randn([4096], 10)), zeros([4096, 8192])];
      return [o, () => kernels().logprobsBackward(x, t, lse, g, o), [x, t, lse, g]];
    }),
  );
  for (const centred of [true, false]) {
    const name = centred ? 'layerNorm' : 'rmsNorm';
    list.push(
      kernelCase(name, '4096x512', () => {
        const [x, w, b] = [x2(4096, 512, 11, 2), ours(randn([512], 12)), ours(randn([512], 13))];
        const [o, mean, rstd] = [zeros([4096, 512]), zeros([4096]), zeros([4096])];
        const args = { x, weight: w, bias: centred ? b : null, eps: 1e-5, out: o, mean, rstd };
        return [
          o,
          () => (centred ? kernels().layerNorm(args) : kernels().rmsNorm(args)),
          [x, w, b, mean, rstd],
        ];
      }),
      kernelCase(`${name}Backward`, '4096x512', () => {
        const [x, w, dy] = [x2(4096, 512, 14, 2), ours(randn([512], 15)), x2(4096, 512, 16)];
        const [o, mean, rstd] = [zeros([4096, 512]), zeros([4096]), zeros([4096])];
        kernels()[name]({ x, weight: w, bias: null, eps: 1e-5, out: o, mean, rstd });
        const [dx, dw, db] = [zeros([4096, 512]), zeros([512]), zeros([512])];
        const args = { x, weight: w, mean, rstd, dy, dx, dweight: dw, dbias: centred ? db : null };
        const run = () => (centred ? kernels().layerNormBackward(args) : kernels().rmsNormBackward(args));
        return [dx, run, [x, w, dy, o, mean, rstd, dw, db]];
      }),
    );
  }
  list.push(
    kernelCase('attention (causal)', 'B4 H4 S256 D64', () => {
      const [q, k, v] = [21, 22, 23].map((s) => ours(randn([4, 4, 256, 64], s)));
      const [o, lse] = [zeros([4, 4, 256, 64]), zeros([4, 4, 256])];
      const args = { q, k, v, mask: null, causal: true, scale: 1 / 8, out: o, lse };
      return [o, () => kernels().attention(args), [q, k, v, lse]];
    }),
  );
  list.push(
    // One decode step of a KV-cache batch: each row's keep-mask is a prefix of its own length.
    kernelCase('attention (decode, prefix mask)', 'B32 H4 T1 S384 D16', () => {
      const [q, k, v] = [
        ours(randn([32, 4, 1, 16], 28)),
        ours(randn([32, 2, 384, 16], 29)),
        ours(randn([32, 2, 384, 16], 30)),
      ];
      const keep = T.tensor(
        Array.from({ length: 32 * 384 }, (_, i) => i % 384 < 100 + ((Math.floor(i / 384) * 37) % 284)),
        { shape: [32, 1, 1, 384], dtype: 'bool' },
      );
      const mask = broadcastView(keep, [32, 4, 1, 384]);
      const [o, lse] = [zeros([32, 4, 1, 16]), zeros([32, 4, 1])];
      const args = { q, k, v, mask, causal: false, scale: 1 / 4, out: o, lse };
      return [o, () => kernels().attention(args), [q, k, v, keep, lse]];
    }),
  );
  list.push(
    kernelCase('attentionBackward (causal)', 'B4 H4 S256 D64', () => {
      const [q, k, v, dout] = [24, 25, 26, 27].map((s) => ours(randn([4, 4, 256, 64], s)));
      const [o, lse] = [zeros([4, 4, 256, 64]), zeros([4, 4, 256])];
      kernels().attention({ q, k, v, mask: null, causal: true, scale: 1 / 8, out: o, lse });
      const [dq, dk, dv] = [0, 1, 2].map(() => zeros([4, 4, 256, 64]));
      const args = { q, k, v, mask: null, causal: true, scale: 1 / 8, out: o, lse, dout, dq, dk, dv };
      return [dk, () => kernels().attentionBackward(args), [q, k, v, dout, o, lse, dq, dv]];
    }),
  );
  const [R, C] = [1024, 1024];
  for (const [op, kind] of [
    ['add', 'dense'],
    ['mul', 'dense'],
    ['add', 'row'],
    ['sub', 'row'],
    ['div', 'row'],
    ['mul', 'scalar'],
  ] as const) {
    list.push(
      kernelCase(`binary ${op} (${kind})`, `${R}x${C}`, () => {
        const a = x2(R, C, 31);
        const b = kind === 'dense' ? x2(R, C, 32) : ours(randn(kind === 'row' ? [C] : [1], 33));
        const bv = kind === 'dense' ? b : broadcastView(b, [R, C]);
        const o = zeros([R, C]);
        return [o, () => kernels().binary(op, a, bv, o), [a, b]];
      }),
    );
  }
  for (const op of ['exp', 'sigmoid', 'silu', 'silu_grad', 'gelu', 'gelu_grad'] as const) {
    list.push(
      kernelCase(`unary ${op}`, `${R}x${C}`, () => {
        const [x, o] = [x2(R, C, 41, 3), zeros([R, C])];
        return [o, () => kernels().unary(op, x, o), [x]];
      }),
    );
  }
  list.push(
    kernelCase('adamw', '1M params', () => {
      const n = 1 << 20;
      const [p, g, m, v] = [51, 52, 53, 54].map((s) => ours(randn([n], s, 0.1)));
      const v2 = T.abs(v);
      const args = {
        param: p,
        grad: g,
        m,
        v: v2,
        lr: 1e-3,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: 0.01,
        step: 10,
      };
      // In place: each call moves the state one more step, the same work every time.
      return [p, () => kernels().adamw(args), [g, m, v, v2]];
    }),
  );
  // The copy head's shapes: 16 rows of 300 positions, each reading 130 distinct context ids of a
  // 3,000-token vocabulary row, and scattering its 300 keys' attention onto those 130.
  const positions = 16 * 300;
  list.push(
    kernelCase('gather', `${positions}x3000 at 130`, () => {
      const x = x2(positions, 3000, 61);
      const index = ours(randint(3000, [positions, 130], 62));
      const o = zeros([positions, 130]);
      return [o, () => kernels().gather(x, 1, index, o), [x, index]];
    }),
    kernelCase('scatterAdd', `${positions}x130 from 300`, () => {
      const index = ours(randint(130, [positions, 300], 63));
      const src = x2(positions, 300, 64);
      const o = zeros([positions, 130]);
      // Zeroed first, so that every call (and every configuration) computes the same sums.
      const call = () => {
        kernels().fill(o, 0);
        kernels().scatterAdd(o, 1, index, src);
      };
      return [o, call, [index, src]];
    }),
  );
  return list;
}

const CONFIGS = ['ts', 'wasm-1', 'wasm-2'] as const;

function select(config: (typeof CONFIGS)[number]): void {
  if (config === 'ts') T.disableWasmKernels();
  else {
    T.enableWasmKernels({ threads: config === 'wasm-1' ? 1 : 2 });
    T.waitForWasmWorkers(30000);
  }
}

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const outIndex = argv.indexOf('--out');
const out =
  outIndex >= 0
    ? argv[outIndex + 1]
    : fileURLToPath(new URL('../results/wasm-kernels.json', import.meta.url));
const options = quick ? QUICK_OPTIONS : { ...DEFAULT_OPTIONS, minTimeMs: 400, maxReps: 60 };
if (!T.wasmSimdSupported()) {
  console.error('WebAssembly SIMD is not supported here');
  process.exit(1);
}
const machine = `${os.cpus()[0]?.model}, ${os.cpus().length} cores, node ${process.version}`;
console.log(`${machine}; ${new Date().toISOString()}; ${quick ? 'quick' : 'default'} repetitions`);
const pad = (s: string, n: number) => s.padEnd(n);
console.log(
  `${pad('kernel', 26)}${pad('shape', 18)}${CONFIGS.map((c) => pad(`${c} ms`, 11)).join('')}${pad('w1/ts', 8)}${pad('w2/ts', 8)}max|diff|`,
);
const rows = [];
for (const c of cases()) {
  const ms: Record<string, number> = {};
  let reference: Float32Array | undefined;
  let diff = 0;
  for (const config of CONFIGS) {
    select(config);
    const { call, dispose } = c.setup();
    const runner: Runner = { run: () => call().dataSync(), dispose };
    const m = measure(runner, options);
    runner.dispose();
    ms[config] = m.medianMs;
    if (!reference) reference = m.output;
    else diff = Math.max(diff, maxAbsDiff(m.output, reference));
  }
  const s1 = ms.ts / ms['wasm-1'];
  const s2 = ms.ts / ms['wasm-2'];
  rows.push({ kernel: c.name, shape: c.shape, ms, speedup1: s1, speedup2: s2, maxAbsDiff: diff });
  console.log(
    `${pad(c.name, 26)}${pad(c.shape, 18)}${CONFIGS.map((k) => pad(ms[k].toFixed(2), 11)).join('')}${pad(`${s1.toFixed(1)}x`, 8)}${pad(`${s2.toFixed(1)}x`, 8)}${diff.toExponential(1)}`,
  );
}
T.disableWasmKernels();
const slower = rows.filter((r) => !(r.speedup1 > 1 && r.speedup2 > 1)).map((r) => r.kernel);
console.log(
  slower.length ? `not faster than TS: ${slower.join(', ')}` : 'every wasm kernel is faster than TS',
);
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ machine, date: new Date().toISOString(), quick, rows }, null, 2)}\n`);
console.log(`wrote ${out}`);
process.exit(0);
