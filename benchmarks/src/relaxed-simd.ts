/**
 * The wasm matmul with relaxed SIMD (`f32x4.relaxed_madd`) against plain SIMD128: two child processes of
 * this Node with --experimental-wasm-relaxed-simd (Node 20 needs the flag; Node ≥ 22 and Chromium have it
 * on), one per path (AGENT_R1_RELAXED_SIMD=0 keeps SIMD128), run one after the other each round so that
 * load on the machine falls on both alike. Prints the median ms per matmul, the ratio and the largest
 * difference between the two paths' outputs. Run from benchmarks/:
 *
 *   npx tsx --conditions=@agent-r1/source src/relaxed-simd.ts [--rounds 3] [--threads 1] [--quick]
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import * as T from '@agent-r1/tensor';
import { DEFAULT_OPTIONS, QUICK_OPTIONS, maxAbsDiff, measure } from './harness.js';
import { ours, oursRunner, randn } from './inputs.js';

/** [M, K, N]: a square matmul, the LM benchmark's logits and MLP in training, and a decode step's. */
const SHAPES: [number, number, number][] = [
  [512, 512, 512],
  [1024, 64, 4096],
  [1024, 64, 192],
  [8, 64, 4096],
];

interface ChildResult {
  relaxed: boolean;
  cases: { shape: string; ms: number; output: number[] }[];
}

function child(threads: number, quick: boolean): void {
  T.enableWasmKernels({ threads });
  if (threads > 1) T.waitForWasmWorkers(20_000);
  const cases = SHAPES.map(([m, k, n], i) => {
    const a = ours(randn([m, k], 10 + i));
    const b = ours(randn([k, n], 20 + i));
    const r = measure(
      oursRunner([a, b], () => T.matmul(a, b)),
      quick ? QUICK_OPTIONS : DEFAULT_OPTIONS,
    );
    // A sample of the output (the first 256 values) is enough to compare the paths.
    return { shape: `${m}x${k} @ ${k}x${n}`, ms: r.medianMs, output: [...r.output.subarray(0, 256)] };
  });
  process.stdout.write(JSON.stringify({ relaxed: T.wasmRelaxedSimdActive(), cases } satisfies ChildResult));
  T.shutdownWasmWorkers();
}

function runChild(relaxed: boolean, args: string[]): ChildResult {
  const out = spawnSync(
    process.execPath,
    [
      '--experimental-wasm-relaxed-simd',
      '--import',
      'tsx',
      '--conditions=@agent-r1/source',
      new URL(import.meta.url).pathname,
      '--child',
      ...args,
    ],
    { encoding: 'utf8', env: { ...process.env, AGENT_R1_RELAXED_SIMD: relaxed ? '1' : '0' } },
  );
  if (out.status !== 0) throw new Error(`child (relaxed ${relaxed}) failed: ${out.stderr}`);
  const result = JSON.parse(out.stdout) as ChildResult;
  if (result.relaxed !== relaxed) throw new Error(`child asked for relaxed ${relaxed} ran ${result.relaxed}`);
  return result;
}

function main(): void {
  const args = process.argv.slice(2);
  const value = (flag: string, fallback: number) => {
    const i = args.indexOf(flag);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const threads = value('--threads', 1);
  const quick = args.includes('--quick');
  if (args.includes('--child')) {
    child(threads, quick);
    return;
  }
  const rounds = value('--rounds', 3);
  const pass = ['--threads', String(threads), ...(quick ? ['--quick'] : [])];
  console.log(
    `wasm matmul, relaxed SIMD vs SIMD128: ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${threads} thread(s), load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (let round = 1; round <= rounds; round++) {
    const plain = runChild(false, pass);
    const relaxed = runChild(true, pass);
    console.log(`round ${round}`);
    console.log('shape                     SIMD128 ms  relaxed ms  SIMD128/relaxed  max|diff| (256 outputs)');
    plain.cases.forEach((p, i) => {
      const r = relaxed.cases[i];
      console.log(
        `${p.shape.padEnd(26)}${p.ms.toFixed(3).padEnd(12)}${r.ms.toFixed(3).padEnd(12)}${(p.ms / r.ms).toFixed(2).padEnd(17)}${maxAbsDiff(p.output, r.output).toExponential(1)}`,
      );
    });
  }
}

main();
