/**
 * Relaxed SIMD: where the engine has it (here, child processes of Node 20 with
 * --experimental-wasm-relaxed-simd), the matmul's multiply-adds are `f32x4.relaxed_madd`. Both paths run on
 * the same inputs, one and two threads: each is deterministic, both stay within float32 rounding of a
 * float64 reference, and they may differ from each other in the last bits (a fused multiply-add rounds
 * once). AGENT_R1_RELAXED_SIMD=0 keeps the SIMD128 path; an engine without relaxed SIMD never takes it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { wasmRelaxedSimdActive, wasmRelaxedSimdSupported } from '../src/index.js';

interface ChildReport {
  supported: boolean;
  active: boolean;
  cases: {
    shape: string;
    out: number[];
    again: number[];
    twoThreads: number[];
    maxError: number;
    scale: number;
  }[];
}

/** Runs the matmuls in a child Node with `flags` and `env`; its report. */
async function runChild(flags: string[], env: Record<string, string>): Promise<ChildReport> {
  const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
  const script = `
import * as T from ${JSON.stringify(entry)};
T.enableWasmKernels({ threads: 2 });
const g = new T.Generator(7);
const cases = [];
// Shapes past one k block (256) and past the micro-kernels' 4 x 8 tiles, with ragged edges.
for (const [m, k, n] of [[5, 37, 11], [64, 300, 72], [1, 513, 9]]) {
  const a = T.randn([m, k], { generator: g });
  const b = T.randn([k, n], { generator: g });
  T.enableWasmKernels({ threads: 1 });
  const out = [...T.matmul(a, b).dataSync()];
  const again = [...T.matmul(a, b).dataSync()];
  T.enableWasmKernels({ threads: 2 });
  T.waitForWasmWorkers(20000);
  const twoThreads = [...T.matmul(a, b).dataSync()];
  const ref = T.matmul(a.cast('float64'), b.cast('float64')).dataSync();
  let maxError = 0, scale = 0;
  out.forEach((v, i) => { maxError = Math.max(maxError, Math.abs(v - ref[i])); scale = Math.max(scale, Math.abs(ref[i])); });
  cases.push({ shape: m + 'x' + k + 'x' + n, out, again, twoThreads, maxError, scale });
}
console.log(JSON.stringify({ supported: T.wasmRelaxedSimdSupported(), active: T.wasmRelaxedSimdActive(), cases }));
T.shutdownWasmWorkers();
`;
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return JSON.parse(stdout) as ChildReport;
}

const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

describe('relaxed SIMD in the wasm matmul', () => {
  it('is off in an engine without it (this Node 20, unflagged)', () => {
    expect(wasmRelaxedSimdSupported()).toBe(false);
    expect(wasmRelaxedSimdActive()).toBe(false);
  });

  it('is taken where the engine has it, is deterministic, and stays within rounding of SIMD128', async () => {
    const [relaxed, plain] = await Promise.all([
      runChild([RELAXED_FLAG], {}),
      runChild([RELAXED_FLAG], { AGENT_R1_RELAXED_SIMD: '0' }),
    ]);
    expect(relaxed).toMatchObject({ supported: true, active: true });
    expect(plain).toMatchObject({ supported: true, active: false });
    // The multiply-adds really are fused: V8 lowers relaxed_madd to an FMA instruction on x86-64 with
    // FMA3 and on arm64, so some outputs differ in their last bits from the twice-rounded path.
    const differs = relaxed.cases.some((r, i) => r.out.some((v, j) => v !== plain.cases[i].out[j]));
    expect(differs).toBe(true);
    relaxed.cases.forEach((r, i) => {
      const p = plain.cases[i];
      for (const run of [r, p]) {
        // Same inputs, same path: the same bits, on one thread or two.
        expect(run.again).toEqual(run.out);
        expect(run.twoThreads).toEqual(run.out);
        // float32 accumulation over k terms: within k·2^-24 of the scale, far below it here.
        expect(run.maxError, run.shape).toBeLessThan(
          1e-5 * run.scale * Math.sqrt(Number(run.shape.split('x')[1])),
        );
      }
      const apart = Math.max(...r.out.map((v, j) => Math.abs(v - p.out[j])));
      expect(apart, r.shape).toBeLessThan(2e-5 * r.scale);
    });
  }, 120_000);
});
