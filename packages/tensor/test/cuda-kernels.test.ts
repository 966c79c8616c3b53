/**
 * Every kernel source the cuda backend generates compiles. The sources are the catalog (each dtype, rank
 * bucket, index width, matmul layout and tile, attention head bucket: src/backend/cuda/kernels/catalog.ts)
 * plus every kernel the launchers pick for the representative calls of test/cuda/scenarios.ts. They are
 * compiled with nvcc, each inside its own namespace in a few translation units (one nvcc start-up per
 * unit instead of per kernel), with warnings as errors, for two architectures: sm_90 to a CUBIN (so ptxas
 * also checks registers, shared memory and stack) and sm_80 to PTX (whose `.entry` list must name every
 * kernel). Skips with one line where nvcc is absent; REQUIRE_NVCC=1 makes that a failure.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import type { KernelSource } from '../src/backend/cuda/kernels/common.js';
import { kernelCatalog } from '../src/backend/cuda/kernels/catalog.js';
import { findNvcc } from './cuda/nvcc.js';
import { runScenarios } from './cuda/scenarios.js';

const run = promisify(execFile);
const nvcc = findNvcc();
if (!nvcc && process.env.REQUIRE_NVCC === '1') throw new Error('REQUIRE_NVCC=1 but nvcc was not found');

function allSources(): KernelSource[] {
  const byName = new Map<string, KernelSource>();
  for (const k of [...kernelCatalog(), ...runScenarios().launches.map((l) => l.kernel)]) {
    const seen = byName.get(k.name);
    if (seen && seen.source !== k.source) throw new Error(`two different sources named ${k.name}`);
    byName.set(k.name, k);
  }
  return [...byName.values()];
}

/** Runs jobs with at most `limit` at once. */
async function pool<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

describe.skipIf(!nvcc)('cuda kernel sources compile with nvcc', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ar1-cuda-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const sources = allSources();
  // ptxas (the CUBIN step) is the slow part, so it runs on the kernels whose registers and shared memory
  // are at stake (tiled, row and reduction kernels); the rest are checked to PTX on both architectures.
  const heavy = /^ar1_(matmul|attention|softmax|log_softmax|logprobs|layer_norm|rms_norm|norm|reduce)/;
  const write = (name: string, part: KernelSource[]) => {
    const file = join(dir, `${name}.cu`);
    writeFileSync(file, part.map((k, i) => `namespace k${i} {\n${k.source}\n}\n`).join('\n'));
    return file;
  };
  const flags = ['-std=c++17', '-Werror', 'all-warnings'];

  test(`all ${sources.length} kernels: sm_90 to PTX (CUBIN for tiled and row kernels), sm_80 to PTX`, {
    timeout: 300_000,
  }, async () => {
    // sm_80 gets every kernel but the larger attention head buckets: their sources differ from the d64
    // ones only in constants, and they are half the compile time (sm_90 still builds them all to CUBIN).
    const for80 = sources.filter((k) => !/^ar1_attention_\w+_d(32|128|256)$/.test(k.name));
    const heavyKernels = sources.filter((k) => heavy.test(k.name));
    const light = sources.filter((k) => !heavy.test(k.name));
    const split = (ks: KernelSource[], h: number) => ks.filter((_, i) => i % 2 === h);
    const jobs = [
      ...[0, 1].map((h) => ({ name: `a80${h}`, args: ['-ptx', '-arch=sm_80'], part: split(for80, h) })),
      ...[0, 1].map((h) => ({
        name: `h90${h}`,
        args: ['-cubin', '-arch=sm_90'],
        part: split(heavyKernels, h),
      })),
      { name: 'l90', args: ['-ptx', '-arch=sm_90'], part: light },
    ].map((j) => ({ ...j, file: write(j.name, j.part), out: join(dir, `${j.name}.${j.args[0].slice(1)}`) }));
    const started = Date.now();
    const results = await pool(
      jobs.map((j) => () => run(nvcc as string, [...j.args, ...flags, '-o', j.out, j.file])),
      Math.max(1, availableParallelism()),
    );
    for (const r of results) expect(r.stderr.trim()).toBe('');
    // Every kernel must come out as an entry point (PTX lists them; a failing CUBIN step throws above).
    for (const j of jobs.filter((j) => j.out.endsWith('.ptx'))) {
      const entries = new Set([...readFileSync(j.out, 'utf8').matchAll(/\.entry (\w+)\(/g)].map((m) => m[1]));
      for (const k of j.part) expect(entries, k.name).toContain(k.name);
    }
    console.log(
      `nvcc: ${sources.length} kernels compiled for sm_80 and sm_90 in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });

  test('a broken source fails the same check (the check can fail)', { timeout: 60_000 }, async () => {
    const file = join(dir, 'broken.cu');
    writeFileSync(file, 'extern "C" __global__ void k(float* x) { int unused = 1; x[0] = 1.0f; }\n');
    await expect(
      run(nvcc as string, ['-ptx', '-arch=sm_80', '-Werror', 'all-warnings', '-o', join(dir, 'b.ptx'), file]),
    ).rejects.toThrow(/unused/);
  });
});

describe.skipIf(nvcc)('cuda kernel sources compile with nvcc', () => {
  test.skip('nvcc not found on PATH, $CUDA_PATH/bin or /usr/local/cuda/bin: kernel compile check skipped', () => {});
});
