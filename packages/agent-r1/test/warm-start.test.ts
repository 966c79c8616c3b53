import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdamW } from '@agent-r1/nn';
import { Generator } from '@agent-r1/tensor';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTask } from '../src/tasks/index.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import { type TrainConfig, resolveConfig } from '../src/trainer/config.js';
import {
  RENAME_TRIES,
  demonstrate,
  demonstrationTexts,
  encodeDemonstration,
  recordDemonstration,
  renamedDemonstration,
  rewriteDemonstration,
} from '../src/trainer/demonstrations.js';
import { buildPolicy } from '../src/trainer/models.js';
import { sftStep } from '../src/trainer/sft.js';
import { WARM_START_METRICS, lengthBucketedBatches, warmStart } from '../src/trainer/warm-start.js';
import { interrupt } from './support/interruptible-sft.js';
import { expectMovingAverage } from './support/weight-average.js';

// sftStep made to throw after some steps: an interrupted run.
vi.mock('../src/trainer/sft.js', async (importOriginal) =>
  (await import('./support/interruptible-sft.js')).interruptible(await importOriginal()),
);

const root = mkdtempSync(join(tmpdir(), 'agent-r1-warm-start-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A tiny model on the reveal task (the default) or on multihop QA, with a warm start of `steps` steps. */
const REVEAL = {
  overrides: [
    'task=reveal',
    'model.maxLength=16',
    'rollout.maxTurns=3',
    'rollout.maxTokensPerTurn=4',
    'rollout.maxLength=16',
    'rollout.maxObservationTokens=4',
    'sft.demonstrations=24',
    'sft.batchSize=5',
    'sft.warmupSteps=2',
    'checkpoint.every=2',
  ],
};
const MULTIHOP = {
  preset: 'multihop',
  // Observations of 3 documents whole, with room for longer names: renamings fit, so these tests do not
  // hang on how close the preset's observations come to its limit.
  overrides: [
    'sft.demonstrations=6',
    'sft.batchSize=3',
    'checkpoint.every=1',
    'rollout.maxObservationTokens=160',
  ],
};

function config(
  name: string,
  steps: number,
  resume: boolean,
  extra: string[] = [],
  task: { preset?: string; overrides: string[] } = REVEAL,
): TrainConfig {
  return resolveConfig({
    preset: task.preset,
    overrides: [
      'model.dModel=16',
      'model.layers=1',
      'model.heads=2',
      'model.kvHeads=1',
      ...task.overrides,
      `sft.steps=${steps}`,
      'train.microBatchSize=3',
      `checkpoint.dir=${join(root, name, 'ckpt')}`,
      `checkpoint.resume=${resume}`,
      `log.dir=${join(root, name)}`,
      'log.progress=none',
      ...extra,
    ],
  });
}

const weights = (policy: ReturnType<typeof buildPolicy>) =>
  [...policy.namedParameters()].map(([name, p]) => [name, Array.from(p.dataSync())] as const);

const losses = (c: TrainConfig) =>
  readFileSync(join(c.log.dir, WARM_START_METRICS), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const { step, sftLoss, sftContextLoss } = JSON.parse(line);
      return { step, sftLoss, sftContextLoss };
    });

describe('lengthBucketedBatches', () => {
  it('covers every demonstration once per pass, in batches of similar length, reproducibly', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 1000 }),
        (lengths, batchSize, seed) => {
          const batches = lengthBucketedBatches(lengths, batchSize, new Generator(seed));
          expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
          for (const b of batches) expect(b.length).toBeLessThanOrEqual(batchSize);
          expect(lengthBucketedBatches(lengths, batchSize, new Generator(seed))).toEqual(batches);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('pads less than batches in random order', () => {
    const g = new Generator(3);
    const lengths = Array.from({ length: 512 }, () => 20 + Math.floor(g.random() * 300));
    const padding = (batches: number[][]) =>
      batches.reduce((sum, b) => {
        const longest = Math.max(...b.map((i) => lengths[i]));
        return sum + b.reduce((s, i) => s + longest - lengths[i], 0);
      }, 0);
    const bucketed = padding(lengthBucketedBatches(lengths, 16, new Generator(0)));
    const random = padding(
      Array.from({ length: 32 }, (_, k) => Array.from({ length: 16 }, (_, i) => k * 16 + i)),
    );
    expect(bucketed).toBeLessThan(random / 3);
  });

  it('without bucketing (sft.bucketByLength=false) mixes lengths in a batch, drawing the same numbers', () => {
    // Two behaviours of two lengths, as a toy task's guesses (4 tokens) and tool calls (8).
    const lengths = Array.from({ length: 128 }, (_, i) => (i % 10 < 3 ? 8 : 4));
    const mixed = (batches: number[][]) => batches.filter((b) => new Set(b.map((i) => lengths[i])).size > 1);
    const g1 = new Generator(5);
    const g2 = new Generator(5);
    expect(mixed(lengthBucketedBatches(lengths, 64, g1))).toHaveLength(1);
    expect(mixed(lengthBucketedBatches(lengths, 64, g2, false))).toHaveLength(2);
    expect(g1.random()).toBe(g2.random());
  });
});

/** Six scripted demonstrations of a tiny config's task (reveal by default), and one fresh sftStep from the same weights. */
async function sftFixture(name: string, taskConfig = REVEAL) {
  const c = config(name, 1, false, [], taskConfig);
  const task = await createTask(c);
  const demos = await Promise.all(
    task.train
      .slice(0, 6)
      .map((ex, i) => demonstrate(task.makeEnv(), ex, task.scripted!(ex, i), task.codec, c.rollout)),
  );
  const step = async (options: {
    contextWeight?: number;
    answerWeight?: number;
    decisionWeight?: number;
    toolWeights?: ReadonlyMap<string, number>;
  }) => {
    const policy = buildPolicy(c, task.vocabSize);
    const optimizer = new AdamW(policy.parameters(), { lr: 0.01 });
    const result = await sftStep(policy, optimizer, demos, { microBatchSize: 4, gradClip: 1, ...options });
    const after = weights(policy);
    policy.dispose();
    optimizer.dispose();
    return { result, after };
  };
  return { demos, step };
}

describe('sftStep', () => {
  it('reports the action loss whatever the context weight, and trains on context tokens when asked', async () => {
    const { step } = await sftFixture('context');
    const plain = await step({ contextWeight: 0 });
    const withContext = await step({ contextWeight: 0.5 });
    expect(Number.isNaN(plain.result.contextLoss)).toBe(true);
    expect(withContext.result.contextLoss).toBeGreaterThan(0);
    expect(withContext.result.loss).toBeCloseTo(plain.result.loss, 10);
    expect(withContext.after).not.toEqual(plain.after);
  });

  it("weights each demonstration's answer after its tag: the loss is the weighted token mean, and the update moves", async () => {
    const { demos, step } = await sftFixture('answer');
    // Action tokens of the last turns after their first (the answer tag, weighted as any action's), and
    // the others.
    let last = 0;
    let all = 0;
    for (const d of demos) {
      const turn = d.turns.at(-1)!;
      for (let t = 0; t < d.tokens.length; t++) {
        if (!d.actionMask[t]) continue;
        all++;
        if (t > turn.actionStart && t < turn.actionEnd) last++;
      }
    }
    const other = all - last;
    expect(last).toBeGreaterThan(0);
    expect(other).toBeGreaterThan(0);
    const run = (answerWeight: number) => step({ answerWeight });
    // Two runs give the NLL sums of the other actions (A) and of the last ones (B); a third must agree.
    const one = await run(1);
    const three = await run(3);
    const B = (three.result.loss * (other + 3 * last) - one.result.loss * all) / 2;
    const A = one.result.loss * all - B;
    const five = await run(5);
    // float32 losses: agreement to 1e-5.
    expect(five.result.loss).toBeCloseTo((A + 5 * B) / (other + 5 * last), 5);
    expect(three.after).not.toEqual(one.after);
  });

  it("weights each action's first token (the choice of tool or answer) apart from the answer", async () => {
    // Multi-hop episodes: a search call's tokens after its tag are neither a decision nor the answer.
    const { demos, step } = await sftFixture('decision', MULTIHOP);
    // Token counts: each action's first token (D), the last action's other tokens (B), the rest (O).
    const n = { D: 0, B: 0, O: 0 };
    for (const d of demos) {
      const starts = new Set(d.turns.map((turn) => turn.actionStart));
      const last = d.turns.at(-1)!;
      for (let t = 0; t < d.tokens.length; t++) {
        if (!d.actionMask[t]) continue;
        if (starts.has(t)) n.D++;
        else if (t > last.actionStart && t < last.actionEnd) n.B++;
        else n.O++;
      }
    }
    expect(Math.min(n.D, n.B, n.O)).toBeGreaterThan(0);
    const run = (answerWeight: number, decisionWeight: number) => step({ answerWeight, decisionWeight });
    // Three runs give the three classes' NLL sums; a fourth with other weights must agree with them.
    const total = (r: { result: { loss: number } }, a: number, d: number) =>
      r.result.loss * (n.O + d * n.D + a * n.B);
    const plain = total(await run(1, 1), 1, 1); // O + D + B
    const D = (total(await run(1, 3), 1, 3) - plain) / 2;
    const B = (total(await run(3, 1), 3, 1) - plain) / 2;
    const O = plain - D - B;
    const mixed = await run(5, 2);
    // float32 losses: agreement to 1e-5.
    expect(mixed.result.loss).toBeCloseTo((O + 2 * D + 5 * B) / (n.O + 2 * n.D + 5 * n.B), 5);
    expect(mixed.after).not.toEqual((await run(5, 1)).after);
  });

  it("weights the tokens of a named tool's calls after their tag, apart from the tags and the answer", async () => {
    const { demos, step } = await sftFixture('tools', MULTIHOP);
    // Token counts: each action's first token (D), the last action's other tokens (B), the other tokens of
    // the actions that call search (S), the rest (O).
    const n = { D: 0, B: 0, S: 0, O: 0 };
    for (const d of demos) {
      const starts = new Set(d.turns.map((turn) => turn.actionStart));
      const last = d.turns.at(-1)!;
      const searches = d.toolCalls.filter((c) => c.name === 'search').map((c) => d.turns[c.turn]);
      for (let t = 0; t < d.tokens.length; t++) {
        if (!d.actionMask[t]) continue;
        if (starts.has(t)) n.D++;
        else if (t > last.actionStart && t < last.actionEnd) n.B++;
        else if (searches.some((turn) => t > turn.actionStart && t < turn.actionEnd)) n.S++;
        else n.O++;
      }
    }
    expect(Math.min(n.D, n.B, n.S)).toBeGreaterThan(0);
    const run = (answer: number, decision: number, search: number) =>
      step({ answerWeight: answer, decisionWeight: decision, toolWeights: new Map([['search', search]]) });
    // Four runs give the four classes' NLL sums; a fifth with other weights must agree with them.
    const total = (r: { result: { loss: number } }, a: number, d: number, s: number) =>
      r.result.loss * (n.O + d * n.D + a * n.B + s * n.S);
    const plain = total(await run(1, 1, 1), 1, 1, 1);
    const D = (total(await run(1, 3, 1), 1, 3, 1) - plain) / 2;
    const B = (total(await run(3, 1, 1), 3, 1, 1) - plain) / 2;
    const S = (total(await run(1, 1, 3), 1, 1, 3) - plain) / 2;
    const O = plain - D - B - S;
    const mixed = await run(5, 2, 4);
    // float32 losses: agreement to 1e-5.
    expect(mixed.result.loss).toBeCloseTo(
      (O + 2 * D + 5 * B + 4 * S) / (n.O + 2 * n.D + 5 * n.B + 4 * n.S),
      5,
    );
    expect(mixed.after).not.toEqual((await run(5, 2, 1)).after);
  });
});

describe('warmStart', () => {
  it.each([
    [
      'calculator=2',
      "sft.toolWeights: no demonstration calls tool 'calculator' (they call: compare, search)",
    ],
    ['search=0', "sft.toolWeights: expected tool=factor with a factor above 0, got 'search=0'"],
    ['search=2,search=3', "sft.toolWeights: tool 'search' is given twice"],
  ])(
    'refuses sft.toolWeights=%s, naming the tool',
    async (weights, message) => {
      const c = config(
        'tool-weights',
        1,
        false,
        [`sft.toolWeights=${weights}`, 'sft.demonstrations=40'],
        MULTIHOP,
      );
      const task = await createTask(c);
      const policy = buildPolicy(c, task.vocabSize);
      await expect(warmStart(c, task, policy, () => {})).rejects.toThrow(message);
      policy.dispose();
    },
    60_000,
  );

  it('resumes an interrupted warm start exactly where it stopped', async () => {
    const task = await createTask(config('task', 1, false));
    const straight = config('straight', 6, false, ['sft.contextWeight=0.3']);
    const p1 = buildPolicy(straight, task.vocabSize);
    await warmStart(straight, task, p1, () => {});

    const partial = config('resumed', 3, false, ['sft.contextWeight=0.3']);
    const p2 = buildPolicy(partial, task.vocabSize);
    await warmStart(partial, task, p2, () => {});
    const resumed = config('resumed', 6, true, ['sft.contextWeight=0.3']);
    const p3 = buildPolicy(resumed, task.vocabSize);
    const lines: string[] = [];
    await warmStart(resumed, task, p3, (l) => lines.push(l));

    expect(lines[0]).toMatch(/resumed from .* at step 3/);
    expect(weights(p3)).toEqual(weights(p1));
    expect(losses(resumed)).toEqual(losses(straight));
    expect(losses(straight).map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const p of [p1, p2, p3]) p.dispose();
  }, 120_000);

  it('with sft.dropout trains otherwise than without, reproducibly, and resumes exactly', async () => {
    const task = await createTask(config('task', 1, false));
    const trained = async (name: string, steps: number, resume: boolean, extra: string[]) => {
      const c = config(name, steps, resume, extra);
      const policy = buildPolicy(c, task.vocabSize);
      await warmStart(c, task, policy, () => {});
      const w = weights(policy);
      policy.dispose();
      return { c, w };
    };
    const dropout = ['sft.dropout=0.2'];
    const straight = await trained('dropout', 4, false, dropout);
    expect((await trained('dropout-again', 4, false, dropout)).w).toEqual(straight.w);
    expect((await trained('no-dropout', 4, false, [])).w).not.toEqual(straight.w);
    await trained('dropout-resumed', 2, false, dropout);
    const resumed = await trained('dropout-resumed', 4, true, dropout);
    expect(resumed.w).toEqual(straight.w);
    expect(losses(resumed.c)).toEqual(losses(straight.c));
  }, 120_000);

  it('says so when there are fewer training examples than sft.demonstrations asks for', async () => {
    const c = config('few', 1, false, ['sft.demonstrations=100000']);
    const task = await createTask(c);
    const policy = buildPolicy(c, task.vocabSize);
    const lines: string[] = [];
    await warmStart(c, task, policy, (l) => lines.push(l));
    expect(lines).toContain(
      `warm start: sft.demonstrations is 100000 but task "reveal" has ${task.train.length} training examples; demonstrating those`,
    );
    policy.dispose();
  }, 60_000);
});

describe('warmStart with a weight average (sft.emaDecay)', () => {
  const decay = 0.6;
  const run = async (name: string, steps: number, resume: boolean, extra: string[] = []) => {
    const c = config(name, steps, resume, extra);
    const task = await createTask(c);
    const policy = buildPolicy(c, task.vocabSize);
    const lines: string[] = [];
    await warmStart(c, task, policy, (l) => lines.push(l));
    const w = weights(policy);
    policy.dispose();
    return { c, w, lines };
  };

  it('ends with the bias-corrected average of the steps’ weights, the steps themselves unchanged', async () => {
    // The plain stage stopped after k steps gives the k-th step's weights (a constant rate: the
    // schedule does not depend on the step count).
    const iterates: ReturnType<typeof weights>[] = [];
    for (let k = 1; k <= 4; k++) iterates.push((await run(`iterate-${k}`, k, false)).w);
    const averaged = await run('averaged', 4, false, [`sft.emaDecay=${decay}`]);
    expect(losses(averaged.c)).toEqual(losses(config('iterate-4', 4, false)));
    expectMovingAverage(averaged.w, iterates, decay);
    expect(averaged.w).not.toEqual(iterates[3]);
  }, 120_000);

  it('resumes the average with an interrupted stage, and a finished stage as its averaged weights', async () => {
    const ema = [`sft.emaDecay=${decay}`];
    const straight = await run('ema-straight', 6, false, ema);
    Object.assign(interrupt, { afterSteps: 5, done: 0 }); // the checkpoint of step 4 (checkpoint.every=2) survives
    await expect(run('ema-resumed', 6, false, ema)).rejects.toThrow(/interrupted/);
    interrupt.afterSteps = Number.POSITIVE_INFINITY;
    const resumed = await run('ema-resumed', 6, true, ema);
    expect(resumed.lines[0]).toMatch(/resumed from .* at step 4/);
    expect(resumed.w).toEqual(straight.w);
    expect(losses(resumed.c)).toEqual(losses(straight.c));
    const again = await run('ema-resumed', 6, true, ema);
    expect(again.lines[0]).toMatch(/is complete \(step 6\)/);
    expect(again.w).toEqual(straight.w);
    // Its weights are the average: continuing them as if they were the last step's would be wrong.
    await expect(run('ema-resumed', 8, true, ema)).rejects.toThrow(
      /finished at step 6 and holds the average .* cannot be continued to 8 steps/,
    );
  }, 120_000);

  it('refuses a decay of 1 or more, naming the key', () => {
    expect(() => config('bad', 1, false, ['sft.emaDecay=1'])).toThrow(/sft\.emaDecay.*\[0, 1\)/);
  });
});

describe('warmStart learning-rate schedules', () => {
  const rates = async (name: string, extra: string[]) => {
    const c = config(name, 6, false, ['sft.lr=0.02', ...extra]);
    const task = await createTask(c);
    const policy = buildPolicy(c, task.vocabSize);
    await warmStart(c, task, policy, () => {});
    policy.dispose();
    return readFileSync(join(c.log.dir, WARM_START_METRICS), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).sftLr as number);
  };

  it('ramps up over sft.warmupSteps (the first step at lr / warmupSteps), then holds lr by default', async () => {
    expect(await rates('lr-constant', [])).toEqual([0.01, 0.02, 0.02, 0.02, 0.02, 0.02]);
  });

  it('decays to sft.minLrRatio × lr at the last step with a cosine or linear schedule', async () => {
    const cosine = await rates('lr-cosine', ['sft.schedule=cosine', 'sft.minLrRatio=0.1']);
    const linear = await rates('lr-linear', ['sft.schedule=linear', 'sft.minLrRatio=0.1']);
    // Warmup 2 steps, then 4 steps of decay: progress 1/4, 2/4, 3/4, 4/4 after the peak.
    const decay = (f: (p: number) => number) => [
      0.01,
      0.02,
      ...[1, 2, 3, 4].map((k) => 0.02 * (0.1 + 0.9 * f(k / 4))),
    ];
    const expected = {
      cosine: decay((p) => 0.5 * (1 + Math.cos(Math.PI * p))),
      linear: decay((p) => 1 - p),
    };
    for (let i = 0; i < 6; i++) {
      expect(cosine[i]).toBeCloseTo(expected.cosine[i], 12);
      expect(linear[i]).toBeCloseTo(expected.linear[i], 12);
    }
    expect(cosine.at(-1)).toBeCloseTo(0.002, 12);
  });
});

const multihopConfig = (name: string, steps: number, resume: boolean, extra: string[] = []) =>
  config(name, steps, resume, extra, MULTIHOP);

/** A warm start of each config, each with its task (a task's options shape its warm start's data). */
async function trainEach(configs: readonly TrainConfig[]) {
  const policies = [];
  for (const c of configs) {
    const task = await createTask(c);
    const p = buildPolicy(c, task.vocabSize);
    await warmStart(c, task, p, () => {});
    policies.push(p);
  }
  return policies;
}

describe('warmStart with sft.successfulOnly', () => {
  it('trains on the demonstrations that earned an outcome reward only, and says how many', async () => {
    const c = config('successful', 2, false, ['sft.successfulOnly=true']);
    const task = await createTask(c);
    const lines: string[] = [];
    const policy = buildPolicy(c, task.vocabSize);
    await warmStart(c, task, policy, (l) => lines.push(l));
    const kept = /(\d+) of 24 demonstrations succeeded/.exec(lines.join('\n'));
    expect(kept).not.toBeNull();
    // The reveal task's scripted policy guesses in most episodes, and a guess is mostly wrong.
    expect(Number(kept![1])).toBeGreaterThan(0);
    expect(Number(kept![1])).toBeLessThan(24);
    expect(lines.at(-1)).toMatch(new RegExp(`2 steps on ${kept![1]} demonstrations`));
    policy.dispose();
  });
});

describe('demonstrations with rewritten text', () => {
  it('lay out as demonstrate does without a rewrite, and are refused when a rewrite overflows a limit', async () => {
    const c = multihopConfig('rewrite', 1, false);
    const task = await createTask(c);
    // Observations well inside the observation limit.
    const i = task.train.findIndex((e) => (e as QaExample).kind === 'place_country');
    const ex = task.train[i];
    const demo = await recordDemonstration(task.makeEnv(), ex, task.scripted!(ex, i), task.codec, c.rollout);
    const plain = await demonstrate(task.makeEnv(), ex, task.scripted!(ex, i), task.codec, c.rollout);
    expect(encodeDemonstration(demo, task.codec, c.rollout)).toEqual(plain);
    expect(rewriteDemonstration(demo, task.codec, c.rollout, (t) => t)).toEqual(plain);
    const renamed = rewriteDemonstration(demo, task.codec, c.rollout, (t) => t.replaceAll('the', 'THE'));
    const actions = (t: typeof plain) =>
      t.turns.map((turn) => task.codec.decode(t.tokens.slice(turn.actionStart, turn.actionEnd)));
    expect(actions(renamed!)).toEqual(actions(plain).map((a) => a.replaceAll('the', 'THE')));
    expect(task.codec.decode(renamed!.tokens)).toBe(task.codec.decode(plain.tokens).replaceAll('the', 'THE'));
    const long = ` ${'padding '.repeat(c.rollout.maxObservationTokens)}`;
    expect(
      rewriteDemonstration(demo, task.codec, c.rollout, (t) => (t.includes('</result>') ? t + long : t)),
    ).toBeUndefined();
  }, 120_000);

  it('renamed to fit (sft.renameToFit): a last draw after the free ones, of names that keep the texts short', async () => {
    // The preset's observation limit, which area comparisons' two pages come close to.
    const c = multihopConfig('to-fit', 1, false, ['rollout.maxObservationTokens=96']);
    const task = await createTask(c);
    const comparisons = task.train.filter((e) => (e as QaExample).kind === 'compare_area').slice(0, 60);
    const generator = new Generator(0);
    let unfit = 0;
    let fitted = 0;
    for (const ex of comparisons) {
      const i = task.train.indexOf(ex);
      const demo = await recordDemonstration(
        task.makeEnv(),
        ex,
        task.scripted!(ex, i),
        task.codec,
        c.rollout,
      );
      const texts = demonstrationTexts(demo);
      let draws = 0;
      let drawsToFit = 0;
      const draw = (fit?: 'no-longer') => {
        if (fit === 'no-longer') drawsToFit++;
        else draws++;
        return task.renameEntities!(ex, texts, generator, 'warm-start', fit);
      };
      const renamed = renamedDemonstration(demo, task.codec, c.rollout, draw, true);
      if (drawsToFit === 0) {
        expect(renamed).toBeDefined();
        continue;
      }
      // The shorter draws come only after all the free ones failed, and are as many at most.
      unfit++;
      expect(draws).toBe(RENAME_TRIES);
      expect(drawsToFit).toBeLessThanOrEqual(RENAME_TRIES);
      if (renamed === undefined) continue;
      fitted++;
      // Renamed: the prompt no longer asks the question as the dataset does.
      const prompt = task.codec.decode(renamed.trajectory.tokens.slice(0, renamed.trajectory.promptLength));
      expect(prompt).not.toContain((ex as QaExample).question);
    }
    expect(unfit).toBeGreaterThan(5);
    expect(fitted).toBeGreaterThan(0.8 * unfit);
  }, 120_000);

  it('a warm start with entity renaming trains on other text, and resumes exactly across passes', async () => {
    const rename = ['taskOptions.renameEntities.warmStart=1'];
    // The preset renames 9 demonstrations in 10: the plain run must not rename at all.
    const plain = multihopConfig('mh-plain', 4, false, ['taskOptions.renameEntities.warmStart=0']);
    const straight = multihopConfig('mh-straight', 4, false, rename);
    const partial = multihopConfig('mh-resumed', 3, false, rename);
    const resumed = multihopConfig('mh-resumed', 4, true, rename);
    const [p0, p1, p2, p3] = await trainEach([plain, straight, partial, resumed]);
    // 6 demonstrations in batches of 3: step 3 is the first of the second pass, drawn with new names.
    expect(losses(straight)[0].sftLoss).not.toBe(losses(plain)[0].sftLoss);
    expect(weights(p3)).toEqual(weights(p1));
    expect(losses(resumed)).toEqual(losses(straight));
    for (const p of [p0, p1, p2, p3]) p.dispose();
  }, 240_000);

  it('a warm start with balanced kinds trains on another mix, and resumes exactly across passes', async () => {
    const balance = ['taskOptions.renameEntities.warmStart=0', 'taskOptions.balanceKinds.warmStart=1'];
    const task = await createTask(multihopConfig('bal-task', 1, false));
    const kinds = new Set(task.train.slice(0, 6).map((e) => (e as QaExample).kind));
    expect(kinds.size).toBeGreaterThan(1);
    expect(kinds.size).toBeLessThan(6);
    const plain = multihopConfig('bal-plain', 4, false, ['taskOptions.renameEntities.warmStart=0']);
    const straight = multihopConfig('bal-straight', 4, false, balance);
    const partial = multihopConfig('bal-resumed', 3, false, balance);
    const resumed = multihopConfig('bal-resumed', 4, true, balance);
    const policies = await trainEach([plain, straight, partial, resumed]);
    expect(losses(straight).map((r) => r.sftLoss)).not.toEqual(losses(plain).map((r) => r.sftLoss));
    expect(weights(policies[3])).toEqual(weights(policies[1]));
    expect(losses(resumed)).toEqual(losses(straight));
    for (const p of policies) p.dispose();
  }, 240_000);

  it('refuses a boosted kind that no example has, naming the option', async () => {
    await expect(
      createTask(multihopConfig('boost', 1, false, ['taskOptions.kindBoost.warmStart=no_such_kind=2'])),
    ).rejects.toThrow("taskOptions.kindBoost.warmStart: no example of kind 'no_such_kind'");
  });
});
