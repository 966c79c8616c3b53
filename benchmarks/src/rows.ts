/**
 * The CPU backend's row kernels on its TypeScript kernels (the wasm kernels off): softmax and log-softmax
 * with their backward, logprobs with its backward over [512, 1024], layer and RMS norms with their
 * backward over [512, 1024], and causal attention forward + backward [1, 4, 128, 32] (through the op, as
 * its kernel arguments are many), in float32 and float64, as median milliseconds per call. Outputs are
 * preallocated (an op's allocation is not timed, except attention's). To compare two trees, run it in a
 * checkout of each, in turn. Run from benchmarks/:
 *
 *   npx tsx --conditions=@agent-r1/source src/rows.ts [--reps 15]
 */
import * as T from '@agent-r1/tensor';
import { medianMs } from './median.js';

const reps = Number(process.argv[process.argv.indexOf('--reps') + 1] ?? 0) || 15;
const [ROWS, WIDTH] = [512, 1024];

function cases(dtype: 'float32' | 'float64'): [string, () => void][] {
  const g = new T.Generator(1);
  const options = { dtype, generator: g };
  const x = T.randn([ROWS, WIDTH], options);
  const dy = T.randn([ROWS, WIDTH], options);
  const out = T.zeros([ROWS, WIDTH], { dtype });
  const dx = T.zeros([ROWS, WIDTH], { dtype });
  const targets = T.randint(0, WIDTH, [ROWS], { generator: g });
  const perRow = T.zeros([ROWS], { dtype });
  const lse = T.zeros([ROWS], { dtype });
  const mean = T.zeros([ROWS], { dtype });
  const rstd = T.zeros([ROWS], { dtype });
  const weight = T.randn([WIDTH], options);
  const bias = T.randn([WIDTH], options);
  const dweight = T.zeros([WIDTH], { dtype });
  const dbias = T.zeros([WIDTH], { dtype });
  const k = T.getBackend('cpu').kernels;
  const norm = (name: 'layerNorm' | 'rmsNorm'): [string, () => void][] => {
    const b = name === 'layerNorm' ? bias : null;
    return [
      [name, () => k[name]({ x, weight, bias: b, eps: 1e-5, out, mean, rstd })],
      [
        `${name} backward`,
        () => k[`${name}Backward`]({ x, weight, mean, rstd, dy, dx, dweight, dbias: b && dbias }),
      ],
    ];
  };
  const q = T.randn([1, 4, 128, 32], options);
  const kv = T.randn([1, 4, 128, 32], options);
  const attention = () =>
    T.tidy(() => {
      const leaf = q.clone();
      leaf.requiresGrad = true;
      T.scaledDotProductAttention(leaf, kv, kv, { causal: true }).sum().backward();
    });
  return [
    ['softmax', () => k.softmax(x, out, false)],
    ['softmax backward', () => k.softmaxBackward(out, dy, dx, false)],
    ['logSoftmax', () => k.softmax(x, out, true)],
    ['logSoftmax backward', () => k.softmaxBackward(out, dy, dx, true)],
    ['logprobs', () => k.logprobs(x, targets, perRow, lse)],
    ['logprobs backward', () => k.logprobsBackward(x, targets, lse, perRow, dx)],
    ...norm('layerNorm'),
    ...norm('rmsNorm'),
    ['attention fwd+bwd', attention],
  ];
}

const median = (once: () => void) => medianMs(once, reps);

T.disableWasmKernels();
const table = (['float32', 'float64'] as const).map(
  (dtype) => new Map(cases(dtype).map(([name, f]) => [name, median(f)])),
);
console.log(`${'kernel'.padEnd(22)}${'float32 ms'.padStart(12)}${'float64 ms'.padStart(12)}`);
for (const name of table[0].keys())
  console.log(
    `${name.padEnd(22)}${table[0].get(name)!.toFixed(2).padStart(12)}${table[1].get(name)!.toFixed(2).padStart(12)}`,
  );
