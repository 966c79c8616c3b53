import { TransformerLM } from '@agent-r1/nn';
import { Generator, noGrad, tensor } from '@agent-r1/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildBatch } from '../src/algorithms/batch.js';
import { type Trajectory, startTrajectory } from '../src/mdp/trajectory.js';
import type { TextCodec } from '../src/rollout/config.js';
import { type ImitationReport, imitationReport, imitationTable } from '../src/evaluation/imitation.js';
import { sequenceForward } from '../src/trainer/sequence.js';

/** Ids 0–5 are the tags; the rest are one-letter words. */
const WORDS = ['<search>', '</search>', '<answer>', '</answer>', '<think>', '</think>', ...'abcdefghijkl'];
const [THINK, END_THINK] = [4, 5];
const V = WORDS.length;
const codec: TextCodec = {
  encode: (text) => text.split(' ').map((w) => WORDS.indexOf(w)),
  decode: (ids) => Array.from(ids, (i) => WORDS[i]).join(' '),
};

/**
 * A prompt, then `<search> x y </search>`, an observation, then `<answer> z </answer>` (random words);
 * where it plans, `<think> p </think>` before the search and `<think> </think>` before the answer.
 */
function demonstration(generator: Generator, plan = false): Trajectory {
  const word = () => 6 + Math.floor(generator.random() * (V - 6));
  const t = startTrajectory(0, [word(), word(), word()]);
  const append = (ids: number[], mask: 0 | 1) => {
    for (const id of ids) {
      t.tokens.push(id);
      t.actionMask.push(mask);
      t.logprobs.push(0);
    }
  };
  for (const [action, observation] of [
    [
      [...(plan ? [THINK, word(), END_THINK] : []), 0, word(), word(), 1],
      [word(), word()],
    ],
    [[...(plan ? [THINK, END_THINK] : []), 2, word(), 3], []],
  ]) {
    const actionStart = t.tokens.length;
    append(action, 1);
    const observationStart = t.tokens.length;
    append(observation, 0);
    t.turns.push({
      actionStart,
      actionEnd: observationStart,
      observationStart,
      observationEnd: t.tokens.length,
    });
  }
  return t;
}

describe('imitationReport', () => {
  const model = new TransformerLM({
    vocabSize: V,
    dModel: 16,
    layers: 1,
    heads: 2,
    maxLength: 32,
    copyHead: true,
    dtype: 'float64',
    seed: 5,
  });
  const generator = new Generator(11);
  const demos = Array.from({ length: 6 }, () => demonstration(generator));
  let report: ImitationReport;
  beforeAll(async () => {
    report = await imitationReport(model, demos, codec);
  });

  it('groups every action token by turn and part', () => {
    expect(report.groups.map((g) => `${g.turn} ${g.part} ${g.tokens}`)).toEqual([
      'answer 1 open 6',
      'answer 1 first 6',
      'answer 1 close 6',
      'search 1 open 6',
      'search 1 first 6',
      'search 1 inside 6',
      'search 1 close 6',
    ]);
    expect(imitationTable(report)).toContain('| search 1 | inside | 6 |');
  });

  it('puts the plan before a call in a part of its own, and names the turn by its call', async () => {
    const planned = await imitationReport(model, [demonstration(new Generator(13), true)], codec);
    expect(planned.groups.map((g) => `${g.turn} ${g.part} ${g.tokens}`)).toEqual([
      'answer 1 plan 2',
      'answer 1 open 1',
      'answer 1 first 1',
      'answer 1 close 1',
      'search 1 plan 3',
      'search 1 open 1',
      'search 1 first 1',
      'search 1 inside 1',
      'search 1 close 1',
    ]);
  });

  it("gives the tokens' log-likelihoods and greedy choices of a full teacher-forced pass", () => {
    const batch = buildBatch(demos);
    const rows = demos.map((_, i) => i);
    const logprobs = noGrad(() => sequenceForward(model, batch, rows).logprobs.dataSync());
    let [nll, hits, tokens, allGreedy] = [0, 0, 0, 0];
    for (const [r, demo] of demos.entries()) {
      const T = demo.tokens.length;
      const logits = noGrad(() =>
        model.forward(tensor([demo.tokens.slice(0, T - 1)], { dtype: 'int32' })).logits.dataSync(),
      );
      let every = true;
      for (let t = 1; t < T; t++) {
        if (!demo.actionMask[t]) continue;
        const row = Array.from(logits.subarray((t - 1) * V, t * V));
        const greedy = row.indexOf(Math.max(...row)) === demo.tokens[t];
        nll -= logprobs[r * batch.length + t];
        hits += greedy ? 1 : 0;
        every &&= greedy;
        tokens++;
      }
      allGreedy += every ? 1 : 0;
    }
    expect(hits).toBeGreaterThan(0);
    expect(report.demonstrations).toBe(6);
    expect(report.nll).toBeCloseTo(nll / tokens, 9);
    expect(report.accuracy).toBeCloseTo(hits / tokens, 12);
    expect(report.allGreedy).toBeCloseTo(allGreedy / 6, 12);
    const weighted = report.groups.reduce((s, g) => s + g.nll * g.tokens, 0);
    expect(weighted / tokens).toBeCloseTo(report.nll, 9);
  });

  it("counts a demonstration of the policy's own greedy choices as imitated exactly", async () => {
    const own = demonstration(new Generator(12));
    for (let t = 1; t < own.tokens.length; t++) {
      if (!own.actionMask[t]) continue;
      const logits = noGrad(() =>
        model.forward(tensor([own.tokens.slice(0, t)], { dtype: 'int32' })).logits.dataSync(),
      );
      const last = Array.from(logits.subarray((t - 1) * V, t * V));
      own.tokens[t] = last.indexOf(Math.max(...last));
    }
    const mixed = await imitationReport(model, [own, demos[0]], codec);
    expect(mixed.allGreedy).toBe(0.5);
    expect((await imitationReport(model, [own], codec)).accuracy).toBe(1);
  });
});
