/**
 * Runs in a browser page (bundled by ./chromium.ts): the WebGPU backend on the page's navigator.gpu —
 * Chromium's SwiftShader adapter in CI, which offers the `subgroups` feature that Dawn on llvmpipe lacks —
 * runs the row kernels (softmax, log-softmax, logprobs, layer/RMS norm, forward and backward) with both kernel
 * variants, against the CPU backend on the same page. Exposes `runWebGpuChecks()` on the global object.
 */
import {
  type Tensor,
  createWebGpuBackend,
  layerNorm,
  logSoftmax,
  logprobs,
  registerBackend,
  rmsNorm,
  softmax,
  sum,
  tensor,
  tidy,
} from '../../src/index.js';
import { values } from '../values.js';

export interface WebGpuPageReport {
  /** The adapter's features, and whether each backend's row reductions used subgroups. */
  features: string[];
  subgroups: Record<string, boolean>;
  /** Per backend and output: the largest |WebGPU − CPU| difference, and its scale (the largest |CPU|). */
  outputs: { name: string; maxDiff: number; maxAbs: number }[];
}

const ROWS = 5;
/** Short rows (64-thread workgroups), long ones (256), and widths that are not multiples of either. */
const WIDTHS = [7, 64, 300, 1500, 3000];

/** The row kernels and their gradients on `device`; returns the named outputs, read back. */
async function rowKernels(device: string, width: number): Promise<[string, Float32Array][]> {
  const n = ROWS * width;
  const f32 = (shape: number[], seed: number, scale = 1, grad = false) =>
    tensor(
      values(
        shape.reduce((a, b) => a * b, 1),
        seed,
        scale,
      ),
      { shape, device, requiresGrad: grad },
    );
  const { outputs, leaves } = tidy(() => {
    const x = f32([ROWS, width], width, 4, true);
    const w = f32([width], width + 1, 1, true);
    const b = f32([width], width + 2);
    const targets = tensor(
      Int32Array.from({ length: ROWS }, (_, r) => (r * 37) % width),
      { shape: [ROWS], device },
    );
    const named: [string, Tensor][] = [
      ['softmax', softmax(x, -1)],
      ['logSoftmax', logSoftmax(x, -1)],
      ['logprobs', logprobs(x, targets)],
      ['layerNorm', layerNorm(x, w, b)],
      ['rmsNorm', rmsNorm(x, w)],
    ];
    // One weighted sum of every output, so one backward runs each kernel's gradient.
    named
      .map(([, t], k) => sum(t.mul(f32(t.shape as number[], n + 3 + k))))
      .reduce((a, b) => a.add(b))
      .backward();
    return { outputs: named, leaves: [x, w] };
  });
  const all: [string, Tensor][] = [...outputs, ['dx', leaves[0].grad!], ['dw', leaves[1].grad!]];
  const read = await Promise.all(
    all.map(async ([name, t]) => [name, (await t.data()) as Float32Array] as const),
  );
  return read.map(([name, data]) => [`${name} [${ROWS}, ${width}]`, data]);
}

export async function runWebGpuChecks(): Promise<WebGpuPageReport> {
  const report: WebGpuPageReport = { features: [], subgroups: {}, outputs: [] };
  for (const kernels of ['hardware', 'software'] as const) {
    const name = `webgpu-${kernels}`;
    const backend = await createWebGpuBackend({ kernels }, name);
    registerBackend(name, backend);
    report.features = [...backend.features];
    report.subgroups[name] = backend.features.has('subgroups');
    for (const width of WIDTHS) {
      const want = await rowKernels('cpu', width);
      const got = await rowKernels(name, width);
      want.forEach(([output, expected], k) => {
        let maxDiff = 0;
        let maxAbs = 0;
        for (let i = 0; i < expected.length; i++) {
          maxAbs = Math.max(maxAbs, Math.abs(expected[i]));
          maxDiff = Math.max(maxDiff, Math.abs(got[k][1][i] - expected[i]));
        }
        report.outputs.push({ name: `${name}: ${output}`, maxDiff, maxAbs });
      });
    }
  }
  return report;
}

(globalThis as { runWebGpuChecks?: typeof runWebGpuChecks }).runWebGpuChecks = runWebGpuChecks;
