/**
 * The wasm SIMD kernels in a real browser: headless Chromium loads the package index (bundled for the
 * browser), runs the kernels on the page's main thread and on a Web Worker (./browser/page.ts), and they
 * match the TypeScript kernels, bitwise across thread counts. Skips with one line where no Chromium is
 * installed; under REQUIRE_BROWSER=1 (CI) a missing Chromium fails instead.
 */
import { describe, expect, test } from 'vitest';
import { chromiumForTests, runInChromium } from './browser/chromium.js';

const chromium = chromiumForTests('wasm-browser');

describe.skipIf(chromium.skip)('wasm kernels in headless Chromium', () => {
  test('the kernels run on the page and a Web Worker, and match the TypeScript kernels', async () => {
    const report = await runInChromium(chromium.executable());
    expect(report.simd).toBe(true);
    expect(report.crossOriginIsolated).toBe(true);
    expect(report.readyWorkers).toBe(1);
    expect(report.sharedJobs).toBeGreaterThanOrEqual(report.outputs.length);
    expect(report.sameOnTwoThreads).toBe(true);
    // The float32 kernels against the TypeScript reference: a few ulps of each output's scale.
    for (const { name, maxDiff, maxAbs } of report.outputs)
      expect(maxDiff, `${name}: max |wasm − ts| ${maxDiff} at scale ${maxAbs}`).toBeLessThanOrEqual(
        2e-5 * (1 + maxAbs),
      );
  }, 120000);
});
