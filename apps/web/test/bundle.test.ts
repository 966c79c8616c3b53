/**
 * The page's bundle: Vite builds it (the agent from @agent-r1/agent/browser, the tensor backends, nn), and
 * no import of a Node module is left in the JavaScript it emits. Node built-ins that Vite had to replace with
 * its empty browser stub are listed: they may come only from the code the page bundles without running (nn's
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

/** Files that hold Node-only code which the page bundles but never calls. */
const NODE_ONLY = [
  /^packages\/nn\/src\/io\//, // checkpoint folders, atomic writes, safetensors files
  /^packages\/nn\/src\/tokenizer\/io\.ts$/, // Tokenizer.load / save
  /^packages\/nn\/src\/hf\//, // Hugging Face folders
  /^packages\/tensor\/src\/backend\/cuda\//, // the CUDA backend (initBackend('cuda') only)
  /^node_modules\/(koffi|webgpu)\//, // CUDA's FFI and Node's WebGPU (Dawn)
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
