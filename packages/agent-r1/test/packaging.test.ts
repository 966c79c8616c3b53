/**
 * The packages as users install them: `npm pack` each one, install the tarballs into a scratch project
 * outside the workspace, import them from plain Node (no TypeScript, no workspace paths), and type-check a
 * strict TypeScript consumer against the shipped declarations with skipLibCheck off.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['tensor', 'nn', 'agent-r1'];
const scratch = mkdtempSync(join(tmpdir(), 'agent-r1-pack-'));
/** The workspace's own compiler: the consumer installs nothing but the three tarballs. */
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const CHECK = `
import { tensor, tidy, memory } from '@agent-r1/tensor';
import { gradcheck } from '@agent-r1/tensor/testing';
import { Linear } from '@agent-r1/nn';
import { exactMatch } from '@agent-r1/agent';
import { SearchIndex, agentFromFiles } from '@agent-r1/agent/browser';
const x = tensor([[1, 2], [3, 4]], { dtype: 'float64' });
const g = gradcheck((a) => a.matmul(a).tanh(), [x]);
// x and the layer's weight and bias stay alive; everything else was freed.
const y = tidy(() => new Linear(2, 3).forward(tensor([[1, 2]])).shape);
const hits = SearchIndex.build([{ id: 'a', contents: 'the Nile' }]).search('nile', 1).length;
const browser = { agentFromFiles: typeof agentFromFiles, hits };
console.log(JSON.stringify({ ok: g.ok, shape: y, em: exactMatch('The Nile', ['nile']), tensors: memory().tensors, browser }));
`;

/**
 * The same program typed: the annotations fail if the declarations degrade to \`any\` or change shape. The
 * search server names node:http and the tensor declarations name WebGPU types, so the program pulls both in.
 */
const CHECK_TS = `
import { tensor, tidy, memory, type Tensor } from '@agent-r1/tensor';
import { gradcheck } from '@agent-r1/tensor/testing';
import { Linear } from '@agent-r1/nn';
import { exactMatch, startMultihopSearchServer } from '@agent-r1/agent';
const x: Tensor = tensor([[1, 2], [3, 4]], { dtype: 'float64' });
const g = gradcheck((a) => a.matmul(a).tanh(), [x]);
const ok: boolean = g.ok;
const shape: readonly number[] = tidy(() => new Linear(2, 3).forward(tensor([[1, 2]])).shape);
const em: number = exactMatch('The Nile', ['nile']);
const live: number = memory().tensors;
// @ts-expect-error a shape is numbers, not strings
const wrong: string[] = shape;
// The search server's \`server\` is node:http's Server, typed through the package's own dependencies.
type Served = Awaited<ReturnType<typeof startMultihopSearchServer>>;
const listening: Served['server']['listening'] = false;
export { ok, shape, em, live, wrong, listening };
`;

/**
 * A consumer as strict as it gets about libraries: strict, skipLibCheck off, and \`types: []\` so no ambient
 * @types package is loaded unless a shipped declaration asks for it. No \`lib\`: the target's default libraries
 * (with the DOM, which @webgpu/types builds on).
 */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    types: [],
    noEmit: true,
  },
  files: ['check.ts'],
};

/** Each package's name and the files its tarball holds, as `npm pack --json` lists them. */
const packed: { name: string; files: string[] }[] = [];

describe('packed packages', () => {
  beforeAll(() => {
    for (const name of PACKAGES) {
      const dir = join(packagesDir, name);
      if (!existsSync(join(dir, 'dist', 'index.js')))
        throw new Error(`${name}/dist is missing: run npm run build first`);
      const [info] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', scratch], dir));
      packed.push({ name: info.name, files: info.files.map((f: { path: string }) => f.path) });
    }
    const tarballs = readdirSync(scratch).filter((f) => f.endsWith('.tgz'));
    expect(tarballs).toHaveLength(3);
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
    );
    run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs.map((t) => `./${t}`)],
      scratch,
    );
  }, 180_000);

  it('install from tarballs and import in plain Node, with type declarations', () => {
    writeFileSync(join(scratch, 'check.mjs'), CHECK);
    const result = JSON.parse(run('node', ['check.mjs'], scratch));
    // The browser entry point (@agent-r1/agent/browser) is shipped and loads too.
    expect(result).toEqual({
      ok: true,
      shape: [1, 3],
      em: 1,
      tensors: 3,
      browser: { agentFromFiles: 'function', hits: 1 },
    });
    for (const file of [
      '@agent-r1/tensor/dist/index.d.ts',
      '@agent-r1/tensor/dist/testing/index.d.ts',
      '@agent-r1/nn/dist/index.d.ts',
      '@agent-r1/agent/dist/index.d.ts',
      '@agent-r1/agent/dist/browser.d.ts',
    ]) {
      expect(existsSync(join(scratch, 'node_modules', file)), file).toBe(true);
    }
    expect(existsSync(join(scratch, 'node_modules', '@agent-r1/tensor/src'))).toBe(false);
  });

  it('type-check in a strict consumer with skipLibCheck off, needing nothing the packages do not bring', () => {
    writeFileSync(join(scratch, 'check.ts'), CHECK_TS);
    writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    let out = '';
    try {
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], scratch);
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string };
      out = `${err.stdout ?? ''}${err.stderr ?? ''}` || String(e);
    }
    expect(out).toBe('');
  }, 60_000);

  it('ship no source map or map reference that points at a file outside the tarball', () => {
    const dangling: string[] = [];
    for (const { name, files } of packed) {
      const shipped = new Set(files);
      const read = (path: string) => readFileSync(join(scratch, 'node_modules', name, path), 'utf8');
      for (const path of files) {
        const dir = posix.dirname(path);
        if (path.endsWith('.map')) {
          const map = JSON.parse(read(path)) as { sources?: string[]; sourceRoot?: string };
          for (const source of map.sources ?? []) {
            const target = posix.normalize(posix.join(dir, map.sourceRoot ?? '', source));
            if (!shipped.has(target)) dangling.push(`${name}/${path} → ${target}`);
          }
        } else if (/\.(js|mjs|cjs|ts|mts|cts)$/.test(path)) {
          for (const m of read(path).matchAll(/^\/\/# sourceMappingURL=(\S+)\s*$/gm)) {
            if (m[1].startsWith('data:')) continue;
            const target = posix.normalize(posix.join(dir, m[1]));
            if (!shipped.has(target)) dangling.push(`${name}/${path} → ${target}`);
          }
        }
      }
    }
    expect(dangling.slice(0, 5), `${dangling.length} dangling references`).toEqual([]);
  });
});
