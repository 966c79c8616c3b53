import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTextEpisode } from '../src/mdp/text-episode.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import type { CompareOptions } from '../src/tasks/multihop-qa/env.js';
import { loadMultihopResources, multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import { hopTargets, planBefore } from '../src/tasks/multihop-qa/plan.js';
import type { AgentTask } from '../src/tasks/task.js';

const questions = () => {
  const { train, validation, test } = loadMultihopResources().dataset.questions;
  return [...train, ...validation, ...test];
};

describe('the plan of a question', () => {
  it("names each hop's target in the question's own words, one per search", () => {
    for (const q of questions()) {
      const targets = hopTargets(q);
      expect(targets, q.kind).toBeDefined();
      expect(targets, q.question).toHaveLength(q.supportingDocs.length);
      for (const target of targets!) expect(q.question, target).toMatch(new RegExp(`\\b${target}\\b`));
    }
  });

  it('drops a target with each search', () => {
    const chain = {
      kind: 'place_mid_capital',
      question:
        'What is the capital of the country containing the island group or island that Crete is part of?',
    } as const;
    expect([0, 1, 2, 3].map((searched) => planBefore(chain, searched))).toEqual([
      'island group or island country capital',
      'country capital',
      'capital',
      undefined,
    ]);
    expect(planBefore({ kind: 'user', question: 'Who wrote Hamlet?' }, 0)).toBeUndefined();
  });

  it('ends with the compare call where the question is compared with the tool', () => {
    const area = {
      kind: 'compare_area',
      question: 'Which country has the larger area, Peru or Chad?',
    } as const;
    const landlocked = {
      kind: 'compare_landlocked',
      question: 'Which of these two countries is landlocked, Peru or Chad?',
    } as const;
    const plans = (q: typeof area | typeof landlocked, tools: CompareOptions) =>
      [0, 1, 2, 3].map((called) => planBefore(q, called, tools));
    expect(plans(area, { compareTool: true })).toEqual([
      'area area compare',
      'area compare',
      'compare',
      undefined,
    ]);
    expect(plans(area, {})).toEqual(['area area', 'area', undefined, undefined]);
    // Landlocked comparisons call the tool only where it compares statements.
    expect(plans(landlocked, { compareTool: true })).toEqual([
      'landlocked landlocked',
      'landlocked',
      undefined,
      undefined,
    ]);
    expect(plans(landlocked, { compareTool: true, compareStatements: true })).toEqual([
      'landlocked landlocked compare',
      'landlocked compare',
      'compare',
      undefined,
    ]);
    // A chain has nothing to compare, whatever the tools.
    const chain = {
      kind: 'capital_currency',
      question: 'What currency is used in the country whose capital is Lima?',
    } as const;
    expect(planBefore(chain, 1, { compareTool: true, compareStatements: true })).toBe('currency');
  });
});

describe('multihop-qa with taskOptions.plan', () => {
  let planned: AgentTask<QaExample>;
  let plain: AgentTask<QaExample>;
  const tmp = mkdtempSync(join(tmpdir(), 'multihop-plan-'));
  const options = { compareTool: true };
  // Two tokenizers are trained here: seconds each, more on a busy machine than a hook's default 10 s.
  beforeAll(async () => {
    planned = await multihopQaTask(
      { rollout: { maxTurns: 4 }, taskOptions: { ...options, plan: true } },
      { cacheDir: tmp },
    );
    plain = await multihopQaTask({ rollout: { maxTurns: 4 }, taskOptions: options }, { cacheDir: tmp });
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('makes the think tags single tokens (and only then)', () => {
    for (const tag of ['<think>', '</think>']) {
      expect(planned.codec.encode(tag)).toHaveLength(1);
      expect(plain.codec.encode(tag).length).toBeGreaterThan(1);
    }
  });

  it('the scripted searcher thinks its plan before each tool call, and answers as it does without', async () => {
    let compareCalls = 0;
    for (const q of planned.test!) {
      const [withPlan, without] = await Promise.all([
        runTextEpisode(planned.makeEnv(), q, planned.scripted!(q, 0)),
        runTextEpisode(plain.makeEnv(), q, plain.scripted!(q, 0)),
      ]);
      // The environment reads the tags only: the same calls, the same answer.
      expect(withPlan.toolCalls, q.question).toEqual(without.toolCalls);
      expect(withPlan.info.em, q.question).toBe(without.info.em);
      let called = 0;
      withPlan.actions.forEach((action, turn) => {
        const plain = without.actions[turn];
        if (plain.startsWith('<answer>')) {
          // Nothing is left to call: the empty plan, then the answer.
          expect(action).toBe(hopTargets(q) === undefined ? plain : `<think></think>${plain}`);
          return;
        }
        if (plain.startsWith('<compare>')) {
          compareCalls++;
          expect(action).toBe(`<think> compare</think>${plain}`);
        } else expect(action).toBe(`<think> ${planBefore(q, called, options)}</think>${plain}`);
        called++;
      });
    }
    expect(compareCalls).toBeGreaterThan(0);
  });

  it('a chain plans its three searches, then answers', async () => {
    const chain = planned.test!.find((q) => q.kind === 'place_mid_currency' && /region/.test(q.question))!;
    const ep = await runTextEpisode(planned.makeEnv(), chain, planned.scripted!(chain, 0));
    expect(ep.info.em).toBe(1);
    expect(ep.actions.map((a) => /^<think> (.*?)<\/think>/.exec(a)?.[1])).toEqual([
      'region country currency',
      'country currency',
      'currency',
      undefined,
    ]);
    expect(ep.actions[3]).toMatch(/^<think><\/think><answer>/);
  });

  it('is refused for a pretrained model, which keeps its chat template', async () => {
    await expect(
      multihopQaTask(
        { rollout: { maxTurns: 4 }, taskOptions: { plan: true } },
        { cacheDir: tmp },
        { pretrained: {} as never },
      ),
    ).rejects.toThrow(/taskOptions.plan is for a policy trained from scratch/);
  });
});
