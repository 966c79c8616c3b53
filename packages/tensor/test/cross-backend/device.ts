/**
 * Getting a non-CPU device for a test file. Without it the suite skips with one loud line, unless the
 * variable REQUIRE_<DEVICE> (e.g. REQUIRE_WEBGPU=1, set by .ci/run) says a missing device is a failure.
 */
import { initBackend } from '../../src/index.js';

export async function acquireDevice(name: string): Promise<boolean> {
  const required = process.env[`REQUIRE_${name.toUpperCase()}`] === '1';
  try {
    await initBackend(name);
    return true;
  } catch (err) {
    const reason = (err as Error).message;
    if (required)
      throw new Error(`REQUIRE_${name.toUpperCase()}=1 but the ${name} backend is unavailable: ${reason}`);
    console.warn(
      `\n*** SKIPPING ${name} tests: ${reason} (set REQUIRE_${name.toUpperCase()}=1 to fail instead) ***\n`,
    );
    return false;
  }
}
