/**
 * The packages as users install them: `npm pack` each one, install the tarballs into a scratch project
 * outside the workspace, and import them from plain Node (no TypeScript, no workspace paths).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['tensor', 'nn', 'agent-r1'];
const scratch = mkdtempSync(join(tmpdir(), 'agent-r1-pack-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const CHECK = `
import { tensor, tidy, memory } from '@agent-r1/tensor';
import { gradcheck } from '@agent-r1/tensor/testing';
import { Linear } from '@agent-r1/nn';
import { exactMatch } from '@agent-r1/agent';
const x = tensor([[1, 2], [3, 4]], { dtype: 'float64' });
const g = gradcheck((a) => a.matmul(a).tanh(), [x]);
// x and the layer's weight and bias stay alive; everything else was freed.
const y = tidy(() => new Linear(2, 3).forward(tensor([[1, 2]])).shape);
console.log(JSON.stringify({ ok: g.ok, shape: y, em: exactMatch('The Nile', ['nile']), tensors: memory().tensors }));
`;

describe('packed packages', () => {
  it('install from tarballs and import in plain Node, with type declarations', () => {
    for (const name of PACKAGES) {
      const dir = join(packagesDir, name);
      if (!existsSync(join(dir, 'dist', 'index.js')))
        throw new Error(`${name}/dist is missing: run npm run build first`);
      run('npm', ['pack', '--silent', '--pack-destination', scratch], dir);
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
    writeFileSync(join(scratch, 'check.mjs'), CHECK);
    const result = JSON.parse(run('node', ['check.mjs'], scratch));
    expect(result).toEqual({ ok: true, shape: [1, 3], em: 1, tensors: 3 });
    for (const file of [
      '@agent-r1/tensor/dist/index.d.ts',
      '@agent-r1/tensor/dist/testing/index.d.ts',
      '@agent-r1/nn/dist/index.d.ts',
      '@agent-r1/agent/dist/index.d.ts',
    ]) {
      expect(existsSync(join(scratch, 'node_modules', file)), file).toBe(true);
    }
    expect(existsSync(join(scratch, 'node_modules', '@agent-r1/tensor/src'))).toBe(false);
  }, 180_000);
});
