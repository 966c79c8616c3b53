import { crossEntropy, memory, tensor, tidy } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import { trainSpirals } from '../examples/train-tiny.js';
import { AdamW, Linear, Module } from '../src/index.js';

class Two extends Module {
  readonly a = this.module('a', new Linear(3, 4));
  readonly b = this.module('b', new Linear(4, 2, { bias: false }));
}

describe('Module', () => {
  it('names nested parameters by dotted path and counts them', () => {
    const m = new Two();
    expect([...m.namedParameters()].map(([n, p]) => [n, p.shape])).toEqual([
      ['a.weight', [4, 3]],
      ['a.bias', [4]],
      ['b.weight', [2, 4]],
    ]);
    expect(m.numParameters()).toBe(12 + 4 + 8);
    expect(m.parameters().every((p) => p.requiresGrad)).toBe(true);
    expect(m.eval().a.training).toBe(false);
    m.dispose();
  });

  it('refuses a name registered twice', () => {
    class Bad extends Module {
      constructor() {
        super();
        this.module('x', new Linear(1, 1));
        this.module('x', new Linear(1, 1));
      }
    }
    expect(() => new Bad()).toThrow(/'x' is already registered/);
  });
});

describe('Linear', () => {
  it('computes x Wᵀ + b', () => {
    const layer = new Linear(2, 3);
    const x = tensor([
      [1, 2],
      [3, -1],
    ]);
    const [w, b] = [layer.weight.toArraySync() as number[][], layer.bias!.toArraySync() as number[]];
    const expected = [
      [1, 2],
      [3, -1],
    ].map((row) => w.map((wr, j) => wr[0] * row[0] + wr[1] * row[1] + b[j]));
    const y = layer.forward(x).toArraySync() as number[][];
    for (const [i, v] of y.flat().entries()) expect(v).toBeCloseTo(expected.flat()[i], 5);
  });

  it('names the layer and the shape on a wrong input size', () => {
    expect(() => new Linear(4, 2).forward(tensor([[1, 2, 3]]))).toThrow(
      /Linear\(4, 2\).*last dimension is 3/,
    );
  });
});

describe('AdamW', () => {
  it('fits a linear regression and leaks nothing per step', () => {
    const layer = new Linear(2, 1);
    const opt = new AdamW(layer.parameters(), { lr: 0.05, weightDecay: 0 });
    const x = tensor([
      [0, 1],
      [1, 0],
      [1, 1],
      [2, 1],
    ]);
    const y = tensor([[1], [2], [3], [5]]); // y = 2 x0 + 1 x1
    const step = () =>
      tidy(() => {
        const loss = layer.forward(x).sub(y).square().mean();
        loss.backward();
        opt.step();
        opt.zeroGrad();
        return loss.itemSync();
      });
    const first = step();
    const after = memory();
    let last = first;
    for (let i = 0; i < 300; i++) last = step();
    expect(memory()).toEqual(after);
    expect(last).toBeLessThan(first * 1e-3);
  });
});

describe('quickstart example', () => {
  it('learns the spirals: loss falls and held-out accuracy is high', () => {
    const { losses, accuracy } = trainSpirals({ steps: 250 });
    expect(losses[losses.length - 1]).toBeLessThan(losses[0] / 10);
    expect(accuracy).toBeGreaterThan(0.9);
  });

  it('is reproducible from the seed', () => {
    const a = trainSpirals({ steps: 5, seed: 3 });
    const b = trainSpirals({ steps: 5, seed: 3 });
    expect(a.losses).toEqual(b.losses);
  });

  it('crossEntropy decreases after one AdamW step on a fixed batch', () => {
    const layer = new Linear(3, 2);
    const opt = new AdamW(layer.parameters(), { lr: 0.1 });
    const x = tensor([
      [1, 0, 0],
      [0, 1, 0],
    ]);
    const y = tensor([0, 1], { dtype: 'int32' });
    const loss = () => tidy(() => crossEntropy(layer.forward(x), y).itemSync());
    const before = loss();
    tidy(() => crossEntropy(layer.forward(x), y).backward());
    opt.step();
    expect(loss()).toBeLessThan(before);
  });
});
