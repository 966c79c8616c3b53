/**
 * The kernel tracer (src/testing/kernel-trace.ts): it records every kernel call with its operands' hashes,
 * leaves the kernel table as it found it, and `firstDivergence` finds the call where two runs part: a
 * kernel that computes something else from the same inputs, or inputs changed outside the kernels. And,
 * traced call by call, the wasm kernels on one and on two threads compute the same thing.
 */
import { afterEach, describe, expect, test } from 'vitest';
import {
  type Tensor,
  getBackend,
  layerNorm,
  logSoftmax,
  matmul,
  registerBackend,
  registerKernel,
  relu,
  scaledDotProductAttention,
  tensor,
  tidy,
} from '../src/index.js';
import type { Kernels } from '../src/backend/backend.js';
import {
  disableWasmKernels,
  enableWasmKernels,
  waitForWasmWorkers,
  wasmSimdSupported,
} from '../src/backend/wasm/index.js';
import {
  type TracedCall,
  assertTraceable,
  firstDivergence,
  formatTracedCall,
  parseTracedCall,
  traceKernels,
} from '../src/testing/index.js';
import { values } from './values.js';

const cpuMatmul = getBackend('cpu').kernels.matmul;

afterEach(() => {
  registerKernel('cpu', 'matmul', cpuMatmul);
  disableWasmKernels();
});

/** A two-layer network's loss and its gradients, from inputs made by `input` (seeded values). */
function workload(input = (shape: number[], seed: number) => leaf(shape, seed)): void {
  tidy(() => {
    const x = input([24, 16], 1);
    const w1 = input([16, 12], 2);
    const w2 = input([12, 5], 3);
    const loss = logSoftmax(matmul(relu(matmul(x, w1)), w2)).sum();
    loss.backward();
  });
}

function leaf(shape: number[], seed: number, change?: (data: Float32Array) => void): Tensor {
  const data = values(
    shape.reduce((a, b) => a * b, 1),
    seed,
  );
  change?.(data);
  return tensor(data, { shape, requiresGrad: true });
}

function trace(run: () => void): TracedCall[] {
  const calls: TracedCall[] = [];
  const t = traceKernels((c) => calls.push(c));
  try {
    run();
  } finally {
    t.stop();
  }
  return calls;
}

describe('traceKernels', () => {
  test('records each call with its kernel, op, operand shapes and hashes; stop() restores the table', () => {
    const calls = trace(() => workload());
    expect(calls.map((c) => c.seq)).toEqual(calls.map((_, i) => i));
    const matmuls = calls.filter((c) => c.kernel === 'matmul');
    // Two forward matmuls, then the weight and input gradients of both layers (the first layer's input
    // gradient too: x requires grad).
    expect(matmuls.length).toBe(6);
    expect(matmuls[0].operands.map((o) => [o.name, o.shape])).toEqual([
      ['0', [24, 16]],
      ['1', [16, 12]],
      ['2', [24, 12]],
    ]);
    // The output changed, the inputs did not; hashes end with the element count.
    const [a, b, out] = matmuls[0].operands;
    expect(a.before).toBe(a.after);
    expect(b.before).toBe(b.after);
    expect(out.after).not.toBe(out.before);
    expect(out.after.endsWith(':288')).toBe(true);
    expect(calls.some((c) => c.kernel === 'unary' && c.op === 'relu')).toBe(true);
    // After stop, the table holds plain functions again and nothing is traced.
    const table = getBackend('cpu').kernels;
    expect(Object.getOwnPropertyDescriptor(table, 'matmul')?.value).toBe(cpuMatmul);
    const after = calls.length;
    workload();
    expect(calls.length).toBe(after);
  });

  test('a hash covers the elements in row-major order, whatever the layout, and every one of them', () => {
    // 5 × 7 elements: runs that do not start on a multiple of the hash's four lanes, and a tail.
    const t = tensor(values(35, 4), { shape: [5, 7] });
    const hashOf = (x: Tensor) =>
      trace(() => getBackend('cpu').kernels.copy(x, tensor(new Float32Array(35), { shape: x.shape }))).map(
        (c) => c.operands[0].before,
      )[0];
    const transposed = t.transpose(0, 1);
    expect(hashOf(transposed)).toBe(hashOf(transposed.contiguous()));
    expect(hashOf(transposed)).not.toBe(hashOf(t));
    // Each element counts: one bit flipped anywhere, or two elements swapped, changes the hash.
    const base = hashOf(t);
    const data = t.dataSync() as Float32Array;
    const bits = new Uint32Array(data.buffer);
    for (let i = 0; i < 35; i++) {
      const flipped = new Uint32Array(bits);
      flipped[i] ^= 1 << (i % 32);
      expect(hashOf(tensor(new Float32Array(flipped.buffer), { shape: [5, 7] }))).not.toBe(base);
    }
    const swapped = Float32Array.from(data);
    [swapped[1], swapped[2]] = [swapped[2], swapped[1]];
    expect(hashOf(tensor(swapped, { shape: [5, 7] }))).not.toBe(base);
  });

  test('the same run twice gives the same trace; the text form reads back', () => {
    const one = trace(() => workload());
    const two = trace(() => workload());
    expect(firstDivergence(one, two)).toBeNull();
    const lines = one.map(formatTracedCall);
    expect(lines.map(parseTracedCall)).toEqual(one);
    expect(() => parseTracedCall('3 matmul 0:2x2:abc')).toThrow(/bad operand "0:2x2:abc"/);
  });

  test('a kernel that computes something else from the same inputs is the divergence, inputs equal', () => {
    const reference = trace(() => workload());
    let n = 0;
    const perturbed: Kernels['matmul'] = (a, b, out) => {
      cpuMatmul(a, b, out);
      // The third matmul (the first gradient one) is off by a little in one element.
      if (++n === 3) (out.storage as unknown as { data: Float32Array }).data[out.offset] += 1e-3;
    };
    const changed = trace(() => {
      registerKernel('cpu', 'matmul', perturbed);
      workload();
    });
    const d = firstDivergence(reference, changed);
    const third = reference.filter((c) => c.kernel === 'matmul')[2];
    expect(d).toMatchObject({ index: third.seq, kind: 'result', differing: ['2'], inputsEqual: true });
  });

  test('inputs changed outside the kernels: the first call reading them diverges, inputs unequal', () => {
    const reference = trace(() => workload());
    const changed = trace(() =>
      workload((shape, seed) =>
        leaf(shape, seed, (data) => {
          if (seed === 2) data[5] += 0.5;
        }),
      ),
    );
    const d = firstDivergence(reference, changed);
    expect(d?.kind).toBe('result');
    expect(d?.inputsEqual).toBe(false);
    expect(d?.a.kernel).toBe('matmul');
    // A trace cut short (or a different sequence of kernels) is told apart from different results.
    expect(firstDivergence(reference.slice(0, 3), reference)).toBeNull();
    const reordered = [reference[1], reference[0], ...reference.slice(2)];
    expect(firstDivergence(reference, reordered)?.kind).toBe(
      reference[0].kernel === reference[1].kernel ? 'result' : 'kernel',
    );
  });

  test('a backend that cannot read synchronously is refused by name', () => {
    const { readSync, ...rest } = getBackend('cpu');
    registerBackend('no-sync-read', { ...rest, name: 'no-sync-read' });
    expect(() => traceKernels(() => {}, 'no-sync-read')).toThrow(/no-sync-read backend cannot read/);
    expect(() => assertTraceable('no-sync-read')).toThrow(/trace on cpu or cuda/);
    expect(assertTraceable('cpu').name).toBe('cpu');
  });

  test('one tracer per backend at a time', () => {
    const t = traceKernels(() => {});
    try {
      expect(() => traceKernels(() => {})).toThrow(/already being traced/);
    } finally {
      t.stop();
    }
    traceKernels(() => {}).stop();
  });
});

describe.skipIf(!wasmSimdSupported())('traced wasm kernels', () => {
  /** Large enough for every kernel here to split its work over the threads. */
  function big(): void {
    tidy(() => {
      const x = leaf([301, 96], 4);
      const w = leaf([96, 130], 5);
      const g = leaf([130], 6);
      const h = layerNorm(matmul(x, w), g, g);
      const q = leaf([2, 4, 64, 32], 7);
      const att = scaledDotProductAttention(q, q, q, { causal: true });
      logSoftmax(h).sum().add(att.sum()).backward();
    });
  }

  test('kernels registered while tracing are traced; one and two threads agree call by call', () => {
    const one = trace(() => {
      enableWasmKernels({ threads: 1 });
      big();
    });
    enableWasmKernels({ threads: 2 });
    expect(waitForWasmWorkers(20000)).toBe(1);
    const two = trace(() => big());
    expect(one.some((c) => c.kernel === 'attentionBackward')).toBe(true);
    expect(two.length).toBe(one.length);
    expect(firstDivergence(one, two)).toBeNull();
  });
});
