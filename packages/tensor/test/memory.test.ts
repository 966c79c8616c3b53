/** Ownership: tidy, keep, dispose, `using`, shared storages, a leak-free training step, and graph lifetime. */
import { describe, expect, test } from 'vitest';
import {
  Generator,
  type Tensor,
  adamwUpdate,
  arange,
  crossEntropy,
  dispose,
  enableGrad,
  isGradEnabled,
  keep,
  memory,
  noGrad,
  ones,
  randn,
  tensor,
  tidy,
  zeros,
  zerosLike,
} from '../src/index.js';

const f64 = (values: number[], requiresGrad = false) =>
  tensor(Float64Array.from(values), { dtype: 'float64', requiresGrad });

describe('tidy', () => {
  test('disposes intermediates and keeps the returned tensor', () => {
    const input = ones([3]);
    const before = memory();
    let intermediate: Tensor | null = null;
    const out = tidy(() => {
      intermediate = input.add(1);
      return intermediate.mul(3);
    });
    expect(intermediate!.isDisposed).toBe(true);
    expect(input.isDisposed).toBe(false);
    expect(out.isDisposed).toBe(false);
    expect(out.toArraySync()).toEqual([6, 6, 6]);
    expect(memory().tensors).toBe(before.tensors + 1);
    expect(memory().storages).toBe(before.storages + 1);
    expect(memory().bytes).toBe(before.bytes + 12);
    out.dispose();
    expect(memory()).toEqual(before);
  });

  test('keeps tensors found in nested arrays, plain objects and maps; passes other values through', () => {
    const before = memory();
    const made: Tensor[] = [];
    const track = (t: Tensor) => {
      made.push(t);
      return t;
    };
    const result = tidy(() => {
      const a = track(ones([2]));
      const b = track(a.add(1));
      const c = track(b.mul(2));
      const d = track(c.sub(1));
      track(d.neg()); // not returned
      return { a, list: [b, [c]], nested: { deep: { d } }, map: new Map([['k', a]]), n: 7, s: 'x' };
    });
    expect(made.map((t) => t.isDisposed)).toEqual([false, false, false, false, true]);
    expect(result.n).toBe(7);
    expect(result.s).toBe('x');
    expect((result.list[1] as Tensor[])[0].toArraySync()).toEqual([4, 4]);
    expect(result.nested.deep.d.toArraySync()).toEqual([3, 3]);
    expect(memory().tensors).toBe(before.tensors + 4);
    dispose(result);
    expect(made.every((t) => t.isDisposed)).toBe(true);
    expect(memory()).toEqual(before);
    expect(tidy(() => ones([1]).sum().itemSync())).toBe(1);
    expect(memory()).toEqual(before);
  });

  test('dispose reaches into null-prototype records (as parsers build them, so no name reaches a prototype)', () => {
    const before = memory();
    const record = Object.assign(Object.create(null) as Record<string, Tensor>, {
      a: ones([2]),
      b: ones([3]),
    });
    dispose(record);
    expect(Object.values(record).every((t) => t.isDisposed)).toBe(true);
    expect(memory()).toEqual(before);
  });

  test('keep() exempts a tensor from every enclosing scope', () => {
    const before = memory();
    let kept: Tensor | null = null;
    let dropped: Tensor | null = null;
    tidy(() => {
      tidy(() => {
        kept = keep(ones([2]).mul(5));
        dropped = ones([2]);
      });
    });
    expect(kept!.isDisposed).toBe(false);
    expect(dropped!.isDisposed).toBe(true);
    expect(kept!.toArraySync()).toEqual([5, 5]);
    kept!.dispose();
    expect(memory()).toEqual(before);
  });

  test('nested tidy moves its result to the parent scope', () => {
    const before = memory();
    let inner: Tensor | null = null;
    const outerResult = tidy(() => {
      inner = tidy(() => ones([2]).add(1));
      expect(inner.isDisposed).toBe(false);
      return 42;
    });
    expect(outerResult).toBe(42);
    // the inner result was owned by the outer scope, which did not return it
    expect(inner!.isDisposed).toBe(true);
    expect(memory()).toEqual(before);

    const escaped = tidy(() => {
      const r = tidy(() => ones([2]).add(1));
      return { r };
    });
    expect(escaped.r.toArraySync()).toEqual([2, 2]);
    expect(memory().tensors).toBe(before.tensors + 1);
    escaped.r.dispose();
    expect(memory()).toEqual(before);
  });

  test('tensors made before a tidy are not disposed by it', () => {
    const x = ones([2]);
    tidy(() => {
      x.add(1);
      return x; // returning an outer tensor is fine too
    });
    expect(x.isDisposed).toBe(false);
  });
});

describe('using and dispose', () => {
  test('`using` declarations dispose at the end of the block', () => {
    // The vitest transform lowers `using` (Node 20 has no native support), so no manual
    // x[Symbol.dispose]() call is needed.
    const before = memory();
    let escaped: Tensor | null = null;
    {
      using x = ones([4]);
      using y = x.reshape([2, 2]);
      escaped = y;
      expect(memory().tensors).toBe(before.tensors + 2);
      expect(tidy(() => y.sum().itemSync())).toBe(4);
    }
    expect(escaped.isDisposed).toBe(true);
    expect(memory()).toEqual(before);
    const t = ones([1]);
    t[Symbol.dispose]();
    expect(t.isDisposed).toBe(true);
  });

  test('disposing a view does not free the storage other views share', () => {
    const base = arange(6); // int32: 24 bytes
    const before = memory();
    const v1 = base.reshape([2, 3]);
    const v2 = base.slice(0, 2);
    expect(memory().storages).toBe(before.storages);
    v1.dispose();
    expect(memory().storages).toBe(before.storages);
    expect(base.toArraySync()).toEqual([0, 1, 2, 3, 4, 5]);
    base.dispose();
    expect(memory().storages).toBe(before.storages);
    expect(memory().tensors).toBe(before.tensors);
    expect(v2.toArraySync()).toEqual([2, 3, 4, 5]);
    v2.dispose();
    expect(memory().storages).toBe(before.storages - 1);
    expect(memory().bytes).toBe(before.bytes - 24);
    expect(memory().tensors).toBe(before.tensors - 1);
  });

  test('disposing a tensor also disposes its grad', () => {
    const before = memory();
    const w = f64([1, 2], true);
    tidy(() => w.mul(w).sum().backward());
    expect(w.grad!.toArraySync()).toEqual([2, 4]);
    const grad = w.grad!;
    w.dispose();
    expect(grad.isDisposed).toBe(true);
    expect(memory()).toEqual(before);
  });
});

describe('training step leak test', () => {
  test('a tidy-ed MLP step with AdamW leaves memory exactly where it was', () => {
    const generator = new Generator(1234);
    const init = (shape: number[]) => {
      const t = randn(shape, { generator }).mul(0.5);
      t.requiresGrad = true;
      return t;
    };
    const params = [init([4, 8]), init([8]), init([8, 3])];
    const [w1, b1, w2] = params;
    const state = params.map((p) => ({ m: zerosLike(p), v: zerosLike(p) }));
    const x = randn([6, 4], { generator });
    const targets = tensor(Int32Array.from([0, 1, 2, 1, 0, 2]));
    const baseline = memory();

    const step = (n: number): number =>
      tidy(() => {
        const logits = x.matmul(w1).add(b1).gelu().matmul(w2);
        const loss = crossEntropy(logits, targets);
        loss.backward();
        params.forEach((p, i) => {
          expect(p.grad, `grad of param ${i}`).not.toBeNull();
          adamwUpdate(p, p.grad!, state[i].m, state[i].v, { lr: 0.05, step: n });
        });
        for (const p of params) p.zeroGrad();
        return loss.itemSync();
      });

    const losses = [step(1)];
    const after1 = memory();
    expect(after1).toEqual(baseline);
    losses.push(step(2));
    expect(memory()).toEqual(after1);
    losses.push(step(3));
    expect(memory()).toEqual(after1);
    for (let n = 4; n <= 30; n++) losses.push(step(n));
    expect(memory()).toEqual(after1);
    // the optimizer state is persistent and the params really moved
    expect(state[0].m.abs().sum().itemSync()).toBeGreaterThan(0);
    expect(losses[29]).toBeLessThan(losses[0] * 0.7);
    expect(params.every((p) => p.grad === null && !p.isDisposed)).toBe(true);
  });
});

describe('graph lifetime', () => {
  test('backward works after the forward ran inside tidy (the graph holds its own refs)', () => {
    const x = f64([0.5, -1, 2], true);
    const w = f64([1.5, 0.25, -0.5], true);
    const baseline = memory();
    const loss = tidy(() => x.mul(w).tanh().sum());
    // only the loss handle escaped; the graph's saved tensors are extra storages, not handles in the scope
    expect(memory().storages).toBeGreaterThan(baseline.storages + 1);
    loss.backward();
    const xv = [0.5, -1, 2];
    const wv = [1.5, 0.25, -0.5];
    const gw = w.grad!.toArraySync() as number[];
    const gx = x.grad!.toArraySync() as number[];
    for (let i = 0; i < 3; i++) {
      const d = 1 - Math.tanh(xv[i] * wv[i]) ** 2;
      expect(gw[i]).toBeCloseTo(xv[i] * d, 14);
      expect(gx[i]).toBeCloseTo(wv[i] * d, 14);
    }
    loss.dispose();
    x.zeroGrad();
    w.zeroGrad();
    expect(memory()).toEqual(baseline);
  });

  test('disposing the loss without backward frees the whole graph', () => {
    const w = f64([1, 2, 3, 4], true);
    const baseline = memory();
    const loss = tidy(() =>
      w
        .reshape([2, 2])
        .matmul(w.reshape([2, 2]).T)
        .exp()
        .mean(),
    );
    expect(memory().storages).toBeGreaterThan(baseline.storages + 1);
    loss.dispose();
    expect(memory()).toEqual(baseline);
    expect(w.grad).toBeNull();
  });

  test('an intermediate that outlives the loss keeps only its own part of the graph', () => {
    const w = f64([1, 2], true);
    const baseline = memory();
    const { h, loss } = tidy(() => {
      const h = w.mul(3).exp();
      return { h, loss: h.sum().log() };
    });
    loss.dispose();
    {
      using seed = f64([1, 1]);
      h.backward(seed);
    }
    expect(w.grad!.toArraySync()).toEqual([3 * Math.exp(3), 3 * Math.exp(6)]);
    h.dispose();
    w.zeroGrad();
    expect(memory()).toEqual(baseline);
  });
});

describe('autograd bookkeeping', () => {
  test('gradients accumulate across backward calls', () => {
    const w = f64([1, -2, 3], true);
    const x = f64([0.5, 4, -1]);
    const run = () => tidy(() => w.mul(x).sum().add(w.square().sum()));
    const l1 = run();
    l1.backward();
    const once = w.grad!.toArraySync() as number[];
    expect(once).toEqual([0.5 + 2, 4 - 4, -1 + 6]);
    const l2 = run();
    l2.backward();
    expect(w.grad!.toArraySync()).toEqual(once.map((g) => 2 * g));
    // and through one retained graph
    w.zeroGrad();
    const l3 = run();
    l3.backward(undefined, { retainGraph: true });
    l3.backward();
    expect(w.grad!.toArraySync()).toEqual(once.map((g) => 2 * g));
    for (const l of [l1, l2, l3]) l.dispose();
  });

  test('noGrad records no graph; enableGrad re-enables it; the flag is restored after a throw', () => {
    const w = f64([1, 2], true);
    const y = noGrad(() => w.mul(2).add(1));
    expect(y.requiresGrad).toBe(false);
    expect(y.node).toBeNull();
    expect(y.isLeaf).toBe(true);
    expect(y.toArraySync()).toEqual([3, 5]);
    expect(isGradEnabled()).toBe(true);
    const z = noGrad(() => {
      expect(isGradEnabled()).toBe(false);
      return enableGrad(() => w.mul(2));
    });
    expect(z.requiresGrad).toBe(true);
    expect(z.node?.op).toBe('mul');
    expect(() =>
      noGrad(() => {
        throw new Error('inside');
      }),
    ).toThrow('inside');
    expect(isGradEnabled()).toBe(true);
    // a no-grad tensor can still be combined with one that requires grad
    const loss = y.mul(w).sum();
    loss.backward();
    expect(w.grad!.toArraySync()).toEqual([3, 5]);
  });

  test('detach() shares storage and cuts the graph', () => {
    const x = f64([1, 2], true);
    const w = f64([3, 4], true);
    const y = x.mul(x);
    const d = y.detach();
    expect(d.requiresGrad).toBe(false);
    expect(d.node).toBeNull();
    expect(d.storage).toBe(y.storage);
    expect(y.requiresGrad).toBe(true);
    d.mul(w).sum().backward();
    expect(w.grad!.toArraySync()).toEqual([1, 4]);
    expect(x.grad).toBeNull();
  });

  test('gradients flow only to tensors that require them', () => {
    const a = f64([1, 2, 3]);
    const w = f64([4, 5, 6], true);
    const hidden = a.mul(w);
    expect(a.requiresGrad).toBe(false);
    expect(hidden.requiresGrad).toBe(true);
    expect(hidden.isLeaf).toBe(false);
    hidden.sum().backward();
    expect(a.grad).toBeNull();
    expect(hidden.grad).toBeNull(); // non-leaf: no .grad kept
    expect(w.grad!.toArraySync()).toEqual([1, 2, 3]);
    // no input requires grad → no graph at all
    const plain = a.mul(2);
    expect(plain.requiresGrad).toBe(false);
    expect(plain.node).toBeNull();
    // comparisons and int results never carry a graph
    expect(w.gt(4).requiresGrad).toBe(false);
    expect(w.argmax().requiresGrad).toBe(false);
  });

  test('the graph records the ops that made a tensor', () => {
    const w = zeros([2], { dtype: 'float64', requiresGrad: true });
    expect(w.isLeaf).toBe(true);
    const y = w.exp().sum();
    expect(y.node?.op).toBe('sum');
    expect(y.toString()).toBe('Tensor([], float64, cpu, requiresGrad)');
  });
});
