/**
 * The CPU backend's elementwise and reduction kernels: each op over 2^20 float32 elements (unary; binary
 * with a second operand of the same shape; reductions of [1024, 1024] along each row) into a preallocated
 * output, on the TypeScript kernels and then with the wasm
 * kernels on (one thread), as median milliseconds per call. Ops without a wasm kernel run the TypeScript kernel in both columns. To
 * compare two trees, run it in a checkout of each, in turn. Run from benchmarks/:
 *
 *   npx tsx --conditions=@agent-r1/source src/elementwise.ts [--reps 15]
 */
import * as T from '@agent-r1/tensor';
import { medianMs } from './median.js';

const N = 1 << 20;
const reps = Number(process.argv[process.argv.indexOf('--reps') + 1] ?? 0) || 15;

/**
 * The cases over fresh operands and preallocated outputs (the kernels themselves: an op's allocation of its
 * output is not timed). Made after the wasm kernels are enabled, the tensors live in the wasm memory.
 */
function cases(): [string, () => void][] {
  const x = T.randn([N], { generator: new T.Generator(1) });
  const y = T.randn([N], { generator: new T.Generator(2) });
  const out = T.zeros([N]);
  const flags = T.zeros([N], { dtype: 'bool' });
  const kernels = T.getBackend('cpu').kernels;
  const unary = (op: T.UnaryOp): [string, () => void] => [op, () => kernels.unary(op, x, out)];
  const binary = (op: T.BinaryOp): [string, () => void] => [
    op,
    () => kernels.binary(op, x, y, op === 'gt' ? flags : out),
  ];
  const rows = x.reshape([1024, N / 1024]);
  const perRow = T.zeros([1024]);
  const indices = T.zeros([1024], { dtype: 'int32' });
  const reduce = (op: T.ReduceOp): [string, () => void] => [
    `${op} of rows`,
    () => kernels.reduce(op, rows, [1], op.startsWith('arg') ? indices : perRow),
  ];
  return [
    ...(['exp', 'tanh', 'sigmoid', 'silu', 'gelu', 'neg', 'square'] as const).map(unary),
    ...(['add', 'mul', 'maximum', 'gt'] as const).map(binary),
    ...(['sum', 'max', 'argmax'] as const).map(reduce),
  ];
}

const median = (once: () => void) => medianMs(once, reps);

const names = cases().map(([name]) => name);
const ts = cases().map(([, f]) => median(f));
T.enableWasmKernels({ threads: 1 });
const wasm = cases().map(([, f]) => median(f));

console.log(
  `elementwise ops and reductions over ${N} float32 elements, median ms per call (${reps} calls)\n`,
);
console.log('| op | TypeScript kernels | wasm kernels on |\n|---|---:|---:|');
for (const [i, name] of names.entries())
  console.log(`| ${name} | ${ts[i].toFixed(2)} | ${wasm[i].toFixed(2)} |`);
