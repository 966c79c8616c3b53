/**
 * GPU kernel benchmarks for the cuda backend: matmul TFLOP/s at 1024–4096 (float32: the hand-written
 * tiled kernel, and cuBLAS in FP32 and TF32 where libcublas is found; bfloat16 and float16 operands through
 * the tiled kernel and cuBLAS GemmEx), flash attention forward and forward+backward throughput (float32 and
 * bfloat16), softmax and logprobs bandwidth, and a training step of a policy (the multi-hop preset's, and a
 * 768-wide 12-layer LM in float32 and in bfloat16). Run from the repository root on a machine with an
 * NVIDIA GPU:
 *
 *   npm run bench:cuda -w @agent-r1/benchmarks [-- --quick]
 *
 * Each case: warm-up (which includes the first-use NVRTC compile), then timed repetitions, each a batch of
 * launches closed by a stream synchronize; prints the median. Without a CUDA driver it prints one line
 * saying so and exits 0, so it can sit in scripts that also run on CPU-only machines.
 */
import { AdamW, TransformerLM, type TransformerConfig } from '@agent-r1/nn';
import {
  type CudaBackend,
  type FloatDType,
  type Tensor,
  createCudaBackend,
  crossEntropy,
  initBackend,
  logSoftmax,
  logprobs,
  matmul,
  randint,
  randn,
  registerBackend,
  scaledDotProductAttention,
  softmax,
  sum,
  tidy,
} from '@agent-r1/tensor';

const quick = process.argv.includes('--quick');

interface Row {
  name: string;
  ms: number;
  rate: string;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Median milliseconds per call of `step` (whose results are disposed), timed with a stream synchronize. */
function time(backend: CudaBackend, step: () => Tensor | Tensor[], inner: number, reps: number): number {
  const once = () => {
    const r = step();
    for (const t of Array.isArray(r) ? r : [r]) t.dispose();
  };
  once();
  backend.synchronize();
  const samples: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    for (let i = 0; i < inner; i++) once();
    backend.synchronize();
    samples.push((performance.now() - t0) / inner);
  }
  return median(samples);
}

async function main(): Promise<void> {
  let backend: CudaBackend;
  try {
    backend = (await initBackend('cuda')) as CudaBackend;
  } catch (e) {
    console.log(
      `bench:cuda: no CUDA driver or NVRTC, nothing measured (${(e as Error).message.split(' Tried:')[0]})`,
    );
    return;
  }
  const d = backend.device;
  console.log(
    `device ${d.name} (${d.arch}, ${d.multiprocessors} SMs, ${(d.totalBytes / 2 ** 30).toFixed(0)} GiB), driver ${d.driverVersion}, NVRTC ${d.nvrtcVersion}, cuBLAS ${d.libcublas ?? 'not found'}, ${new Date().toISOString()}`,
  );
  const reps = quick ? 3 : 7;
  const rows: Row[] = [];
  const device = 'cuda';

  // Matmul through each implementation the backend has: its own tiled kernel, and cuBLAS in plain FP32
  // and on TF32 tensor cores where libcublas is found (each a backend of its own, with its own stream).
  const impls: [string, CudaBackend][] = [];
  registerBackend('cuda-kernels', () => createCudaBackend({ name: 'cuda-kernels', matmul: 'kernels' }));
  impls.push(['kernels', (await initBackend('cuda-kernels')) as CudaBackend]);
  if (d.libcublas) {
    impls.push(['cuBLAS', backend]);
    registerBackend('cuda-tf32', () => createCudaBackend({ name: 'cuda-tf32', tf32: true }));
    impls.push(['cuBLAS TF32', (await initBackend('cuda-tf32')) as CudaBackend]);
  } else console.log('no libcublas found: matmul rows for the kernels only');
  for (const n of quick ? [1024, 2048] : [1024, 2048, 4096]) {
    for (const [impl, on] of impls) {
      const a = randn([n, n], { device: on.name });
      const b = randn([n, n], { device: on.name });
      const ms = time(on, () => matmul(a, b), n >= 4096 ? 3 : 10, reps);
      rows.push({
        name: `matmul f32 ${n}³ ${impl}`,
        ms,
        rate: `${((2 * n ** 3) / ms / 1e9).toFixed(2)} TFLOP/s`,
      });
      // Through a transposed view (x·Wᵀ, as a linear layer does): no copy either way.
      const bt = b.transpose(0, 1);
      const msT = time(on, () => matmul(a, bt), n >= 4096 ? 3 : 10, reps);
      rows.push({
        name: `matmul f32 ${n}³ ${impl} (B transposed)`,
        ms: msT,
        rate: `${((2 * n ** 3) / msT / 1e9).toFixed(2)} TFLOP/s`,
      });
      a.dispose();
      b.dispose();
    }
    // Half storage: the tiled kernel (float accumulators, no tensor cores) and cuBLAS GemmEx (float32
    // compute, tensor cores); TF32 does not apply to half operands.
    for (const [impl, on] of impls.filter(([impl]) => impl !== 'cuBLAS TF32'))
      for (const dtype of ['bfloat16', 'float16'] as const) {
        const a = randn([n, n], { device: on.name, dtype });
        const b = randn([n, n], { device: on.name, dtype });
        const ms = time(on, () => matmul(a, b), n >= 4096 ? 3 : 10, reps);
        rows.push({
          name: `matmul ${dtype} ${n}³ ${impl}`,
          ms,
          rate: `${((2 * n ** 3) / ms / 1e9).toFixed(2)} TFLOP/s`,
        });
        a.dispose();
        b.dispose();
      }
  }

  const [B, H, T, D] = quick ? [2, 8, 512, 64] : [4, 16, 1024, 64];
  // Causal: half of the 4·B·H·T²·D multiply-adds of QKᵀ and PV are computed.
  const fwdFlops = (4 * B * H * T * T * D) / 2;
  // bfloat16 tiles are converted to float as they load: half the bytes read, the same float arithmetic.
  for (const dtype of ['float32', 'bfloat16'] as const) {
    const q = randn([B, H, T, D], { device, dtype });
    const k = randn([B, H, T, D], { device, dtype });
    const v = randn([B, H, T, D], { device, dtype });
    const msAttn = time(backend, () => scaledDotProductAttention(q, k, v, { causal: true }), 10, reps);
    rows.push({
      name: `attention fwd causal ${dtype} [${B},${H},${T},${D}]`,
      ms: msAttn,
      rate: `${(fwdFlops / msAttn / 1e9).toFixed(2)} TFLOP/s`,
    });
    const [qg, kg, vg] = [q, k, v].map((t) => {
      const leaf = t.detach();
      leaf.requiresGrad = true;
      return leaf;
    });
    const msBoth = time(
      backend,
      () => {
        const out = scaledDotProductAttention(qg, kg, vg, { causal: true });
        tidy(() => sum(out).backward());
        // Dropping the gradients disposes them (the kernels that produced them are already queued).
        for (const t of [qg, kg, vg]) t.setGrad(null);
        return out;
      },
      5,
      reps,
    );
    // Backward recomputes QKᵀ and adds dV, dP, dQ, dK products: 2.5× the forward's work (FlashAttention-2 count).
    rows.push({
      name: `attention fwd+bwd causal ${dtype}`,
      ms: msBoth,
      rate: `${((3.5 * fwdFlops) / msBoth / 1e9).toFixed(2)} TFLOP/s`,
    });
    for (const t of [q, k, v, qg, kg, vg]) t.dispose();
  }

  const [rowsN, width] = quick ? [4096, 4096] : [8192, 8192];
  const x = randn([rowsN, width], { device });
  const bytes = 2 * 4 * rowsN * width;
  const msSoft = time(backend, () => softmax(x, -1), 20, reps);
  rows.push({
    name: `softmax [${rowsN},${width}]`,
    ms: msSoft,
    rate: `${(bytes / msSoft / 1e6).toFixed(0)} GB/s`,
  });
  const msLog = time(backend, () => logSoftmax(x, -1), 20, reps);
  rows.push({
    name: `log_softmax [${rowsN},${width}]`,
    ms: msLog,
    rate: `${(bytes / msLog / 1e6).toFixed(0)} GB/s`,
  });
  x.dispose();
  const [N, V] = quick ? [2048, 32000] : [8192, 32000];
  const logits = randn([N, V], { device });
  const targets = randint(0, V, [N], { device, dtype: 'int32' });
  const msLp = time(backend, () => logprobs(logits, targets), 20, reps);
  // Reads the logits once (the row max and the sum of exponentials are fused into one pass each).
  rows.push({
    name: `logprobs [${N},${V}]`,
    ms: msLp,
    rate: `${((4 * N * V) / msLp / 1e6).toFixed(0)} GB/s (logits read once)`,
  });

  // A training step of a policy (forward, cross-entropy, backward, AdamW): the multi-hop preset's policy,
  // and a GPT-2-small-sized model in float32 and in bfloat16 (float32 master weights in the optimizer).
  const policies: [string, TransformerConfig, number, number, FloatDType][] = [
    [
      'multihop policy',
      { vocabSize: 3000, dModel: 64, layers: 3, heads: 4, kvHeads: 2, maxLength: 512, copyHead: true },
      16,
      256,
      'float32',
    ],
    [
      '768d×12 LM',
      { vocabSize: 32000, dModel: 768, layers: 12, heads: 12, maxLength: 1024 },
      8,
      512,
      'float32',
    ],
    [
      '768d×12 LM',
      { vocabSize: 32000, dModel: 768, layers: 12, heads: 12, maxLength: 1024 },
      8,
      512,
      'bfloat16',
    ],
  ];
  for (const [label, config, batch, length, dtype] of quick ? policies.slice(0, 2) : policies) {
    const model = new TransformerLM({ ...config, device, dtype });
    const opt = new AdamW(model.parameters(), { lr: 1e-4 });
    const ids = randint(0, config.vocabSize, [batch, length + 1], { device, dtype: 'int32' });
    const inputs = ids.slice(1, 0, length);
    const labels = ids.slice(1, 1);
    const step = () =>
      tidy(() => {
        crossEntropy(model.forward(inputs).logits, labels).backward();
        opt.step();
        opt.zeroGrad();
        return [];
      });
    const ms = time(backend, step, 3, reps);
    rows.push({
      name: `train step ${label} ${dtype} [${batch}×${length}]`,
      ms,
      rate: `${((batch * length) / ms / 1e3).toFixed(1)}k tokens/s`,
    });
    opt.dispose();
    model.dispose();
    ids.dispose();
  }

  const width0 = Math.max(...rows.map((r) => r.name.length));
  for (const r of rows) console.log(`${r.name.padEnd(width0)}  ${r.ms.toFixed(3).padStart(9)} ms  ${r.rate}`);
  console.log(
    `kernels compiled ${backend.compileStats.compiled}, from disk cache ${backend.compileStats.fromDisk}`,
  );
}

await main();
