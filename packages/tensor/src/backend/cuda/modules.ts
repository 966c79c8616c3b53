/**
 * Compiled kernels, cached twice: in memory for this process and on disk across processes, keyed by the
 * SHA-256 of (source, GPU architecture, NVRTC version, options), so a new driver, GPU or generator never
 * picks up a stale binary. The disk cache lives in $AGENT_R1_CACHE/cuda, else $XDG_CACHE_HOME/agent-r1/cuda,
 * else ~/.cache/agent-r1/cuda; AGENT_R1_CACHE=off disables it. Writes go through a temporary file and a
 * rename, so concurrent processes never read half a file.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KernelSource } from './kernels/common.js';

export function cacheDir(env: Record<string, string | undefined> = process.env): string | null {
  const root = env.AGENT_R1_CACHE;
  if (root === 'off') return null;
  if (root) return join(root, 'cuda');
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg || join(homedir(), '.cache'), 'agent-r1', 'cuda');
}

export function cacheKey(source: string, arch: string, compiler: string, options: readonly string[]): string {
  return createHash('sha256')
    .update([source, arch, compiler, ...options].join('\0'))
    .digest('hex');
}

export type Compile = (source: string, name: string, arch: string) => Uint8Array;

export class ImageCache {
  private readonly memory = new Map<string, Uint8Array>();
  /** Counts, for tests and for the benchmark's report. */
  readonly stats = { compiled: 0, fromDisk: 0, fromMemory: 0 };

  constructor(
    private readonly compile: Compile,
    private readonly arch: string,
    private readonly compiler: string,
    private readonly dir: string | null,
    private readonly options: readonly string[] = [],
  ) {}

  image(kernel: KernelSource): Uint8Array {
    const key = cacheKey(kernel.source, this.arch, this.compiler, this.options);
    const hit = this.memory.get(key);
    if (hit) {
      this.stats.fromMemory++;
      return hit;
    }
    const file = this.dir ? join(this.dir, `${kernel.name}-${key.slice(0, 16)}.cubin`) : null;
    let image: Uint8Array | null = null;
    if (file) {
      try {
        image = new Uint8Array(readFileSync(file));
        this.stats.fromDisk++;
      } catch {
        image = null;
      }
    }
    if (!image) {
      image = this.compile(kernel.source, kernel.name, this.arch);
      this.stats.compiled++;
      if (file && this.dir) this.store(file, image);
    }
    this.memory.set(key, image);
    return image;
  }

  private store(file: string, image: Uint8Array): void {
    try {
      mkdirSync(this.dir as string, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, image);
      renameSync(tmp, file);
    } catch {
      // A read-only or full disk only costs a recompile next time.
    }
  }
}
