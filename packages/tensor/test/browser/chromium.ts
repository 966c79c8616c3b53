/**
 * Runs a page module (./page.ts, ./webgpu-page.ts) in headless Chromium: bundles it for the browser with
 * esbuild (in memory; code splitting keeps the CUDA runtime's Node imports in a chunk the page never
 * loads), serves it on loopback with the headers that make the page cross-origin isolated (so
 * SharedArrayBuffer and threads exist), and calls the global function the page exposes through
 * puppeteer-core.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import puppeteer from 'puppeteer-core';
import type { BrowserReport } from './page.js';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The browser to drive: $CHROMIUM_PATH, else the first of the usual install paths that exists. */
export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH=${fromEnv}: no such file`);
    return fromEnv;
  }
  return CANDIDATES.find((path) => existsSync(path));
}

/**
 * The Chromium a browser test drives, and whether the test runs: without Chromium it skips with one loud
 * line, unless REQUIRE_BROWSER=1 (CI), where `executable()` then throws.
 */
export function chromiumForTests(testName: string): { skip: boolean; executable: () => string } {
  const chromium = findChromium();
  const required = process.env.REQUIRE_BROWSER === '1';
  if (!chromium && !required)
    console.warn(
      `${testName} tests SKIPPED: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)`,
    );
  return {
    skip: !chromium && !required,
    executable: () => {
      if (!chromium)
        throw new Error('REQUIRE_BROWSER=1 but no Chromium was found (apt-get install chromium)');
      return chromium;
    },
  };
}

const PAGE = `<!doctype html><meta charset="utf-8"><script type="module" src="/page.js"></script>`;

async function bundle(entry: string): Promise<Map<string, string>> {
  const result = await build({
    entryPoints: { page: fileURLToPath(new URL(entry, import.meta.url)) },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external: ['node:*', 'koffi', 'webgpu'],
    outdir: '/bundle',
    write: false,
    logLevel: 'silent',
  });
  return new Map(result.outputFiles.map((file) => [file.path.replace('/bundle', ''), file.text]));
}

/** Chromium's WebGPU on SwiftShader (Vulkan on the CPU): a software adapter that offers `subgroups`. */
export const WEBGPU_FLAGS = ['--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'];

export async function runInChromium(executablePath: string): Promise<BrowserReport> {
  return runPageInChromium(executablePath, './page.ts', 'runBrowserChecks', ['--disable-gpu']);
}

/** Loads `entry` on a page and returns what its global function `check` resolves to. */
export async function runPageInChromium<T>(
  executablePath: string,
  entry: string,
  check: string,
  flags: string[],
): Promise<T> {
  const files = await bundle(entry);
  const server = createServer((request, response) => {
    const path = request.url === '/' ? '/' : (request.url ?? '');
    const body = path === '/' ? PAGE : files.get(path);
    response.writeHead(body === undefined ? 404 : 200, {
      'content-type': path === '/' ? 'text/html' : 'text/javascript',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
    });
    response.end(body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', ...flags],
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'load' });
    await page
      .waitForFunction(`typeof globalThis.${check} === "function"`, { timeout: 30000 })
      .catch((error: Error) => {
        throw new Error(`the page did not load its checks: ${errors.join('; ') || error.message}`);
      });
    return (await page.evaluate(`globalThis.${check}()`)) as T;
  } finally {
    await browser.close();
    server.close();
  }
}
