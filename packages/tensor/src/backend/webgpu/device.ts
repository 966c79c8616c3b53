/// <reference types="@webgpu/types" preserve="true" />
/**
 * Getting a GPUDevice: navigator.gpu in a browser; in Node the `webgpu` package (Dawn), imported lazily so
 * CPU-only users never load it. A real GPU adapter (Vulkan/Metal/D3D12) is preferred; without one, Dawn's
 * OpenGL ES backend on Mesa's llvmpipe (compatibility mode) runs the same WGSL on the CPU.
 */

export interface WebGpuOptions {
  /** A device you already hold (e.g. shared with a renderer); the backend then does no adapter selection. */
  device?: GPUDevice;
  powerPreference?: GPUPowerPreference;
  /**
   * Kernel variants: 'auto' picks by adapter (CPU rasterisers get kernels that skip workgroup-memory tiling);
   * 'hardware' or 'software' forces one (e.g. to test both on one machine).
   */
  kernels?: 'auto' | 'hardware' | 'software';
  /** Node only: force one Dawn backend ('vulkan', 'opengles', 'metal', 'd3d12'); default tries the GPU first. */
  dawnBackend?: string;
}

export interface GpuContext {
  device: GPUDevice;
  /** Human-readable adapter description, for reports and benchmark tables. */
  description: string;
  compatibility: boolean;
  /** A CPU rasteriser (llvmpipe, SwiftShader): kernels that rely on fast workgroup memory pick other variants. */
  software: boolean;
  features: ReadonlySet<string>;
}

/** The Dawn GPU objects must outlive every device they made: if one is collected Dawn aborts the process. */
const keepAlive: unknown[] = [];

const INSTALL_HINT =
  'in Node install the optional dependency `webgpu` (npm i webgpu) and, on a machine without a GPU, ' +
  "Mesa's llvmpipe: apt-get install mesa-vulkan-drivers libegl1 libegl-mesa0 libgles2 libgl1-mesa-dri, " +
  'with EGL_PLATFORM=surfaceless (scripts/webgpu-env.sh does both)';

type DawnCreate = (flags: string[]) => GPU;

async function loadDawn(): Promise<DawnCreate> {
  try {
    // A variable specifier keeps bundlers and the type checker from resolving the optional package eagerly.
    const name = 'webgpu';
    const mod = (await import(name)) as { create: DawnCreate };
    return mod.create;
  } catch (err) {
    throw new Error(`webgpu: cannot load the 'webgpu' package (${(err as Error).message}); ${INSTALL_HINT}`);
  }
}

interface Candidate {
  gpu: GPU;
  adapter: GPUAdapter;
  compatibility: boolean;
}

type InfoLike = { vendor?: string; architecture?: string; device?: string; description?: string } | undefined;

/** Whether an adapter is a software rasteriser (we keep looking for real hardware if so). */
export function isSoftwareInfo(info: InfoLike, fallback = false): boolean {
  const text = `${info?.vendor} ${info?.architecture} ${info?.device} ${info?.description}`.toLowerCase();
  return /llvmpipe|lavapipe|swiftshader|software/.test(text) || fallback;
}

function isSoftware(adapter: GPUAdapter): boolean {
  return isSoftwareInfo(
    adapter.info,
    (adapter.info as { isFallbackAdapter?: boolean })?.isFallbackAdapter === true,
  );
}

async function nodeAdapter(options: WebGpuOptions): Promise<Candidate | null> {
  const create = await loadDawn();
  const tried: Candidate[] = [];
  const attempts: { flags: string[]; compatibility: boolean }[] = options.dawnBackend
    ? [
        {
          flags: [`backend=${options.dawnBackend}`],
          compatibility: options.dawnBackend === 'opengles' || options.dawnBackend === 'opengl',
        },
      ]
    : [
        { flags: [], compatibility: false },
        { flags: ['backend=opengles'], compatibility: true },
      ];
  for (const { flags, compatibility } of attempts) {
    const gpu = create(flags);
    keepAlive.push(gpu);
    const adapter = await gpu.requestAdapter({
      powerPreference: options.powerPreference ?? 'high-performance',
      ...(compatibility ? { featureLevel: 'compatibility' } : {}),
    } as GPURequestAdapterOptions);
    if (!adapter) continue;
    const candidate = { gpu, adapter, compatibility };
    if (!isSoftware(adapter)) return candidate;
    tried.push(candidate);
  }
  return tried[0] ?? null;
}

async function browserAdapter(options: WebGpuOptions): Promise<Candidate | null> {
  const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) return null;
  const adapter = await gpu.requestAdapter({
    powerPreference: options.powerPreference ?? 'high-performance',
  });
  return adapter ? { gpu, adapter, compatibility: false } : null;
}

/** Limits worth raising above the (compatibility-mode) defaults: ask for everything the adapter offers. */
function limitsOf(adapter: GPUAdapter): Record<string, number> {
  const limits: Record<string, number> = {};
  const offered = adapter.limits as unknown as Record<string, number>;
  for (const key in offered) {
    const value = offered[key];
    if (typeof value === 'number' && key.startsWith('max')) limits[key] = value;
  }
  return limits;
}

const OPTIONAL_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query'] as const;

export async function requestGpu(options: WebGpuOptions = {}): Promise<GpuContext> {
  const ctx = await selectGpu(options);
  if (options.kernels === 'hardware') ctx.software = false;
  if (options.kernels === 'software') ctx.software = true;
  return ctx;
}

async function selectGpu(options: WebGpuOptions): Promise<GpuContext> {
  if (options.device) {
    return {
      device: options.device,
      description: 'user-supplied device',
      compatibility: !options.device.features.has('core-features-and-limits'),
      software: isSoftwareInfo((options.device as { adapterInfo?: InfoLike }).adapterInfo),
      features: new Set(options.device.features as unknown as Iterable<string>),
    };
  }
  const isNode = typeof process !== 'undefined' && !!process.versions?.node;
  const candidate = isNode ? await nodeAdapter(options) : await browserAdapter(options);
  if (!candidate) {
    const env = isNode ? ` (EGL_PLATFORM=${process.env.EGL_PLATFORM ?? 'unset'})` : '';
    throw new Error(
      `webgpu: no GPU adapter is available${env}; ${isNode ? INSTALL_HINT : 'this browser has no navigator.gpu'}`,
    );
  }
  const { adapter } = candidate;
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f)) as GPUFeatureName[];
  const device = await adapter.requestDevice({ requiredLimits: limitsOf(adapter), requiredFeatures });
  keepAlive.push(device);
  const info = adapter.info;
  const description = [info?.vendor, info?.architecture, info?.device, info?.description]
    .filter((s) => s?.trim())
    .join(' ')
    .trim();
  return {
    device,
    description: `${description || 'unknown adapter'}${candidate.compatibility ? ' (compatibility mode)' : ''}`,
    compatibility: candidate.compatibility,
    software: isSoftware(adapter),
    features: new Set(requiredFeatures as string[]),
  };
}
