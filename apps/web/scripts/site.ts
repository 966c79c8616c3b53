/**
 * The demo site, built and served from Node: the page bundled by Vite, the policy checkpoint's three files
 * under `agent/`, and the multi-hop search corpus with the test questions under `data/`, as JSON (the
 * dataset is built from npm packages by the agent package, which a page cannot do). `npm run demo` and the
 * browser tests both go through here.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { builtinModules } from 'node:module';
import { extname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  AGENT_FILE,
  TOKENIZER_FILE,
  loadMultihopResources,
  policyFolder,
  readAgentDescription,
} from '@agent-r1/agent';
import { MODEL_FILE } from '@agent-r1/nn';
import { type Rolldown, build } from 'vite';

export const WEB_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The policy shipped with the repository (see the README: how it was trained). */
export const SHIPPED_POLICY = join(WEB_ROOT, 'policy');

export interface BundleFile {
  file: string;
  bytes: number;
  gzipBytes: number;
  /** Loaded by the page up front (the entry and its static imports), or only if the code asks for it. */
  loaded: 'up front' | 'on demand';
}

export interface BundleReport {
  files: BundleFile[];
  /** The bytes the page loads up front, raw and gzipped. */
  upFront: { bytes: number; gzipBytes: number };
  /** Every import of a Node built-in module (`node:fs`, `fs`) left in the emitted JavaScript. */
  nodeImports: { file: string; specifier: string }[];
  /**
   * Node built-ins Vite replaced with its empty browser stub, and the source files that import them (code
   * the page bundles but never runs, such as nn's file helpers).
   */
  stubbed: { module: string; importers: string[] }[];
}

const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]);

/** Builds the page into `outDir` with Vite; returns what the bundle holds. */
export async function buildPage(outDir: string): Promise<BundleReport> {
  const stubbed = new Map<string, Set<string>>();
  const result = await build({
    configFile: join(WEB_ROOT, 'vite.config.ts'),
    build: { outDir, emptyOutDir: true },
    logLevel: 'silent',
    plugins: [
      {
        name: 'record-browser-stubs',
        // Sees each import before Vite resolves it; a built-in is what Vite stubs for the browser.
        resolveId: {
          order: 'pre',
          handler(source, importer) {
            if (importer && isBuiltin(source)) {
              const set = stubbed.get(source) ?? new Set();
              set.add(relative(join(WEB_ROOT, '../..'), importer).split(sep).join('/'));
              stubbed.set(source, set);
            }
            return null;
          },
        },
      },
    ],
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const chunks = outputs.flatMap((o) => o.output);
  const upFrontNames = new Set<string>();
  const visit = (name: string) => {
    if (upFrontNames.has(name)) return;
    upFrontNames.add(name);
    const chunk = chunks.find((c) => c.fileName === name);
    if (chunk?.type === 'chunk') for (const i of chunk.imports) visit(i);
  };
  for (const c of chunks) if (c.type === 'chunk' && c.isEntry) visit(c.fileName);
  const files: BundleFile[] = [];
  const nodeImports: BundleReport['nodeImports'] = [];
  for (const c of chunks) {
    const body = c.type === 'chunk' ? c.code : c.source;
    const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body);
    const loaded = upFrontNames.has(c.fileName) || c.fileName.endsWith('.css') ? 'up front' : 'on demand';
    if (c.fileName.endsWith('.js') || c.fileName.endsWith('.css'))
      files.push({ file: c.fileName, bytes: bytes.length, gzipBytes: gzipSync(bytes).length, loaded });
    if (c.type === 'chunk')
      for (const specifier of [...c.imports, ...c.dynamicImports])
        if (isBuiltin(specifier)) nodeImports.push({ file: c.fileName, specifier });
  }
  const upFront = files.filter((f) => f.loaded === 'up front');
  return {
    files,
    upFront: {
      bytes: upFront.reduce((s, f) => s + f.bytes, 0),
      gzipBytes: upFront.reduce((s, f) => s + f.gzipBytes, 0),
    },
    nodeImports,
    stubbed: [...stubbed].map(([module, importers]) => ({ module, importers: [...importers].sort() })),
  };
}

/** One line: the bytes the page loads, raw and gzipped. */
export function describeBundle(report: BundleReport): string {
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
  const lazy = report.files.filter((f) => f.loaded === 'on demand');
  return (
    `bundle: ${kb(report.upFront.bytes)} loaded up front (${kb(report.upFront.gzipBytes)} gzipped)` +
    (lazy.length > 0
      ? `, ${lazy.length} chunk(s) of ${kb(lazy.reduce((s, f) => s + f.bytes, 0))} never loaded by the page`
      : '')
  );
}

/**
 * Puts the site's data next to the built page: the checkpoint files of `policy` (a policy folder, or a
 * run's checkpoint.dir holding `policy/`) under `agent/`, the corpus and test questions under `data/`.
 */
export async function writeSiteData(outDir: string, policy: string): Promise<{ policy: string }> {
  const folder = policyFolder(policy);
  const description = readAgentDescription(folder);
  if (!description)
    throw new Error(`${folder}: no ${AGENT_FILE}: the page needs a self-describing checkpoint`);
  if (description.task !== 'multihop-qa')
    throw new Error(`${folder}: a policy of task "${description.task}"; the page asks multi-hop questions`);
  for (const key of ['corpus', 'questions'])
    if (description.taskOptions[key])
      throw new Error(
        `${folder}: trained with taskOptions.${key}=${String(description.taskOptions[key])}; the page serves the built-in corpus and test split`,
      );
  await mkdir(join(outDir, 'agent'), { recursive: true });
  for (const file of [AGENT_FILE, TOKENIZER_FILE, MODEL_FILE])
    await copyFile(join(folder, file), join(outDir, 'agent', file));
  const { dataset } = loadMultihopResources();
  await mkdir(join(outDir, 'data'), { recursive: true });
  await writeFile(join(outDir, 'data', 'corpus.json'), JSON.stringify(dataset.corpus));
  await writeFile(join(outDir, 'data', 'questions.json'), JSON.stringify(dataset.questions.test));
  return { policy: folder };
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.safetensors': 'application/octet-stream',
};

export interface Site {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `dir` on `host`:`port` (0: any free port) with the headers that make the page cross-origin
 * isolated, so that the WebAssembly kernels can run on worker threads over shared memory.
 */
export async function serveSite(dir: string, host = '127.0.0.1', port = 0): Promise<Site> {
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    const file = normalize(join(dir, path.endsWith('/') ? `${path}index.html` : path));
    const headers = {
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
      'cache-control': 'no-cache',
    };
    if (!file.startsWith(normalize(dir + sep))) {
      response.writeHead(403, headers).end();
      return;
    }
    try {
      const body = await readFile(file);
      response
        .writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
        .end(body);
    } catch {
      response.writeHead(404, headers).end('not found');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
