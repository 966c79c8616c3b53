/// <reference types="@webgpu/types" preserve="true" />
/**
 * Batching work for the device. Kernels record dispatches into one command encoder (one labelled compute pass
 * each, so Dawn's messages name the kernel); the batch is submitted when it grows large or when someone needs
 * results (read, sync, a write to a buffer the batch uses). Each dispatch's parameters (shapes, strides,
 * scalars) go to a 256-byte slot of one uniform buffer, uploaded just before the submit.
 *
 * Errors: every batch runs inside error scopes (validation, out-of-memory, internal); their outcome is checked
 * asynchronously and thrown, naming the batch's kernels, from the next read/sync/kernel call.
 */
import { type BufferPool, type GpuStorage, USAGE } from './buffers.js';

const SLOT_BYTES = 256;
const SLOT_WORDS = SLOT_BYTES / 4;
const ARENA_SLOTS = 256;
const MAX_DISPATCHES = 128;
const MAX_GROUPS = 65535;

export interface Binding {
  storage: GpuStorage;
  /** True for the outputs; a read-only binding of a buffer also written in the same dispatch is copied first. */
  write?: boolean;
}

/** Parameter words for one dispatch: u32, i32 and f32 values packed into the uniform slot. */
export class Params {
  readonly words = new Uint32Array(SLOT_WORDS);
  private readonly f32 = new Float32Array(this.words.buffer);
  private readonly i32 = new Int32Array(this.words.buffer);
  length = 0;

  u32(...values: number[]): this {
    for (const v of values) this.words[this.next()] = v >>> 0;
    return this;
  }
  i32s(...values: readonly number[]): this {
    for (const v of values) this.i32[this.next()] = v;
    return this;
  }
  f32s(...values: number[]): this {
    for (const v of values) this.f32[this.next()] = v;
    return this;
  }
  private next(): number {
    if (this.length >= SLOT_WORDS) throw new Error(`webgpu: kernel parameters exceed ${SLOT_WORDS} words`);
    return this.length++;
  }
}

/** A 1-D workgroup count spread over x and y (each at most 65535); shaders rebuild the linear id. */
export function grid(groups: number): [number, number] {
  if (groups <= MAX_GROUPS) return [Math.max(1, groups), 1];
  const y = Math.ceil(groups / MAX_GROUPS);
  return [Math.ceil(groups / y), y];
}

export class GpuQueue {
  private encoder: GPUCommandEncoder | null = null;
  private readonly used = new Set<GPUBuffer>();
  private deferred: GpuStorage[] = [];
  private names: string[] = [];
  private readonly arena: GPUBuffer;
  private readonly arenaData = new Uint32Array(ARENA_SLOTS * SLOT_WORDS);
  private slots = 0;
  private scopesOpen = false;
  private checks: Promise<void>[] = [];
  private error: Error | null = null;
  private lost = false;
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  /**
   * Kernels that validate data (gather's indices, logprobs' targets) cannot throw from the GPU: they write a
   * code into this buffer, checked on the next read/sync. Codes name the dispatch in `validating`.
   */
  readonly status: GpuStorage;
  private readonly validating = new Map<number, string>();
  private nextCode = 1;
  /** Counters for tests and benchmarks. */
  readonly stats = { dispatches: 0, submits: 0, pipelines: 0 };

  constructor(
    readonly device: GPUDevice,
    readonly pool: BufferPool,
    /** Whether the adapter is a CPU rasteriser (kernels may choose variants for it). */
    readonly software = false,
    /** Whether the device has the `subgroups` feature (row reductions then use subgroup operations). */
    readonly subgroups = false,
  ) {
    this.arena = device.createBuffer({
      size: ARENA_SLOTS * SLOT_BYTES,
      usage: USAGE.UNIFORM | USAGE.COPY_DST,
      label: 'kernel parameters',
    });
    this.status = pool.acquire('int32', 4);
    device.queue.writeBuffer(this.status.buffer, 0, new Uint32Array(4));
    device.lost.then((info) => {
      this.lost = true;
      this.error ??= new Error(`webgpu: device lost (${info.reason}): ${info.message}`);
    });
    device.addEventListener?.('uncapturederror', (event) => {
      const e = (event as GPUUncapturedErrorEvent).error;
      this.error ??= new Error(`webgpu: uncaptured ${e.constructor.name}: ${e.message}`);
    });
  }

  /** Throws an error Dawn reported earlier, so it is not lost when no one reads. */
  throwIfFailed(): void {
    const error = this.error;
    if (!error) return;
    // A lost device stays lost; other errors are reported once, and the queue goes on.
    if (!this.lost) this.error = null;
    throw error;
  }

  /** A compute pipeline, compiled once per key (kernel, dtypes, rank, flags — never shapes). */
  pipeline(key: string, source: () => string): GPUComputePipeline {
    let p = this.pipelines.get(key);
    if (!p) {
      this.openScopes();
      const module = this.device.createShaderModule({ code: source(), label: key });
      p = this.device.createComputePipeline({
        layout: 'auto',
        compute: { module, entryPoint: 'main' },
        label: key,
      });
      this.pipelines.set(key, p);
      this.stats.pipelines++;
    }
    return p;
  }

  /** Records one dispatch. `label` names the kernel and shapes in error messages. */
  dispatch(
    label: string,
    pipeline: GPUComputePipeline,
    bindings: Binding[],
    params: Params,
    groups: [number, number?, number?],
  ): void {
    this.throwIfFailed();
    if (this.slots >= ARENA_SLOTS || this.names.length >= MAX_DISPATCHES) this.flush();
    const encoder = this.begin();
    const slot = this.slots++;
    this.arenaData.set(params.words, slot * SLOT_WORDS);
    const written = new Set(bindings.filter((b) => b.write).map((b) => b.storage.buffer));
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: this.arena, offset: slot * SLOT_BYTES, size: SLOT_BYTES } },
    ];
    bindings.forEach((b, i) => {
      if (b.storage.freed) throw new Error(`webgpu ${label}: input ${i} was already freed`);
      let buffer = b.storage.buffer;
      // WebGPU forbids binding one buffer as both writable and read-only in a dispatch: read a copy.
      if (!b.write && written.has(buffer)) {
        const copy = this.pool.acquire(b.storage.dtype, b.storage.size);
        encoder.copyBufferToBuffer(buffer, 0, copy.buffer, 0, b.storage.capacity);
        this.deferred.push(copy);
        buffer = copy.buffer;
      }
      this.used.add(buffer);
      entries.push({ binding: i + 1, resource: { buffer } });
    });
    const bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries, label });
    const pass = encoder.beginComputePass({ label });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(groups[0], groups[1] ?? 1, groups[2] ?? 1);
    pass.end();
    this.names.push(label);
    this.stats.dispatches++;
  }

  /** A code for a validating dispatch to report with, and what to say if it does. */
  validationCode(message: string): number {
    const code = this.nextCode++;
    this.validating.set(code, message);
    return code;
  }

  /** Records a buffer-to-buffer copy (e.g. into a staging buffer for readback). */
  copy(src: GPUBuffer, dst: GPUBuffer, bytes: number): void {
    this.begin().copyBufferToBuffer(src, 0, dst, 0, bytes);
    this.used.add(src);
  }

  /** Whether queued, unsubmitted work touches this buffer. */
  isPending(buffer: GPUBuffer): boolean {
    return this.used.has(buffer);
  }

  /** Frees a storage now, or after the batch that reads it is submitted. */
  release(storage: GpuStorage): void {
    if (storage.freed) return;
    storage.freed = true;
    if (this.used.has(storage.buffer)) this.deferred.push(storage);
    else this.pool.release(storage);
  }

  /** Opens the error scopes of the current batch (allocations and writes fall in it too). */
  openScopes(): void {
    if (this.scopesOpen) return;
    this.device.pushErrorScope('internal');
    this.device.pushErrorScope('out-of-memory');
    this.device.pushErrorScope('validation');
    this.scopesOpen = true;
  }

  private begin(): GPUCommandEncoder {
    this.openScopes();
    this.encoder ??= this.device.createCommandEncoder();
    return this.encoder;
  }

  /** Submits the batch, recycles the buffers it freed, and closes its error scopes. */
  flush(): void {
    if (this.encoder) {
      if (this.slots > 0)
        this.device.queue.writeBuffer(this.arena, 0, this.arenaData, 0, this.slots * SLOT_WORDS);
      this.device.queue.submit([this.encoder.finish()]);
      this.stats.submits++;
      this.encoder = null;
    }
    for (const s of this.deferred) this.pool.release(s);
    this.deferred = [];
    this.used.clear();
    this.slots = 0;
    if (this.scopesOpen) {
      const names = this.names;
      const scopes = [this.device.popErrorScope(), this.device.popErrorScope(), this.device.popErrorScope()];
      this.scopesOpen = false;
      this.checks.push(
        Promise.all(scopes).then((errors) => {
          const e = errors.find((x) => x);
          if (e && !this.error) this.error = new Error(describe(e, names));
        }),
      );
    }
    this.names = [];
  }

  /** Submits pending work and throws any error Dawn reported for it. */
  async check(): Promise<void> {
    const validating = this.validating.size > 0 ? new Map(this.validating) : null;
    let staging: GPUBuffer | null = null;
    if (validating) {
      this.validating.clear();
      staging = this.device.createBuffer({
        size: 16,
        usage: USAGE.MAP_READ | USAGE.COPY_DST,
        label: 'status',
      });
      this.copy(this.status.buffer, staging, 16);
    }
    this.flush();
    const checks = this.checks;
    this.checks = [];
    await Promise.all(checks);
    this.throwIfFailed();
    if (validating && staging) {
      await staging.mapAsync(1);
      const [code, value] = new Int32Array(staging.getMappedRange().slice(0));
      staging.destroy();
      if (code !== 0) {
        this.device.queue.writeBuffer(this.status.buffer, 0, new Uint32Array(4));
        const message = validating.get(code) ?? `kernel #${code}`;
        throw new Error(`webgpu ${message}: got ${value}`);
      }
    }
  }

  async sync(): Promise<void> {
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    await this.check();
  }
}

function describe(error: GPUError, names: string[]): string {
  const kind = error.constructor?.name ?? 'GPUError';
  const unique = [...new Set(names)];
  const which = unique.length
    ? ` in a batch running ${unique.slice(0, 8).join(', ')}${unique.length > 8 ? ', …' : ''}`
    : '';
  return `webgpu: ${kind}${which}: ${error.message}`;
}
