/**
 * The cross-backend property suite: every primitive, through the Tensor API (and, for the unary table, the
 * kernel itself), on random shapes (size 1, odd sizes, sizes off any tile, strided and broadcast views) and
 * random values; the device's forward results and gradients must match the CPU reference within the
 * tolerances a device declares. Generic over the device name, so each GPU backend reuses it.
 */
import { describe } from 'vitest';
import { familiesElementwise } from './families/elementwise.js';
import { familiesFused } from './families/fused.js';
import { familiesLongLoops } from './families/long-loops.js';
import { familiesTensors } from './families/tensors.js';
import type { Family, SuiteOptions } from './options.js';

export type { Family, SuiteOptions } from './options.js';

export function crossBackendSuite(device: string, options: SuiteOptions): void {
  const family = (name: Family, body: () => void) => {
    const selected = options.families ? options.families.includes(name) : name !== 'long loops';
    if (selected) describe(`${device} vs cpu: ${name}`, body);
  };
  familiesElementwise(device, options, family);
  familiesTensors(device, options, family);
  familiesFused(device, options, family);
  familiesLongLoops(device, options, family);
}
