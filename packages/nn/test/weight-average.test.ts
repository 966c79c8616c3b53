import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Generator, noGrad, tensor } from '@agent-r1/tensor';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Linear, WeightAverage, loadCheckpoint, saveCheckpoint } from '../src/index.js';

const valuesOf = (m: Linear) => [...m.namedParameters()].map(([, p]) => [...p.dataSync()]);

/** Sets every parameter of `m` to `value + its index`, as an optimizer step would move them. */
function setParams(m: Linear, value: number): void {
  noGrad(() => {
    for (const [, p] of m.namedParameters()) {
      const n = p.size;
      p.copy_(tensor(Array.from({ length: n }, (_, i) => value + i)).reshape(p.shape));
    }
  });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weight-average-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('WeightAverage', () => {
  it('equals the bias-corrected exponential average of the parameters it saw', () => {
    const m = new Linear(3, 2, { generator: new Generator(1) });
    const decay = 0.9;
    const average = new WeightAverage(m.parameters(), { decay });
    const seen = [2, -1, 5, 0.5];
    for (const v of seen) {
      setParams(m, v);
      average.update();
    }
    // Σ_k (1 − d) d^(t−1−k) v_k / (1 − d^t): the initial weights carry no weight at all.
    const t = seen.length;
    const expected =
      seen.reduce((s, v, k) => s + (1 - decay) * decay ** (t - 1 - k) * v, 0) / (1 - decay ** t);
    average.copyToParams();
    for (const values of valuesOf(m))
      for (const [i, x] of values.entries()) expect(x).toBeCloseTo(expected + i, 5);
    expect(average.updates).toBe(4);
    average.dispose();
  });

  it('keeps constant parameters exactly, and is the last iterate at decay 0', () => {
    const m = new Linear(2, 2, { generator: new Generator(2) });
    const slow = new WeightAverage(m.parameters(), { decay: 0.999 });
    setParams(m, 3);
    const before = valuesOf(m);
    for (let i = 0; i < 5; i++) slow.update();
    slow.copyToParams();
    for (const [j, values] of valuesOf(m).entries())
      for (const [i, x] of values.entries()) expect(x).toBeCloseTo(before[j][i], 4);
    const last = new WeightAverage(m.parameters(), { decay: 0 });
    setParams(m, 1);
    last.update();
    setParams(m, 7);
    last.update();
    setParams(m, -4);
    last.copyToParams();
    for (const values of valuesOf(m)) for (const [i, x] of values.entries()) expect(x).toBe(7 + i);
    slow.dispose();
    last.dispose();
  });

  it('leaves the parameters as they are before its first update', () => {
    const m = new Linear(2, 3, { generator: new Generator(3) });
    const before = valuesOf(m);
    const average = new WeightAverage(m.parameters(), { decay: 0.5 });
    average.copyToParams();
    expect(valuesOf(m)).toEqual(before);
    average.dispose();
  });

  it('refuses a decay outside [0, 1)', () => {
    const m = new Linear(2, 2, { generator: new Generator(4) });
    for (const decay of [1, -0.1, Number.NaN])
      expect(() => new WeightAverage(m.parameters(), { decay })).toThrow(/decay must be in \[0, 1\)/);
  });

  it('round-trips through a checkpoint: a resumed average continues as the uninterrupted one', async () => {
    const run = (m: Linear, average: WeightAverage, values: number[]) => {
      for (const v of values) {
        setParams(m, v);
        average.update();
      }
    };
    const whole = new Linear(3, 2, { generator: new Generator(5) });
    const wholeAverage = new WeightAverage(whole.parameters(), { decay: 0.8 });
    run(whole, wholeAverage, [1, 2, 3, 4]);
    wholeAverage.copyToParams();

    const first = new Linear(3, 2, { generator: new Generator(5) });
    const firstAverage = new WeightAverage(first.parameters(), { decay: 0.8 });
    run(first, firstAverage, [1, 2]);
    await saveCheckpoint(dir, { model: first, average: firstAverage });
    expect((await readdir(dir)).sort()).toEqual(['average.safetensors', 'model.safetensors', 'state.json']);

    const resumed = new Linear(3, 2, { generator: new Generator(6) });
    const resumedAverage = new WeightAverage(resumed.parameters(), { decay: 0.8 });
    await loadCheckpoint(dir, { model: resumed, average: resumedAverage });
    expect(resumedAverage.updates).toBe(2);
    run(resumed, resumedAverage, [3, 4]);
    resumedAverage.copyToParams();
    expect(valuesOf(resumed)).toEqual(valuesOf(whole));
    for (const a of [wholeAverage, firstAverage, resumedAverage]) a.dispose();
  });

  it('names what is wrong when a checkpoint does not hold the average asked for', async () => {
    const m = new Linear(3, 2, { generator: new Generator(7) });
    await saveCheckpoint(dir, { model: m });
    const average = new WeightAverage(m.parameters(), { decay: 0.9 });
    await expect(loadCheckpoint(dir, { model: m, average })).rejects.toThrow(/has no average\.safetensors/);
    const saved = new WeightAverage(m.parameters(), { decay: 0.5 });
    saved.update();
    await saveCheckpoint(dir, { model: m, average: saved });
    await expect(loadCheckpoint(dir, { model: m, average })).rejects.toThrow(
      /saved decay is 0\.5, this one's 0\.9/,
    );
    average.dispose();
    saved.dispose();
  });
});
