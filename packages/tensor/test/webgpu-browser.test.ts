/**
 * The WebGPU backend in a real browser: headless Chromium loads the package (bundled for the browser) and
 * runs the row kernels on navigator.gpu — SwiftShader, a software Vulkan adapter that, unlike Dawn on
 * llvmpipe in Node, offers the `subgroups` feature, so this is where the subgroup reductions are tested —
 * with both kernel variants, against the CPU backend on the same page (./browser/webgpu-page.ts). Skips with
 * one line where no Chromium is installed; under REQUIRE_BROWSER=1 (CI) a missing Chromium fails instead.
 */
import { describe, expect, test } from 'vitest';
import { WEBGPU_FLAGS, chromiumForTests, runPageInChromium } from './browser/chromium.js';
import type { WebGpuPageReport } from './browser/webgpu-page.js';

const chromium = chromiumForTests('webgpu-browser');

describe.skipIf(chromium.skip)('webgpu backend in headless Chromium', () => {
  test('row kernels on navigator.gpu, with subgroup reductions, match the CPU backend', async () => {
    const report = await runPageInChromium<WebGpuPageReport>(
      chromium.executable(),
      './webgpu-page.ts',
      'runWebGpuChecks',
      WEBGPU_FLAGS,
    );
    // The point of running here: the adapter offers subgroups and both backends' reductions used them.
    expect(report.features).toContain('subgroups');
    expect(Object.values(report.subgroups)).toEqual([true, true]);
    expect(report.outputs.length).toBeGreaterThan(0);
    for (const { name, maxDiff, maxAbs } of report.outputs)
      expect(maxDiff, `${name}: max |webgpu − cpu| ${maxDiff} at scale ${maxAbs}`).toBeLessThanOrEqual(
        5e-5 * (1 + maxAbs),
      );
  }, 300000);
});
