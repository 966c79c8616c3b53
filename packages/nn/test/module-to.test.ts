import {
  Generator,
  type Tensor,
  createCpuBackend,
  crossEntropy,
  memory,
  ones,
  registerBackend,
  tensor,
  tidy,
} from '@agent-r1/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { Linear, Module, TransformerLM, generate } from '../src/index.js';

const tiny = { vocabSize: 23, dModel: 16, layers: 2, heads: 4, kvHeads: 2, maxLength: 32, seed: 7 };
const rows = [
  [1, 2, 3, 4, 5],
  [6, 7, 8, 9, 10],
];

beforeAll(() => {
  registerBackend('cpu2', createCpuBackend('cpu2'));
});

function storagesOn(device: string): number {
  return memory().backends[device]?.storages ?? 0;
}

describe('Module.to', () => {
  it('moves a TransformerLM to another backend: same logits, fields and registry updated, old freed', () => {
    const before = memory();
    const model = new TransformerLM({ ...tiny, valueHead: true });
    const params = model.parameters();
    const count = params.length;
    const onCpu = tidy(() => {
      const out = model.forward(tensor(rows, { dtype: 'int32' }));
      return { logits: out.logits.dataSync(), values: out.values!.dataSync() };
    });
    const cpuStorages = storagesOn('cpu');
    const cpu2Storages = storagesOn('cpu2');

    expect(model.to('cpu2')).toBe(model);
    // Every parameter and both rotary tables left 'cpu' for 'cpu2'.
    expect(storagesOn('cpu')).toBe(cpuStorages - count - 2);
    expect(storagesOn('cpu2')).toBe(cpu2Storages + count + 2);
    expect(memory().tensors).toBe(before.tensors + count + 2);
    expect(params.every((p) => p.isDisposed)).toBe(true);
    expect(model.config.device).toBe('cpu2');

    const moved = model.parameters();
    expect(moved).toHaveLength(count);
    for (const p of moved) {
      expect(p.device).toBe('cpu2');
      expect(p.isLeaf && p.requiresGrad).toBe(true);
    }
    // The fields the layers read are the registered tensors.
    const named = new Map(model.namedParameters());
    expect(model.embed.weight).toBe(named.get('embed.weight'));
    expect(model.blocks[1].attn.q.weight).toBe(named.get('blocks.1.attn.q.weight'));
    expect(model.valueHead!.bias).toBe(named.get('valueHead.bias'));
    expect(model.finalNorm.weight).toBe(named.get('finalNorm.weight'));

    const onCpu2 = tidy(() => {
      const out = model.forward(tensor(rows, { dtype: 'int32', device: 'cpu2' }));
      expect(out.logits.device).toBe('cpu2');
      return { logits: out.logits.dataSync(), values: out.values!.dataSync() };
    });
    expect(onCpu2.logits).toEqual(onCpu.logits);
    expect(onCpu2.values).toEqual(onCpu.values);

    model.dispose();
    const after = memory();
    expect([after.tensors, after.storages, after.bytes]).toEqual([
      before.tensors,
      before.storages,
      before.bytes,
    ]);
    expect(storagesOn('cpu2')).toBe(before.backends.cpu2?.storages ?? 0);
  });

  it('trains and generates with a KV cache on the new device, as on the old one', () => {
    const run = (device: string) => {
      const model = new TransformerLM(tiny);
      if (device !== 'cpu') model.to(device);
      const x = tensor([rows[0].slice(0, -1)], { dtype: 'int32', device });
      const y = tensor([rows[0].slice(1)], { dtype: 'int32', device });
      const loss = tidy(() => {
        const l = crossEntropy(model.forward(x).logits, y);
        l.backward();
        return l.itemSync();
      });
      const grad = model.embed.weight.grad!;
      expect(grad.device).toBe(device);
      const g = grad.dataSync();
      const out = generate(model, rows, { maxNewTokens: 6, generator: new Generator(3) });
      expect(out.cache.keys[0].device).toBe(device);
      out.cache.dispose();
      for (const t of [x, y]) t.dispose();
      model.dispose();
      return { loss, g, tokens: out.tokens, logprobs: out.logprobs };
    };
    expect(run('cpu2')).toEqual(run('cpu'));
  });

  it('keeps the copies inside tidy, copies shared parameters once, keeps requiresGrad, and moves back', () => {
    class Shared extends Module {
      readonly a: Linear;
      readonly b: Linear;
      readonly scale: Tensor;
      constructor() {
        super();
        this.a = this.module('a', new Linear(3, 2));
        this.b = this.module('b', new Linear(3, 2, { bias: false }));
        this.scale = this.parameter('scale', ones([2]));
        this.scale.requiresGrad = false;
      }
    }
    const before = memory();
    const m = new Shared();
    // A second registration of the same module (e.g. a tied sub-module) must not make a second copy.
    (m as unknown as { children: Map<string, Module> }).children.set('alias', m.a);
    const weight = m.a.weight.dataSync();
    tidy(() => m.to('cpu2'));
    expect(m.a.weight.device).toBe('cpu2');
    expect(m.a.weight.isDisposed).toBe(false);
    expect(m.a.weight.dataSync()).toEqual(weight);
    expect(m.b.weight.device).toBe('cpu2');
    expect(m.scale.device).toBe('cpu2');
    expect(m.scale.requiresGrad).toBe(false);
    const named = new Map(m.namedParameters());
    expect(named.get('alias.weight')).toBe(m.a.weight);
    expect(storagesOn('cpu2')).toBe((before.backends.cpu2?.storages ?? 0) + 4);

    m.to('cpu2'); // already there: nothing happens
    expect(named.get('a.weight')).toBe(m.a.weight);
    m.to('cpu');
    expect(m.a.weight.device).toBe('cpu');
    expect(m.a.weight.dataSync()).toEqual(weight);
    expect(() => m.to('nowhere')).toThrow(/unknown device 'nowhere'/);
    expect(m.a.weight.device).toBe('cpu');
    (m as unknown as { children: Map<string, Module> }).children.delete('alias');
    m.dispose();
    expect(memory().tensors).toBe(before.tensors);
    expect(memory().storages).toBe(before.storages);
  });
});
