import { describe, expect, it } from 'vitest';
import {
  type AdapterProbe,
  autoBackend,
  prepareBackend,
  probeGpuAdapter,
} from '../src/trainer/backend-setup.js';

const cpuConfig = () => ({ backend: 'auto', cpuKernels: 'typescript' as const, threads: 1 });

describe('backend=auto', () => {
  it('picks WebGPU on a GPU adapter, and the CPU without one or on a software rasteriser', () => {
    expect(autoBackend(null)).toBe('cpu');
    expect(autoBackend({ text: 'mesa llvmpipe LLVM 15.0.6, 256 bits', fallback: false })).toBe('cpu');
    expect(autoBackend({ text: 'Google SwiftShader', fallback: false })).toBe('cpu');
    expect(autoBackend({ text: 'some adapter', fallback: true })).toBe('cpu');
    expect(autoBackend({ text: 'nvidia hopper NVIDIA H200', fallback: false })).toBe('webgpu');
    expect(autoBackend({ text: 'apple metal-3 Apple M2', fallback: false })).toBe('webgpu');
  });

  it('replaces auto in the config by the backend it picked, and says why', async () => {
    const none = cpuConfig();
    expect(await prepareBackend(none, () => null)).toBe(
      'backend: cpu, TypeScript kernels (auto: no GPU adapter found)',
    );
    expect(none.backend).toBe('cpu');
    const software: AdapterProbe = { text: 'mesa llvmpipe', fallback: false };
    const soft = cpuConfig();
    expect(await prepareBackend(soft, () => software)).toBe(
      'backend: cpu, TypeScript kernels (auto: mesa llvmpipe, a software rasteriser)',
    );
    expect(soft.backend).toBe('cpu');
    const named = { ...cpuConfig(), backend: 'cpu' };
    let probed = false;
    await prepareBackend(named, () => {
      probed = true;
      return null;
    });
    expect(probed).toBe(false);
  });

  it("probes this machine's adapter in a child process, quietly", () => {
    const found = probeGpuAdapter();
    // CI's machines have no GPU: Dawn's default backend finds none, or only a software rasteriser. On a
    // machine with one, AGENT_R1_EXPECT_GPU=1 asks for it to be found.
    if (found !== null) {
      expect(typeof found.text).toBe('string');
      expect(typeof found.fallback).toBe('boolean');
    }
    expect(autoBackend(found)).toBe(process.env.AGENT_R1_EXPECT_GPU === '1' ? 'webgpu' : 'cpu');
  }, 60_000);
});
