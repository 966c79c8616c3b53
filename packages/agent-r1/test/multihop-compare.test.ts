import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Generator } from '@agent-r1/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTextEpisode } from '../src/mdp/text-episode.js';
import { LARGEST, ONLY, compareTool, parseCompareValues } from '../src/tasks/multihop-qa/compare-tool.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import { comparisonOptions } from '../src/tasks/multihop-qa/scripted.js';
import {
  isSwappedComparison,
  loadMultihopResources,
  multihopQaTask,
  multihopTokenizer,
  withSwappedComparisons,
} from '../src/tasks/multihop-qa/index.js';
import type { AgentTask } from '../src/tasks/task.js';

const run = (values: unknown) => compareTool().execute({ values } as { values: string });

describe('the compare tool', () => {
  it('names the label of the largest number, whatever the order', async () => {
    expect(await run('Peru 1,285,216 ; Brazil 8,515,767')).toEqual({
      content: 'Largest: Brazil',
      success: true,
    });
    expect(await run('Brazil 8,515,767 ; Peru 1,285,216')).toEqual({
      content: 'Largest: Brazil',
      success: true,
    });
    expect((await run('Vatican City 0.44 ; Cook Islands 236 ; Malta 316')).content).toBe('Largest: Malta');
    expect((await run('A 12 ; B 12')).content).toBe('Tie: A, B');
  });

  it('refuses what is not "label number" items, naming the part', async () => {
    expect(parseCompareValues('Peru 1,285,216')).toEqual({ error: expect.stringContaining('two or more') });
    const bad = await run('Peru 1,285,216 ; Brazil is large');
    expect(bad.success).toBe(false);
    expect(bad.content).toContain('"Brazil is large"');
    expect((await run('Peru ; Brazil 3')).content).toContain('"Peru"');
    expect((await run(42)).success).toBe(false);
  });
});

describe("the compare tool's statements", () => {
  it('names the one of which the property holds, whatever the order', async () => {
    for (const values of [
      'Mongolia is landlocked ; Peru is not landlocked',
      'Peru is not landlocked ; Mongolia is landlocked',
    ])
      expect(await run(values)).toEqual({ content: 'Only: Mongolia', success: true });
    expect((await run('Peru is not landlocked ; Chile is not landlocked')).content).toBe(
      'None is landlocked',
    );
    expect((await run('Chad is landlocked ; Mali is landlocked ; Peru is not landlocked')).content).toBe(
      'More than one is landlocked: Chad, Mali',
    );
  });

  it('refuses numbers mixed with statements, two properties, and what is neither, naming the parts', async () => {
    const mixed = await run('Peru 1,285,216 ; Mongolia is landlocked');
    expect(mixed.success).toBe(false);
    expect(mixed.content).toContain('"Peru 1,285,216"');
    expect(mixed.content).toContain('"Mongolia is landlocked"');
    const two = await run('Mongolia is landlocked ; Peru is large');
    expect(two.success).toBe(false);
    expect(two.content).toContain('"landlocked" and "large"');
    expect((await run('Mongolia is landlocked ; Peru')).content).toContain('"Peru" is neither');
  });
});

describe('multihop-qa with taskOptions.compareTool', () => {
  let task: AgentTask<QaExample>;
  const tmp = mkdtempSync(join(tmpdir(), 'multihop-compare-'));
  const test = () => withSwappedComparisons(loadMultihopResources().dataset.questions.test);
  beforeAll(async () => {
    task = await multihopQaTask(
      { rollout: { maxTurns: 4 }, taskOptions: { compareTool: true } },
      { cacheDir: tmp },
    );
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('declares the tool: stop string, tags as single tokens, usage hint', async () => {
    expect(task.stopStrings).toEqual(['</search>', '</compare>', '</answer>']);
    const env = task.makeEnv();
    await env.reset(task.train[0]);
    const step = await env.step('nothing', []);
    expect(step.observation).toContain('<compare>values</compare>');
    // The tags, and the verdict's marker (so that the answer can copy the name after it).
    for (const tag of ['<compare>', '</compare>', LARGEST]) expect(task.codec.encode(tag)).toHaveLength(1);
  });

  it('a cached tokenizer that lacks a special token of the tool is trained again, not reused', async () => {
    const r = loadMultihopResources();
    const dir = mkdtempSync(join(tmpdir(), 'multihop-stale-'));
    try {
      await multihopTokenizer(r, { cacheDir: dir });
      const [plain] = readdirSync(dir);
      // The file a compare-tool tokenizer is cached as, holding one without the tool's tokens.
      copyFileSync(join(dir, plain), join(dir, plain.replace('.json', '-compare.json')));
      const tokenizer = await multihopTokenizer(r, { cacheDir: dir, compareTool: true });
      expect(tokenizer.specialTokens).toContain('<compare>');
      expect(tokenizer.encode('<compare>')).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with digitGroups the tokenizer reads a figure in digit runs, the same tokens in the call as in the document', async () => {
    const r = loadMultihopResources();
    const dir = mkdtempSync(join(tmpdir(), 'multihop-digits-'));
    try {
      const single = await multihopTokenizer(r, { cacheDir: dir, compareTool: true });
      const grouped = await multihopTokenizer(r, { cacheDir: dir, compareTool: true, digitGroups: true });
      expect(readdirSync(dir).filter((f) => f.endsWith('-compare-digits3.json'))).toHaveLength(1);
      expect(grouped.pretokenizer).toBe('split-punct-digits3');
      const pieces = (t: typeof grouped, text: string) => t.encode(text).map((id) => t.decode([id]));
      expect(pieces(single, '1,246,700')).toHaveLength(9);
      const figure = pieces(grouped, '1,246,700');
      expect(figure.join('')).toBe('1,246,700');
      expect(figure.length).toBeLessThanOrEqual(7);
      for (const piece of figure) expect(piece).toMatch(/^(\d{1,3}|,)$/);
      const sentence = pieces(grouped, 'Its area is 1,246,700 square kilometres.');
      const call = pieces(grouped, '<compare> Angola 1,246,700 ; Anguilla 91</compare>');
      expect(sentence.join('|')).toContain(figure.join('|'));
      expect(call.join('|')).toContain(figure.join('|'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the scripted searcher compares the two areas it read, once, and answers every comparison both ways', async () => {
    const comparisons = test().filter((q) => q.kind.startsWith('compare'));
    expect(comparisons.filter(isSwappedComparison).length * 2).toBe(comparisons.length);
    for (const q of comparisons) {
      const ep = await runTextEpisode(task.makeEnv(), q, task.scripted!(q, 0));
      expect(ep.info.em, q.question).toBe(1);
      const compares = ep.toolCalls.filter((c) => c.name === 'compare');
      if (q.kind === 'compare_landlocked') {
        expect(compares).toHaveLength(0);
        continue;
      }
      expect(compares).toHaveLength(1);
      // The figures as the documents write them, in the question's order of the options.
      const [x, y] = comparisonOptions(q.question)!;
      expect(compares[0].args).toEqual({ values: `${x} ${q.evidence![0]} ; ${y} ${q.evidence![1]}` });
    }
  });

  it('the answer is what the policy compared: the same call with the figures swapped gets the other country', async () => {
    const q = test().find((x) => x.kind === 'compare_area')!;
    const [x, y] = comparisonOptions(q.question)!;
    const [ax, ay] = q.evidence!;
    const misread = `<compare> ${x} ${ay} ; ${y} ${ax}</compare>`;
    const policy = (context: string) => {
      const result = /Largest: (.+?)<\/result>/.exec(context);
      return result ? `<answer> ${result[1]}</answer>` : misread;
    };
    const ep = await runTextEpisode(task.makeEnv(), q, policy);
    expect(ep.info.em).toBe(0);
    expect(ep.info.answer).not.toBe(q.answers[0]);
  });

  it("a renamed demonstration's call and result stay consistent: the renamed figures, the renamed winner", async () => {
    const q = test().find((x) => x.kind === 'compare_area')!;
    const ep = await runTextEpisode(task.makeEnv(), q, task.scripted!(q, 0));
    const texts = [ep.prompt, ...ep.actions, ...ep.observations.filter((o): o is string => o !== null)];
    for (let seed = 0; seed < 20; seed++) {
      const renaming = task.renameEntities!(q, texts, new Generator(seed), 'warm-start');
      const call = /<compare> (.+?)<\/compare>/.exec(renaming.apply(ep.actions[2]))![1];
      const result = await compareTool().execute({ values: call });
      expect(`\n<result>${result.content}</result>\n`).toBe(renaming.apply(ep.observations[2]!));
      expect(renaming.apply(ep.actions[3])).toBe(
        `<answer> ${result.content.slice('Largest: '.length)}</answer>`,
      );
    }
  });

  it('is off by default: the task has the search tool only, and the tokenizer no compare tags', async () => {
    const plain = await multihopQaTask({ rollout: { maxTurns: 4 } });
    expect(plain.stopStrings).toEqual(['</search>', '</answer>']);
    expect(plain.codec.encode('<compare>').length).toBeGreaterThan(1);
    const q = test().find((x) => x.kind === 'compare_area')!;
    const ep = await runTextEpisode(plain.makeEnv(), q, plain.scripted!(q, 0));
    expect(ep.toolCalls.map((c) => c.name)).toEqual(['search', 'search']);
  });
});

describe('multihop-qa with taskOptions.compareStatements', () => {
  let task: AgentTask<QaExample>;
  const tmp = mkdtempSync(join(tmpdir(), 'multihop-statements-'));
  const landlocked = () =>
    withSwappedComparisons(loadMultihopResources().dataset.questions.test).filter(
      (q) => q.kind === 'compare_landlocked',
    );
  beforeAll(async () => {
    task = await multihopQaTask(
      { rollout: { maxTurns: 4 }, taskOptions: { compareTool: true, compareStatements: true } },
      { cacheDir: tmp },
    );
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("makes the statements' verdict one token, and needs the compare tool", async () => {
    expect(task.codec.encode(ONLY)).toHaveLength(1);
    await expect(
      multihopQaTask(
        { rollout: { maxTurns: 4 }, taskOptions: { compareStatements: true } },
        { cacheDir: tmp },
      ),
    ).rejects.toThrow(/compareStatements needs taskOptions.compareTool/);
  });

  it('the scripted searcher compares the two statements as the pages write them, and answers the verdict', async () => {
    let called = 0;
    for (const q of landlocked()) {
      const ep = await runTextEpisode(task.makeEnv(), q, task.scripted!(q, 0));
      expect(ep.info.em, q.question).toBe(1);
      const compares = ep.toolCalls.filter((c) => c.name === 'compare');
      // Only where both geography pages were found (the search shows three documents).
      if (compares.length === 0) continue;
      called++;
      const [x, y] = comparisonOptions(q.question)!;
      const says = (c: string) => `${c} is ${q.answers[0] === c ? '' : 'not '}landlocked`;
      expect(compares[0].args).toEqual({ values: `${says(x)} ; ${says(y)}` });
      expect(ep.observations[2]).toBe(`\n<result>${ONLY} ${q.answers[0]}</result>\n`);
    }
    // Most of them: a comparison whose page is not among the three documents is answered by the reader.
    expect(called).toBeGreaterThan(landlocked().length * 0.9);
  });

  it('the answer is what the policy compared: a `not` moved to the other option gets the other country', async () => {
    const q = landlocked()[0];
    const [x, y] = comparisonOptions(q.question)!;
    const misread =
      q.answers[0] === x
        ? `${x} is not landlocked ; ${y} is landlocked`
        : `${x} is landlocked ; ${y} is not landlocked`;
    const policy = (context: string) => {
      const result = /Only: (.+?)<\/result>/.exec(context);
      return result ? `<answer> ${result[1]}</answer>` : `<compare> ${misread}</compare>`;
    };
    const ep = await runTextEpisode(task.makeEnv(), q, policy);
    expect(ep.info.em).toBe(0);
    expect(ep.info.answer).toBe(q.answers[0] === x ? y : x);
  });

  it('compareTool alone leaves the landlocked comparisons to the reader, and Only: ordinary text', async () => {
    const plain = await multihopQaTask(
      { rollout: { maxTurns: 4 }, taskOptions: { compareTool: true } },
      { cacheDir: tmp },
    );
    expect(plain.codec.encode(ONLY).length).toBeGreaterThan(1);
    const q = landlocked()[0];
    const ep = await runTextEpisode(plain.makeEnv(), q, plain.scripted!(q, 0));
    expect(ep.toolCalls.map((c) => c.name)).toEqual(['search', 'search']);
  });
});

describe('multihop-qa with taskOptions.comparisonsNeedVerdict', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'multihop-verdict-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const load = (comparisonsNeedVerdict: boolean) =>
    multihopQaTask(
      {
        rollout: { maxTurns: 4 },
        taskOptions: { compareTool: true, compareStatements: true, comparisonsNeedVerdict },
      },
      { cacheDir: tmp },
    );
  const outcome = (ep: { rewards: { kind: string; value: number }[] }) =>
    ep.rewards.filter((r) => r.kind === 'outcome').reduce((s, r) => s + r.value, 0);
  const comparison = (kind: QaExample['kind']) =>
    loadMultihopResources().dataset.questions.test.find((q) => q.kind === kind)!;
  /** Searches both options, makes `call`, then answers `answer` whatever the tool said. */
  const policy = (q: QaExample, call: string, answer: string) => {
    const [x, y] = comparisonOptions(q.question)!;
    const actions = [
      `<search> ${x} geography</search>`,
      `<search> ${y} geography</search>`,
      `<compare> ${call}</compare>`,
      `<answer> ${answer}</answer>`,
    ];
    let turn = 0;
    return () => actions[turn++];
  };

  it('pays a right answer that names the verdict, and not one after a refused call or against the verdict; the EM is unchanged', async () => {
    const [strict, lenient] = [await load(true), await load(false)];
    const q = comparison('compare_area');
    const [x, y] = comparisonOptions(q.question)!;
    const [ax, ay] = q.evidence!;
    const right = q.answers[0];
    const cases = [
      { call: `${x} ${ax} ; ${y} ${ay}`, paid: 1 },
      // Refused: a label without its figure.
      { call: `${x} ; ${y} ${ay}`, paid: 0 },
      // The figures swapped: the verdict names the other option, and the right answer goes against it.
      { call: `${x} ${ay} ; ${y} ${ax}`, paid: 0 },
    ];
    for (const { call, paid } of cases) {
      const ep = await runTextEpisode(strict.makeEnv(), q, policy(q, call, right));
      expect(ep.info.em, call).toBe(1);
      expect(outcome(ep), call).toBe(paid);
      expect(outcome(await runTextEpisode(lenient.makeEnv(), q, policy(q, call, right))), call).toBe(1);
    }
    // Other questions are paid as before: the scripted searcher's 1-hop answer.
    const other = strict.test!.find((e) => e.hops === 1 && !e.kind.startsWith('compare'))!;
    expect(outcome(await runTextEpisode(strict.makeEnv(), other, strict.scripted!(other, 0)))).toBe(1);
  });

  it("pays a landlocked comparison's answer only where it names the statements' verdict", async () => {
    const strict = await load(true);
    const q = comparison('compare_landlocked');
    const ep = await runTextEpisode(strict.makeEnv(), q, strict.scripted!(q, 0));
    expect(ep.toolCalls.some((c) => c.name === 'compare' && c.content.startsWith(ONLY))).toBe(true);
    expect(outcome(ep)).toBe(1);
    const [x, y] = comparisonOptions(q.question)!;
    const tie = await runTextEpisode(strict.makeEnv(), q, policy(q, `${x} 1 ; ${y} 1`, q.answers[0]));
    expect(tie.info.em).toBe(1);
    expect(outcome(tie)).toBe(0);
  });
});
