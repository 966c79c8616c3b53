import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Generator,
  type Tensor,
  crossEntropy,
  dropout,
  indexSelect,
  randint,
  randn,
  tensor,
  tidy,
} from '@agent-r1/tensor';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AdamW,
  Linear,
  Module,
  SGD,
  clipGradNorm,
  loadCheckpoint,
  loadSafetensors,
  loadStateDict,
  saveCheckpoint,
  warmupCosine,
} from '../src/index.js';

/** A two-layer MLP with dropout driven by its own generator. */
class Mlp extends Module {
  readonly fc1: Linear;
  readonly fc2: Linear;
  constructor(
    initSeed: number,
    readonly dropoutGenerator: Generator | null = null,
  ) {
    super();
    const generator = new Generator(initSeed);
    this.fc1 = this.module('fc1', new Linear(6, 16, { generator }));
    this.fc2 = this.module('fc2', new Linear(16, 3, { generator }));
  }
  forward(x: Tensor): Tensor {
    return tidy(() => {
      const h = this.fc1.forward(x).gelu();
      const d = this.dropoutGenerator
        ? dropout(h, 0.2, { training: this.training, generator: this.dropoutGenerator })
        : h;
      return this.fc2.forward(d);
    });
  }
}

const valuesOf = (m: Module) =>
  Object.fromEntries([...m.namedParameters()].map(([n, p]) => [n, [...p.dataSync()]]));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'checkpoint-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadStateDict', () => {
  it('names every missing, unexpected and mis-shaped tensor in one error, and copies nothing', () => {
    const model = new Mlp(1);
    const before = valuesOf(model);
    const tensors = {
      'fc1.weight': randn([16, 6]),
      'fc1.bias': randn([15]),
      'fc2.weight': randn([3, 16]),
      'fc3.weight': randn([2]),
      extra: randn([1]),
    };
    expect(() => loadStateDict(model, tensors)).toThrow(
      'loadStateDict: missing: fc2.bias; unexpected: fc3.weight, extra; mis-shaped: fc1.bias (model [16] float32, got [15] float32)',
    );
    expect(valuesOf(model)).toEqual(before);
  });

  it('non-strict: copies what fits and returns the rest', () => {
    const model = new Mlp(1);
    const w = randn([16, 6]);
    const result = loadStateDict(
      model,
      { 'fc1.weight': w, 'fc1.bias': tensor([1, 2], { dtype: 'int32' }), other: w },
      { strict: false },
    );
    expect(result).toEqual({
      missing: ['fc2.weight', 'fc2.bias'],
      unexpected: ['other'],
      mismatched: [{ name: 'fc1.bias', expected: '[16] float32', got: '[2] int32' }],
    });
    expect([...model.fc1.weight.dataSync()]).toEqual([...w.dataSync()]);
    expect(model.fc1.weight.requiresGrad).toBe(true);
  });

  it('converts float64 tensors into float32 parameters', () => {
    const model = new Linear(2, 1);
    loadStateDict(model, { weight: tensor([[0.5, 0.25]], { dtype: 'float64' }), bias: tensor([3]) });
    expect(model.weight.toArraySync()).toEqual([[0.5, 0.25]]);
    expect(model.weight.dtype).toBe('float32');
  });

  it('converts bfloat16 and float16 tensors (as half-precision files hold them) into float32 parameters', () => {
    const model = new Linear(2, 1);
    const weight = tensor([[0.1, -7.3]], { dtype: 'bfloat16' });
    loadStateDict(model, { weight, bias: tensor([1 / 3], { dtype: 'float16' }) });
    expect(model.weight.dtype).toBe('float32');
    expect([...model.weight.dataSync()]).toEqual([...weight.dataSync()]);
    expect(model.bias?.dataSync()[0]).toBe(tensor([1 / 3], { dtype: 'float16' }).dataSync()[0]);
  });
});

describe('saveCheckpoint / loadCheckpoint', () => {
  it('writes model, optimizer and state files and loads them into fresh objects', async () => {
    const model = new Mlp(1);
    const opt = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
    tidy(() => {
      crossEntropy(model.forward(randn([4, 6])), tensor([0, 1, 2, 0], { dtype: 'int32' })).backward();
      opt.step();
    });
    const data = new Generator(5);
    data.take(17);
    const path = join(dir, 'ckpt');
    await saveCheckpoint(path, {
      model,
      optimizer: opt,
      generators: { data },
      state: { epoch: 2, note: 'x' },
    });
    expect((await readdir(path)).sort()).toEqual([
      'model.safetensors',
      'optimizer.safetensors',
      'state.json',
    ]);
    expect(await readdir(dir)).toEqual(['ckpt']);
    const optimizerFile = await loadSafetensors(join(path, 'optimizer.safetensors'));
    expect(Object.keys(optimizerFile.tensors).sort()).toEqual([
      'fc1.bias.momentum',
      'fc1.weight.momentum',
      'fc2.bias.momentum',
      'fc2.weight.momentum',
    ]);
    const stateFile = JSON.parse(await readFile(join(path, 'state.json'), 'utf8'));
    expect(stateFile).toMatchObject({ step: 1, generators: { data: { key: [5, 0], counter: 17 } } });

    const fresh = new Mlp(99);
    const freshOpt = new SGD(fresh.parameters(), { lr: 0.5 });
    const freshData = new Generator(5);
    const state = await loadCheckpoint(path, {
      model: fresh,
      optimizer: freshOpt,
      generators: { data: freshData },
    });
    expect(state).toEqual({ epoch: 2, note: 'x' });
    expect(valuesOf(fresh)).toEqual(valuesOf(model));
    expect(freshOpt.steps).toBe(1);
    expect(freshOpt.paramGroups[0].lr).toBe(0.1);
    expect(freshData.state.counter).toBe(17);
  });

  it('replaces an existing checkpoint whole, and keeps it when saving fails', async () => {
    const path = join(dir, 'ckpt');
    const a = new Mlp(1);
    const b = new Mlp(2);
    await saveCheckpoint(path, { model: a, state: { n: 1 } });
    await saveCheckpoint(path, { model: b, state: { n: 2 } });
    expect(await readdir(dir)).toEqual(['ckpt']);
    expect(await readdir(path)).toEqual(['model.safetensors', 'state.json'].sort());
    const before = await readFile(join(path, 'model.safetensors'));
    await expect(saveCheckpoint(path, { model: a, state: { n: 10n } })).rejects.toThrow(
      /the state cannot be written as JSON/,
    );
    expect(await readdir(dir)).toEqual(['ckpt']);
    expect(await readFile(join(path, 'model.safetensors'))).toEqual(before);
    const check = new Mlp(3);
    expect(await loadCheckpoint(path, { model: check })).toEqual({ n: 2 });
    expect(valuesOf(check)).toEqual(valuesOf(b));
  });

  it('refuses to replace a folder that holds other files', async () => {
    const path = join(dir, 'precious');
    await mkdir(path);
    await writeFile(join(path, 'notes.txt'), 'keep me');
    await expect(saveCheckpoint(path, { model: new Mlp(1) })).rejects.toThrow(
      /holds files that are not part of a checkpoint \(notes.txt\); refusing to replace it/,
    );
    expect(await readdir(path)).toEqual(['notes.txt']);
    expect(await readdir(dir)).toEqual(['precious']);
  });

  it("writes the caller's own files with the checkpoint, replaced with it, and refuses names of its own", async () => {
    const path = join(dir, 'described');
    await saveCheckpoint(path, {
      model: new Mlp(1),
      files: { 'about.json': '{"v":1}', 'vocab.bin': new Uint8Array([1, 2]) },
    });
    expect((await readdir(path)).sort()).toEqual([
      'about.json',
      'model.safetensors',
      'state.json',
      'vocab.bin',
    ]);
    // The next save replaces the files it names; one that it does not name makes the folder not its own.
    await saveCheckpoint(path, { model: new Mlp(2), files: { 'about.json': '{"v":2}', 'vocab.bin': 'x' } });
    expect(await readFile(join(path, 'about.json'), 'utf8')).toBe('{"v":2}');
    await expect(
      saveCheckpoint(path, { model: new Mlp(3), files: { 'about.json': '{"v":3}' } }),
    ).rejects.toThrow(/\(vocab.bin\); refusing to replace it/);
    for (const name of ['state.json', '../x', '.hidden', ''])
      await expect(saveCheckpoint(path, { model: new Mlp(3), files: { [name]: 'x' } })).rejects.toThrow(
        `saveCheckpoint: files: '${name}' is not a plain file name of the caller's own`,
      );
    expect(await readFile(join(path, 'about.json'), 'utf8')).toBe('{"v":2}');
  });

  it('checks everything before loading anything', async () => {
    const path = join(dir, 'ckpt');
    const model = new Mlp(1);
    const opt = new AdamW(model.parameters());
    await saveCheckpoint(path, { model, generators: { data: new Generator(1) } });

    const target = new Mlp(2);
    const before = valuesOf(target);
    await expect(loadCheckpoint(path, { model: target, optimizer: opt })).rejects.toThrow(
      `loadCheckpoint: ${path} has no optimizer.safetensors`,
    );
    await expect(
      loadCheckpoint(path, { model: target, generators: { data: new Generator(2) } }),
    ).rejects.toThrow(/generator 'data' has key \[2,0\] but the saved one had \[1,0\]/);
    await expect(
      loadCheckpoint(path, { model: target, generators: { drop: new Generator(1) } }),
    ).rejects.toThrow(/saved no generator 'drop'/);
    class Smaller extends Module {
      readonly fc1 = this.module('fc1', new Linear(6, 8));
    }
    await expect(loadCheckpoint(path, { model: new Smaller() })).rejects.toThrow(
      /loadStateDict \(.*model.safetensors\): unexpected: fc2.bias, fc2.weight; mis-shaped: fc1.weight \(model \[8, 6\] float32, got \[16, 6\] float32\), fc1.bias \(model \[8\] float32, got \[16\] float32\)$/,
    );
    expect(valuesOf(target)).toEqual(before);

    await saveCheckpoint(path, { model, optimizer: new AdamW([{ params: [model.fc1.weight] }]) });
    await expect(
      loadCheckpoint(path, { model: target, optimizer: new AdamW(target.parameters()) }),
    ).rejects.toThrow(
      /AdamW.loadState: group 0 holds other parameters than the saved one; not in the state: fc1.bias, fc2.weight, fc2.bias/,
    );
    expect(valuesOf(target)).toEqual(before);
  });
});

describe('resume equals uninterrupted', () => {
  const STEPS = 20;
  const data = tidy(() => ({
    x: randn([64, 6], { generator: new Generator(100) }),
    y: randint(0, 3, [64], { generator: new Generator(101) }),
  }));

  interface Run {
    model: Mlp;
    optimizer: AdamW;
    batches: Generator;
    dropout: Generator;
  }

  function setUp(initSeed: number): Run {
    const dropoutGenerator = new Generator(7);
    const model = new Mlp(initSeed, dropoutGenerator);
    const decay = [model.fc1.weight, model.fc2.weight];
    const optimizer = new AdamW(
      [{ params: decay }, { params: [model.fc1.bias!, model.fc2.bias!], weightDecay: 0 }],
      {
        lr: 0.05,
        weightDecay: 0.1,
      },
    );
    return { model, optimizer, batches: new Generator(8), dropout: dropoutGenerator };
  }

  const schedule = warmupCosine({ warmupSteps: 3, totalSteps: STEPS });

  function train(run: Run, steps: number): number[] {
    const losses: number[] = [];
    for (let i = 0; i < steps; i++) {
      losses.push(
        tidy(() => {
          const idx = randint(0, 64, [16], { generator: run.batches });
          const loss = crossEntropy(
            run.model.forward(indexSelect(data.x, 0, idx)),
            indexSelect(data.y, 0, idx),
          );
          loss.backward();
          clipGradNorm(run.model.parameters(), 1);
          run.optimizer.setLrScale(schedule(run.optimizer.steps));
          run.optimizer.step();
          run.optimizer.zeroGrad();
          return loss.itemSync();
        }),
      );
    }
    return losses;
  }

  it('20 steps straight = 10 steps, checkpoint, fresh model and optimizer, 10 more steps', async () => {
    const straight = setUp(1);
    const uninterrupted = train(straight, STEPS);

    const first = setUp(1);
    const firstHalf = train(first, STEPS / 2);
    await saveCheckpoint(join(dir, 'step-10'), {
      model: first.model,
      optimizer: first.optimizer,
      generators: { batches: first.batches, dropout: first.dropout },
      state: { losses: firstHalf },
    });
    first.model.dispose();
    first.optimizer.dispose();

    // Other initial weights, fresh generators at position 0: everything must come from the checkpoint.
    const second = setUp(2);
    const state = await loadCheckpoint<{ losses: number[] }>(join(dir, 'step-10'), {
      model: second.model,
      optimizer: second.optimizer,
      generators: { batches: second.batches, dropout: second.dropout },
    });
    const resumed = [...state.losses, ...train(second, STEPS / 2)];

    expect(resumed).toEqual(uninterrupted);
    expect(valuesOf(second.model)).toEqual(valuesOf(straight.model));
    expect(second.optimizer.steps).toBe(STEPS);
    expect(uninterrupted[STEPS - 1]).toBeLessThan(uninterrupted[0]);
    expect(new Set(uninterrupted).size).toBe(STEPS);
  });
});
