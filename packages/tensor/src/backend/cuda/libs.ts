/**
 * Finding the NVIDIA libraries: the driver (libcuda), NVRTC (libnvrtc) and, optionally, cuBLAS. Search
 * order: an explicit path variable (AGENT_R1_LIBCUDA, AGENT_R1_LIBNVRTC, AGENT_R1_LIBCUBLAS), then
 * LD_LIBRARY_PATH, CUDA_PATH / CUDA_HOME, the usual system folders, the CUDA toolkits under /usr/local,
 * and NVIDIA's Python wheels (site-packages/nvidia/cuda_nvrtc/lib, nvidia/cu13/lib, …) in the virtualenv,
 * conda env, user and system site-packages; last the bare soname, left to the dynamic loader's cache.
 * The driver's stub library (lib64/stubs) is never used: it loads, then fails every call.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type LibraryKind = 'cuda' | 'nvrtc' | 'cublas';

interface LibrarySpec {
  /** Human name used in errors. */
  title: string;
  variable: string;
  /** File names, most specific first; a regexp catches versioned names (libnvrtc.so.12, .so.13, …). */
  pattern: RegExp;
  sonames: string[];
  /** Subfolders of site-packages/nvidia that NVIDIA's wheels use. */
  wheelDirs: string[];
  hint: string;
}

const SPECS: Record<LibraryKind, LibrarySpec> = {
  cuda: {
    title: 'the CUDA driver library (libcuda.so)',
    variable: 'AGENT_R1_LIBCUDA',
    pattern: /^libcuda\.so(\.1)?$/,
    sonames: ['libcuda.so.1', 'libcuda.so'],
    wheelDirs: [],
    hint: 'install the NVIDIA driver (libcuda.so ships with it, not with the toolkit)',
  },
  nvrtc: {
    title: 'NVRTC, the CUDA runtime compiler (libnvrtc.so)',
    variable: 'AGENT_R1_LIBNVRTC',
    pattern: /^libnvrtc\.so(\.\d+)*$/,
    sonames: ['libnvrtc.so', 'libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2'],
    wheelDirs: ['cuda_nvrtc/lib', 'cu13/lib', 'cu12/lib'],
    hint: 'install the CUDA toolkit or `pip install nvidia-cuda-nvrtc`, or set CUDA_PATH',
  },
  cublas: {
    title: 'cuBLAS (libcublas.so)',
    variable: 'AGENT_R1_LIBCUBLAS',
    pattern: /^libcublas\.so(\.\d+)*$/,
    sonames: ['libcublas.so', 'libcublas.so.13', 'libcublas.so.12'],
    wheelDirs: ['cublas/lib', 'cu13/lib', 'cu12/lib'],
    hint: 'optional: install the CUDA toolkit or `pip install nvidia-cublas`',
  },
};

export interface SearchEnv {
  env: Record<string, string | undefined>;
  home: string;
  exists(path: string): boolean;
  list(dir: string): string[];
}

export function systemSearchEnv(): SearchEnv {
  return {
    env: process.env,
    home: homedir(),
    exists: existsSync,
    list: (dir) => {
      try {
        return readdirSync(dir);
      } catch {
        return [];
      }
    },
  };
}

function splitPath(value: string | undefined): string[] {
  return (value ?? '').split(':').filter((p) => p.length > 0);
}

/** site-packages folders that may hold NVIDIA wheels. */
function sitePackages(s: SearchEnv): string[] {
  const roots = [s.env.VIRTUAL_ENV, s.env.CONDA_PREFIX, join(s.home, '.local'), '/usr/local', '/usr'].filter(
    (r): r is string => !!r,
  );
  const dirs = [...splitPath(s.env.PYTHONPATH)];
  for (const root of roots) {
    const lib = join(root, 'lib');
    for (const py of s
      .list(lib)
      .filter((n) => /^python3(\.\d+)?$/.test(n))
      .sort()
      .reverse()) {
      dirs.push(join(lib, py, 'site-packages'), join(lib, py, 'dist-packages'));
    }
  }
  dirs.push('/usr/lib/python3/dist-packages');
  return dirs;
}

/** Folders to search, in order (without checking that they exist). */
export function searchDirs(kind: LibraryKind, s: SearchEnv): string[] {
  const spec = SPECS[kind];
  const dirs = [...splitPath(s.env.LD_LIBRARY_PATH)];
  for (const v of [s.env.CUDA_PATH, s.env.CUDA_HOME]) if (v) dirs.push(join(v, 'lib64'), join(v, 'lib'));
  dirs.push(
    '/usr/lib/x86_64-linux-gnu',
    '/usr/lib/aarch64-linux-gnu',
    '/usr/lib64',
    '/usr/lib',
    '/usr/local/nvidia/lib64',
    '/usr/lib/wsl/lib',
    '/usr/local/cuda/lib64',
  );
  for (const name of s
    .list('/usr/local')
    .filter((n) => /^cuda-\d/.test(n))
    .sort()
    .reverse())
    dirs.push(join('/usr/local', name, 'lib64'));
  for (const site of sitePackages(s)) for (const w of spec.wheelDirs) dirs.push(join(site, 'nvidia', w));
  return [...new Set(dirs.filter((d) => !/\/stubs\/?$/.test(d)))];
}

/** Candidate files, most preferred first: an explicit variable, then matches in each folder, then sonames. */
export function libraryCandidates(kind: LibraryKind, s: SearchEnv): string[] {
  const spec = SPECS[kind];
  const explicit = s.env[spec.variable];
  if (explicit) return [explicit];
  const found: string[] = [];
  for (const dir of searchDirs(kind, s)) {
    const names = s.list(dir).filter((n) => spec.pattern.test(n));
    // Prefer the unversioned link, then the highest version.
    names.sort((a, b) => a.length - b.length || b.localeCompare(a, undefined, { numeric: true }));
    for (const n of names) found.push(join(dir, n));
  }
  return [...new Set([...found, ...spec.sonames])];
}

export class LibraryNotFoundError extends Error {
  constructor(
    readonly kind: LibraryKind,
    readonly tried: { path: string; reason: string }[],
  ) {
    const spec = SPECS[kind];
    // One line, so a test runner's skip notice stays one line.
    const list = tried.map((t) => `${t.path} (${t.reason})`).join('; ');
    super(
      `cuda: could not load ${spec.title}; ${spec.hint}, or set ${spec.variable} to its path. Tried: ${list}`,
    );
    this.name = 'LibraryNotFoundError';
  }
}

/** Loads the first candidate that the dynamic loader accepts; `open` is koffi.load (or a test double). */
export function loadLibrary<L>(
  kind: LibraryKind,
  open: (path: string) => L,
  s = systemSearchEnv(),
): {
  lib: L;
  path: string;
} {
  const tried: { path: string; reason: string }[] = [];
  for (const path of libraryCandidates(kind, s)) {
    try {
      return { lib: open(path), path };
    } catch (e) {
      tried.push({ path, reason: (e as Error).message.split('\n')[0] });
    }
  }
  throw new LibraryNotFoundError(kind, tried);
}
