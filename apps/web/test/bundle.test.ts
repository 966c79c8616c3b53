/**
 * The page's bundle: Vite builds it (the agent from @agent-r1/agent/browser, the tensor backends, nn), and
 * no import of a Node module is left in the JavaScript it emits. Node built-ins that Vite had to replace with
 * its empty browser stub are listed: they may come only from code the page bundles without running (nn's
 * file helpers, tensor's CUDA backend and Node's WebGPU loader), never from the agent package or the page.
 * The bundle's size is printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildPage, describeBundle } from '../scripts/site.js';

const out = mkdtempSync(join(tmpdir(), 'agent-r1-web-bundle-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/**
 * Where Node-only code may sit, bundled but never run by the page: nn (its file helpers: checkpoint
 * folders, safetensors and tokenizer files, Hugging Face folders), tensor's CUDA backend, and the Node-only
 * packages they load (koffi for CUDA, webgpu for Dawn). The agent and the page are not among them.
 */
const NODE_ONLY = [
  /^packages\/nn\/src\//,
  /^packages\/tensor\/src\/backend\/cuda\//,
  /^node_modules\/(koffi|webgpu)\//,
];

describe('the web page bundle', () => {
  test('has no Node import, and the agent and the page bundle no Node module', async () => {
    const report = await buildPage(out);
    console.log(describeBundle(report));
    for (const f of report.files)
      console.log(`  ${f.file}: ${f.bytes} bytes (${f.gzipBytes} gzipped), ${f.loaded}`);
    expect(report.nodeImports).toEqual([]);
    const stubs = report.stubbed.flatMap((s) => s.importers.map((file) => ({ file, module: s.module })));
    console.log(
      `Node built-ins stubbed for the browser:\n${stubs.map((s) => `  ${s.file} → ${s.module}`).join('\n')}`,
    );
    const unexpected = stubs.filter((s) => !NODE_ONLY.some((re) => re.test(s.file)));
    expect(unexpected).toEqual([]);
    // The page itself is a JavaScript entry and its stylesheet, loaded up front.
    expect(report.files.some((f) => f.loaded === 'up front' && f.file.endsWith('.js'))).toBe(true);
    expect(report.upFront.bytes).toBeGreaterThan(0);
  }, 60_000);
});
