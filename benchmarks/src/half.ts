/**
 * What half precision costs on the CPU backend, where half tensors are stored as bits and every kernel but
 * fill/copy computes on float32 copies (packages/tensor/src/backend/half-compute.ts): the same cases in
 * float32, bfloat16 and float16, in one process, interleaved round by round so that the machine's load
 * spreads over all three. Run from benchmarks/:
 *
 *   npx tsx --conditions=@agent-r1/source src/half.ts [--quick] [--threads 1] [--out file.json]
 *
 * Cases: a 512³ matmul, softmax [1024×1024], and a training step (forward, cross-entropy, backward, AdamW,
 * whose half parameters are updated through float32 master copies) of the multi-hop preset's policy on a
 * batch of 16×128 tokens. Prints median milliseconds and the ratio to float32; writes JSON (default
 * results/half.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AdamW, TransformerLM } from '@agent-r1/nn';
import * as T from '@agent-r1/tensor';
import { DEFAULT_OPTIONS, QUICK_OPTIONS, type Runner, measure } from './harness.js';

const { values } = parseArgs({
  options: { quick: { type: 'boolean' }, threads: { type: 'string', default: '1' }, out: { type: 'string' } },
  strict: true,
});
const DTYPES = ['float32', 'bfloat16', 'float16'] as const;
type Dtype = (typeof DTYPES)[number];

interface Case {
  name: string;
  setup(dtype: Dtype): Runner;
}

const generator = (seed: number) => new T.Generator(seed);

const CASES: Case[] = [
  {
    name: 'matmul 512³',
    setup(dtype) {
      const a = T.randn([512, 512], { dtype, generator: generator(1) });
      const b = T.randn([512, 512], { dtype, generator: generator(2) });
      return {
        run: () => T.tidy(() => T.matmul(a, b).dataSync().subarray(0, 8).slice()),
        dispose: () => T.dispose([a, b]),
      };
    },
  },
  {
    name: 'softmax [1024×1024]',
    setup(dtype) {
      const x = T.randn([1024, 1024], { dtype, generator: generator(3) });
      return {
        run: () => T.tidy(() => T.softmax(x, -1).dataSync().subarray(0, 8).slice()),
        dispose: () => x.dispose(),
      };
    },
  },
  {
    name: 'policy train step 16×128',
    setup(dtype) {
      const model = new TransformerLM({
        vocabSize: 3000,
        dModel: 64,
        layers: 3,
        heads: 4,
        kvHeads: 2,
        maxLength: 256,
        copyHead: true,
        seed: 1,
        dtype,
      });
      const opt = new AdamW(model.parameters(), { lr: 1e-3 });
      const ids = T.randint(0, 3000, [16, 129], { dtype: 'int32', generator: generator(4) });
      const x = ids.slice(1, 0, 128);
      const y = ids.slice(1, 1);
      return {
        run: () =>
          T.tidy(() => {
            const loss = T.crossEntropy(model.forward(x).logits, y);
            loss.backward();
            opt.step();
            opt.zeroGrad();
            return loss.dataSync().slice();
          }),
        dispose: () => {
          opt.dispose();
          model.dispose();
          ids.dispose();
        },
      };
    },
  },
];

const threads = Number(values.threads);
if (threads > 0) T.enableWasmKernels({ threads });
const options = values.quick ? QUICK_OPTIONS : DEFAULT_OPTIONS;
const rounds = values.quick ? 1 : 3;
const results: { case: string; dtype: Dtype; medianMs: number }[] = [];
const kernels = threads > 0 ? `wasm kernels, ${threads} thread(s)` : 'TypeScript kernels';
console.log(
  `half precision on the CPU backend (${kernels}), ${os.cpus()[0]?.model}, Node ${process.version}, ${new Date().toISOString()}`,
);
for (const c of CASES) {
  const runners = Object.fromEntries(DTYPES.map((d) => [d, c.setup(d)])) as Record<Dtype, Runner>;
  const samples: Record<Dtype, number[]> = { float32: [], bfloat16: [], float16: [] };
  for (let r = 0; r < rounds; r++)
    for (const d of DTYPES) samples[d].push(measure(runners[d], options).medianMs);
  for (const d of DTYPES) {
    runners[d].dispose();
    const ms = samples[d].sort((a, b) => a - b)[Math.floor(samples[d].length / 2)];
    results.push({ case: c.name, dtype: d, medianMs: ms });
  }
  const base = results.find((r) => r.case === c.name && r.dtype === 'float32')!.medianMs;
  const line = DTYPES.map((d) => {
    const ms = results.find((r) => r.case === c.name && r.dtype === d)!.medianMs;
    return `${d} ${ms.toFixed(1)} ms (${(ms / base).toFixed(2)}×)`;
  }).join('   ');
  console.log(`${c.name.padEnd(26)} ${line}`);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const out = values.out ?? path.join(here, '..', 'results', 'half.json');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ threads, date: new Date().toISOString(), results }, null, 2)}\n`);
T.shutdownWasmWorkers();
