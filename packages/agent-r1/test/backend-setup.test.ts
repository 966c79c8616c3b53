import { getBackend, registerBackend } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import {
  type AdapterProbe,
  isGpuAdapter,
  prepareBackend,
  probeGpuAdapter,
} from '../src/trainer/backend-setup.js';

const config = (backend: string) => ({ backend, cpuKernels: 'typescript' as const, threads: 1 });
const gpu: AdapterProbe = { text: 'nvidia hopper NVIDIA H200', fallback: false };

describe('prepareBackend', () => {
  it('tells a GPU adapter from none, a fallback adapter or a software rasteriser', () => {
    expect(isGpuAdapter(null)).toBe(false);
    expect(isGpuAdapter({ text: 'mesa llvmpipe LLVM 15.0.6, 256 bits', fallback: false })).toBe(false);
    expect(isGpuAdapter({ text: 'Google SwiftShader', fallback: false })).toBe(false);
    expect(isGpuAdapter({ text: 'some adapter', fallback: true })).toBe(false);
    expect(isGpuAdapter(gpu)).toBe(true);
    expect(isGpuAdapter({ text: 'apple metal-3 Apple M2', fallback: false })).toBe(true);
  });

  it("probes this machine's WebGPU adapter in a child process, quietly", () => {
    const found = probeGpuAdapter();
    if (found !== null) {
      expect(typeof found.text).toBe('string');
      expect(typeof found.fallback).toBe('boolean');
    }
    // CI's machines have no GPU; on one with a GPU, AGENT_R1_EXPECT_GPU=1 asks for it to be found.
    expect(isGpuAdapter(found)).toBe(process.env.AGENT_R1_EXPECT_GPU === '1');
  }, 60_000);

  it('auto without CUDA or a GPU adapter: the CPU', async () => {
    const none = config('auto');
    expect(await prepareBackend(none, () => null)).toBe(
      'backend: cpu, TypeScript kernels (auto: no GPU found)',
    );
    expect(none.backend).toBe('cpu');
    const soft = config('auto');
    await prepareBackend(soft, () => ({ text: 'mesa llvmpipe', fallback: false }));
    expect(soft.backend).toBe('cpu');
    let probed = false;
    await prepareBackend(config('cpu'), () => {
      probed = true;
      return null;
    });
    expect(probed).toBe(false);
  });

  it('auto without CUDA but with a GPU adapter: WebGPU, naming the adapter', async () => {
    // A stand-in registered as `webgpu` (this file's module registry only), so that no real adapter is used.
    registerBackend('webgpu', getBackend('cpu'));
    const withGpu = config('auto');
    expect(await prepareBackend(withGpu, () => gpu)).toBe(
      'backend: webgpu (auto: no CUDA driver; the WebGPU adapter nvidia hopper NVIDIA H200)',
    );
    expect(withGpu.backend).toBe('webgpu');
  });

  it('auto picks CUDA where it loads', async () => {
    // A stand-in registered as `cuda` (this file's module registry only): what a machine with the driver has.
    registerBackend('cuda', getBackend('cpu'));
    const c = config('auto');
    expect(await prepareBackend(c, () => gpu)).toBe('backend: cuda (auto: a CUDA device)');
    expect(c.backend).toBe('cuda');
  });
});
