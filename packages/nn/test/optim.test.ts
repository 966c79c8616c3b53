import {
  Generator,
  type Tensor,
  crossEntropy,
  memory,
  noGrad,
  randint,
  randn,
  tensor,
  tidy,
} from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import {
  AdamW,
  Linear,
  Module,
  SGD,
  accumulateGradients,
  clipGradNorm,
  constant,
  parameterNames,
  warmupCosine,
  warmupLinear,
} from '../src/index.js';

const f = Math.fround;

function param(values: number[]): Tensor {
  const p = tensor(values);
  p.requiresGrad = true;
  return p;
}

function values(t: Tensor): number[] {
  return [...t.dataSync()];
}

/** The CPU adamw kernel's arithmetic, with float32 storage of p, m and v. */
function adamwReference(
  p: number[],
  grads: number[][],
  h: { lr: number; beta1: number; beta2: number; eps: number; weightDecay: number },
): number[] {
  const m = p.map(() => 0);
  const v = p.map(() => 0);
  let x = p.map(f);
  grads.forEach((g, s) => {
    const step = s + 1;
    const c1 = 1 - h.beta1 ** step;
    const c2 = 1 - h.beta2 ** step;
    x = x.map((xi, i) => {
      const gi = f(g[i]);
      m[i] = f(h.beta1 * m[i] + (1 - h.beta1) * gi);
      v[i] = f(h.beta2 * v[i] + (1 - h.beta2) * gi * gi);
      const decayed = xi * (1 - h.lr * h.weightDecay);
      return f(decayed - (h.lr * (m[i] / c1)) / (Math.sqrt(v[i] / c2) + h.eps));
    });
  });
  return x;
}

describe('copy_ into a parameter', () => {
  it('is refused while grad is on and allowed under noGrad, as optimizers write parameters', () => {
    const p = param([1, 2]);
    expect(() => p.copy_(tensor([3, 4]))).toThrow(/leaf that requires grad; write it inside noGrad\(\)/);
    noGrad(() => p.copy_(tensor([3, 4])));
    expect(values(p)).toEqual([3, 4]);
    expect(p.requiresGrad).toBe(true);
    const computed = p.mul(2);
    expect(() => noGrad(() => computed.copy_(tensor([0, 0])))).toThrow(
      /in-place writes would corrupt its graph/,
    );
  });
});

describe('SGD', () => {
  const grads = [
    [0.5, 3],
    [-1.25, 0.75],
  ];

  it('plain SGD with weight decay: p ← p − lr (g + wd p), for 2 steps', () => {
    const p = param([1, -2]);
    const opt = new SGD([p], { lr: 0.1, weightDecay: 0.01 });
    let x = [1, -2];
    for (const g of grads) {
      p.setGrad(tensor(g));
      opt.step();
      x = x.map((xi, i) => f(xi - f(f(0.1) * f(g[i] + f(xi * f(0.01))))));
    }
    expect(values(p)).toEqual(x);
    expect(opt.steps).toBe(2);
  });

  it('momentum and Nesterov momentum match the hand-computed updates for 2 steps', () => {
    for (const nesterov of [false, true]) {
      const p = param([1, -2]);
      const opt = new SGD([p], { lr: 0.1, momentum: 0.9, nesterov, weightDecay: 0.01 });
      let x = [1, -2];
      let buf: number[] | null = null;
      for (const g of grads) {
        p.setGrad(tensor(g));
        opt.step();
        const d = x.map((xi, i) => f(g[i] + f(xi * f(0.01))));
        const b: number[] = buf ? buf.map((bi, i) => f(f(bi * f(0.9)) + f(d[i] * 1))) : d;
        buf = b;
        const dir = nesterov ? d.map((di, i) => f(di + f(b[i] * f(0.9)))) : b;
        x = x.map((xi, i) => f(xi - f(dir[i] * f(0.1))));
      }
      expect(values(p)).toEqual(x);
      // Step 1 of momentum SGD is plain SGD; step 2 differs by momentum · buf.
      expect(values(opt.state().tensors['0.0.momentum'])).toEqual(buf);
    }
  });

  it('skips parameters without a gradient, validates its settings and leaks nothing per step', () => {
    const a = param([1, 2]);
    const b = param([3]);
    const opt = new SGD([a, b], { lr: 0.5, momentum: 0.5 });
    const step = () =>
      tidy(() => {
        a.setGrad(tensor([1, 1]));
        opt.step();
      });
    step();
    expect(values(b)).toEqual([3]);
    const before = memory();
    for (let i = 0; i < 5; i++) step();
    expect(memory()).toEqual(before);
    expect(() => new SGD([a], { nesterov: true })).toThrow(/nesterov momentum needs momentum > 0/);
    expect(() => new SGD([a], { lr: -1 })).toThrow(/group 0: lr must be a finite number >= 0, got -1/);
  });
});

describe('AdamW', () => {
  const hyper = { lr: 0.01, beta1: 0.8, beta2: 0.95, eps: 1e-6, weightDecay: 0.1 };
  const grads = [
    [0.5, -3, 0.001],
    [-1.25, 0.75, 2],
  ];

  it('matches the hand-computed update for 2 steps', () => {
    const p = param([1, -2, 0.25]);
    const opt = new AdamW([p], {
      lr: hyper.lr,
      betas: [hyper.beta1, hyper.beta2],
      eps: hyper.eps,
      weightDecay: hyper.weightDecay,
    });
    for (const g of grads) {
      p.setGrad(tensor(g));
      opt.step();
    }
    expect(values(p)).toEqual(adamwReference([1, -2, 0.25], grads, hyper));
  });

  it('applies each parameter group its own lr and weight decay', () => {
    const decayed = param([1, -2, 0.25]);
    const noDecay = param([1, -2, 0.25]);
    const fast = param([1, -2, 0.25]);
    const opt = new AdamW(
      [{ params: [decayed] }, { params: [noDecay], weightDecay: 0 }, { params: [fast], lr: 0.1 }],
      { lr: hyper.lr, betas: [hyper.beta1, hyper.beta2], eps: hyper.eps, weightDecay: hyper.weightDecay },
    );
    for (const g of grads) {
      for (const p of [decayed, noDecay, fast]) p.setGrad(tensor(g));
      opt.step();
    }
    expect(values(decayed)).toEqual(adamwReference([1, -2, 0.25], grads, hyper));
    expect(values(noDecay)).toEqual(adamwReference([1, -2, 0.25], grads, { ...hyper, weightDecay: 0 }));
    expect(values(fast)).toEqual(adamwReference([1, -2, 0.25], grads, { ...hyper, lr: 0.1 }));
    expect(opt.paramGroups.map((g) => [g.lr, g.weightDecay])).toEqual([
      [0.01, 0.1],
      [0.01, 0],
      [0.1, 0.1],
    ]);
  });

  it('a zero gradient leaves only the decoupled decay, per group', () => {
    const a = param([2, -4]);
    const b = param([2, -4]);
    const opt = new AdamW([{ params: [a] }, { params: [b], weightDecay: 0 }], { lr: 0.5, weightDecay: 0.2 });
    a.setGrad(tensor([0, 0]));
    b.setGrad(tensor([0, 0]));
    opt.step();
    expect(values(a)).toEqual([2 * 0.9, -4 * 0.9].map(f));
    expect(values(b)).toEqual([2, -4]);
  });

  it('setLrScale scales every group from its initial rate; step(lr) overrides the rate', () => {
    const a = param([1]);
    const b = param([1]);
    const opt = new AdamW([{ params: [a] }, { params: [b], lr: 0.2 }], { lr: 0.1 });
    opt.setLrScale(0.5);
    expect(opt.paramGroups.map((g) => g.lr)).toEqual([0.05, 0.1]);
    expect(opt.paramGroups.map((g) => g.initialLr)).toEqual([0.1, 0.2]);
    const c = param([1, -2, 0.25]);
    const single = new AdamW([c], { lr: 0.5, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1 });
    for (const g of grads) {
      c.setGrad(tensor(g));
      single.step(hyper.lr);
    }
    expect(values(c)).toEqual(adamwReference([1, -2, 0.25], grads, hyper));
  });

  it('state() names moments by parameter; loadState restores step, rates and moments exactly', () => {
    const model = new Linear(3, 2, { generator: new Generator(1) });
    const opt = new AdamW(model.parameters(), { lr: 0.01 });
    const x = randn([4, 3], { generator: new Generator(2) });
    const y = tensor([0, 1, 1, 0], { dtype: 'int32' });
    const train = () =>
      tidy(() => {
        crossEntropy(model.forward(x), y).backward();
        opt.step();
        opt.zeroGrad();
      });
    train();
    opt.setLrScale(0.3);
    const names = parameterNames(model);
    const state = opt.state(names);
    expect(Object.keys(state.tensors).sort()).toEqual(['bias.m', 'bias.v', 'weight.m', 'weight.v']);
    expect(state.step).toBe(1);
    expect(state.groups[0].params).toEqual(['weight', 'bias']);

    const other = new AdamW(model.parameters(), { lr: 0.5 });
    other.loadState(state, names);
    expect(other.steps).toBe(1);
    expect(other.paramGroups[0].lr).toBeCloseTo(0.003, 12);
    expect(other.paramGroups[0].initialLr).toBe(0.01);
    for (const [k, t] of Object.entries(other.state(names).tensors))
      expect(values(t)).toEqual(values(state.tensors[k]));
    // The loaded moments are copies: the source may go away.
    expect(other.state(names).tensors['weight.m']).not.toBe(state.tensors['weight.m']);
    x.dispose();
    y.dispose();
  });

  it('loadState refuses a state that does not fit, naming the problem, and changes nothing', () => {
    const a = param([1, 2]);
    const b = param([3]);
    const opt = new AdamW([a, b]);
    a.setGrad(tensor([1, 1]));
    b.setGrad(tensor([1]));
    opt.step();
    const state = opt.state();
    const fresh = new AdamW([a, b]);
    expect(() => new SGD([a, b]).loadState(state)).toThrow(/SGD.loadState: the state is for AdamW/);
    expect(() => fresh.loadState({ ...state, tensors: { ...state.tensors, 'zz.m': tensor([1]) } })).toThrow(
      /unexpected tensors zz.m/,
    );
    const { '0.1.v': _, ...noV } = state.tensors;
    expect(() => fresh.loadState({ ...state, tensors: noV })).toThrow(/missing 0.1.v/);
    expect(() =>
      fresh.loadState({ ...state, tensors: { ...state.tensors, '0.0.m': tensor([1, 2, 3]) } }),
    ).toThrow(/0.0.m is \[3\] float32 but should be \[2\] float32 \(the parameter is float32\)/);
    expect(() => new AdamW([b, a]).loadState(state, new Map([[a, 'a']]))).toThrow(
      /group 0 holds other parameters than the saved one; not in the state: a; only in the state: 0.1$/,
    );
    expect(fresh.steps).toBe(0);
    expect(Object.keys(fresh.state().tensors)).toEqual([]);
  });

  it('refuses a parameter listed twice and bad betas', () => {
    const a = param([1]);
    expect(() => new AdamW([{ params: [a] }, { params: [a] }])).toThrow(
      /parameter 0 of group 1 appears in more/,
    );
    expect(() => new AdamW([a], { betas: [0.9, 1] })).toThrow(
      /betas\[1\] must be a finite number in \[0, 1\)/,
    );
  });
});

describe('half-precision parameters', () => {
  const bf16 = (x: number) => tensor([x], { dtype: 'bfloat16' }).dataSync()[0];

  it('update a float32 master copy, so steps below half a bfloat16 ulp add up', () => {
    const p = tensor([1, -3], { dtype: 'bfloat16' });
    p.requiresGrad = true;
    const opt = new SGD([p], { lr: 1e-3 });
    const master = [f(1), f(-3)];
    for (let step = 0; step < 50; step++) {
      tidy(() =>
        p
          .mul(tensor([1, 2], { dtype: 'bfloat16' }))
          .sum()
          .backward(),
      );
      opt.step();
      opt.zeroGrad();
      master[0] = f(master[0] - f(1e-3));
      master[1] = f(master[1] - f(2e-3));
    }
    // Each step (1e-3 on 1.0) is below half of bfloat16's ulp there (2^-8 / 2): alone it rounds away.
    expect(bf16(1 - 1e-3)).toBe(1);
    expect(p.dtype).toBe('bfloat16');
    expect(values(p)).toEqual(master.map(bf16));
    const state = opt.state();
    expect(Object.keys(state.tensors)).toEqual(['0.0.master']); // no momentum: no buffer of SGD's own
    expect(values(state.tensors['0.0.master'])).toEqual(master);
    expect(state.tensors['0.0.master'].dtype).toBe('float32');
    const again = new SGD([p], { lr: 1e-3 });
    again.loadState(state);
    expect(values(again.state().tensors['0.0.master'])).toEqual(master);
  });

  it('AdamW state with a float16 parameter: master and moments in float32, restored exactly', () => {
    const run = (opt: AdamW, p: Tensor, steps: number) => {
      for (let s = 0; s < steps; s++) {
        tidy(() => p.square().sum().backward());
        opt.step();
        opt.zeroGrad();
      }
    };
    const make = () => {
      const p = tensor([0.3, -1.7, 2.2], { dtype: 'float16' });
      p.requiresGrad = true;
      return p;
    };
    const p = make();
    const opt = new AdamW([p], { lr: 0.01 });
    run(opt, p, 3);
    const state = opt.state();
    expect(Object.keys(state.tensors).sort()).toEqual(['0.0.m', '0.0.master', '0.0.v']);
    for (const t of Object.values(state.tensors)) expect(t.dtype).toBe('float32');
    const q = make();
    noGrad(() => q.copy_(p));
    const resumed = new AdamW([q], { lr: 0.01 });
    resumed.loadState(state);
    run(opt, p, 2);
    run(resumed, q, 2);
    expect(values(q)).toEqual(values(p));
    const bad = { ...state, tensors: { ...state.tensors, '0.0.m': tensor([0, 0, 0], { dtype: 'float16' }) } };
    expect(() => new AdamW([make()]).loadState(bad)).toThrow(
      /0.0.m is \[3\] float16 but should be \[3\] float32 \(the parameter is float16\)/,
    );
    const { '0.0.master': _, ...noMaster } = state.tensors;
    expect(() => new AdamW([make()]).loadState({ ...state, tensors: noMaster })).toThrow(
      /missing 0.0.master$/,
    );
  });
});

describe('clipGradNorm', () => {
  it('returns the global norm and scales the gradients to maxNorm', () => {
    const a = param([0, 0]);
    const b = param([0]);
    const c = param([5]); // no gradient: ignored
    a.setGrad(tensor([3, 4]));
    b.setGrad(tensor([12]));
    expect(clipGradNorm([a, b, c], 6.5)).toBe(13);
    const scale = 6.5 / (13 + 1e-6);
    expect(values(a.grad!)).toEqual([f(3 * f(scale)), f(4 * f(scale))]);
    expect(values(b.grad!)).toEqual([f(12 * f(scale))]);
    const after = Math.hypot(...values(a.grad!), ...values(b.grad!));
    expect(after).toBeCloseTo(6.5, 5);
    expect(c.grad).toBeNull();
  });

  it('leaves gradients within the bound alone', () => {
    const a = param([0, 0]);
    a.setGrad(tensor([3, 4]));
    const g = a.grad;
    expect(clipGradNorm([a], 5.5)).toBe(5);
    expect(a.grad).toBe(g);
  });

  it('sums squares in float64: float32 gradients whose squares overflow float32 still give the norm', () => {
    const a = param([0, 0]);
    a.setGrad(tensor([3e20, 4e20]));
    const norm = clipGradNorm([a], 1);
    expect(norm / 5e20).toBeCloseTo(1, 6);
    expect(Math.hypot(...values(a.grad!))).toBeCloseTo(1, 5);
  });

  it('returns a non-finite norm without touching the gradients, or throws when asked', () => {
    const a = param([0, 0]);
    a.setGrad(tensor([Number.NaN, 1]));
    const g = a.grad;
    expect(clipGradNorm([a], 1)).toBeNaN();
    expect(a.grad).toBe(g);
    expect(() => clipGradNorm([a], 1, { errorIfNonfinite: true })).toThrow(/gradient norm is NaN/);
  });
});

describe('learning-rate schedules', () => {
  it('warmupCosine: linear warm-up, half cosine to minRatio, flat after', () => {
    const s = warmupCosine({ warmupSteps: 10, totalSteps: 110, minRatio: 0.1 });
    expect(s(0)).toBe(0);
    expect(s(5)).toBe(0.5);
    expect(s(10)).toBe(1);
    expect(s(35)).toBeCloseTo(0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI / 4)), 12);
    expect(s(60)).toBeCloseTo(0.55, 12);
    expect(s(110)).toBe(0.1);
    expect(s(1000)).toBe(0.1);
    expect(warmupCosine({ totalSteps: 100 })(0)).toBe(1);
    expect(warmupCosine({ totalSteps: 100 })(100)).toBe(0);
  });

  it('warmupLinear: linear warm-up, linear decay to minRatio', () => {
    const s = warmupLinear({ warmupSteps: 4, totalSteps: 14 });
    expect([0, 1, 2, 4, 9, 14, 20].map(s)).toEqual([0, 0.25, 0.5, 1, 0.5, 0, 0]);
    expect(warmupLinear({ totalSteps: 10, minRatio: 0.2 })(5)).toBeCloseTo(0.6, 12);
  });

  it('constant, with or without warm-up; bad arguments throw', () => {
    expect([0, 1, 1e6].map(constant())).toEqual([1, 1, 1]);
    expect([0, 2, 4, 9].map(constant({ warmupSteps: 4 }))).toEqual([0, 0.5, 1, 1]);
    expect(() => warmupCosine({ warmupSteps: 10, totalSteps: 5 })).toThrow(
      /totalSteps must be an integer >= warmupSteps/,
    );
    expect(() => constant()(-1)).toThrow(/step must be a number >= 0/);
  });

  it('drives an optimizer through setLrScale', () => {
    const p = param([1]);
    const opt = new SGD([p], { lr: 0.2 });
    const schedule = warmupLinear({ warmupSteps: 2, totalSteps: 4 });
    const rates: number[] = [];
    for (let i = 0; i < 5; i++) {
      opt.setLrScale(schedule(opt.steps));
      rates.push(opt.paramGroups[0].lr);
      p.setGrad(tensor([0]));
      opt.step();
    }
    expect(rates).toEqual([0, 0.1, 0.2, 0.1, 0]);
  });
});

class TwoLayer extends Module {
  readonly fc1: Linear;
  readonly fc2: Linear;
  constructor(seed: number) {
    super();
    const generator = new Generator(seed);
    this.fc1 = this.module('fc1', new Linear(5, 8, { generator }));
    this.fc2 = this.module('fc2', new Linear(8, 3, { generator }));
  }
  forward(x: Tensor): Tensor {
    return tidy(() => this.fc2.forward(this.fc1.forward(x).tanh()));
  }
}

describe('gradient accumulation', () => {
  it('4 micro-batches of 4 give the gradients, loss and step of one batch of 16', () => {
    const x = randn([16, 5], { generator: new Generator(7) });
    const y = randint(0, 3, [16], { generator: new Generator(8) });
    const full = new TwoLayer(3);
    const micro = new TwoLayer(3);
    const fullLoss = tidy(() => {
      const loss = crossEntropy(full.forward(x), y);
      loss.backward();
      return loss.itemSync();
    });
    const chunks = [0, 4, 8, 12].map((s) => ({ x: x.narrow(0, s, 4), y: y.narrow(0, s, 4) }));
    const microLoss = accumulateGradients(chunks, (c) => crossEntropy(micro.forward(c.x), c.y));
    expect(microLoss).toBeCloseTo(fullLoss, 6);
    const fullParams = [...full.namedParameters()];
    const microParams = new Map(micro.namedParameters());
    for (const [name, p] of fullParams) {
      const a = values(p.grad!);
      const b = values(microParams.get(name)!.grad!);
      for (let i = 0; i < a.length; i++) expect(b[i]).toBeCloseTo(a[i], 6);
    }
    const optFull = new SGD(full.parameters(), { lr: 0.5 });
    const optMicro = new SGD(micro.parameters(), { lr: 0.5 });
    optFull.step();
    optMicro.step();
    for (const [name, p] of fullParams) {
      const a = values(p);
      const b = values(microParams.get(name)!);
      for (let i = 0; i < a.length; i++) expect(b[i]).toBeCloseTo(a[i], 6);
    }
    for (const c of chunks) {
      c.x.dispose();
      c.y.dispose();
    }
    expect(() => accumulateGradients([], () => x)).toThrow(/no micro-batches/);
  });

  it('weights unequal micro-batches by their size', () => {
    const x = randn([6, 5], { generator: new Generator(9) });
    const y = randint(0, 3, [6], { generator: new Generator(10) });
    const full = new TwoLayer(4);
    const micro = new TwoLayer(4);
    tidy(() => crossEntropy(full.forward(x), y).backward());
    const chunks = [
      [0, 2],
      [2, 4],
    ].map(([s, n]) => ({ x: x.narrow(0, s, n), y: y.narrow(0, s, n) }));
    accumulateGradients(chunks, (c) => crossEntropy(micro.forward(c.x), c.y), { weights: [2, 4] });
    const a = values(full.fc1.weight.grad!);
    const b = values(micro.fc1.weight.grad!);
    for (let i = 0; i < a.length; i++) expect(b[i]).toBeCloseTo(a[i], 6);
  });
});
