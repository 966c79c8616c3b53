import { Generator } from '@agent-r1/tensor';
import { describe, expect, it } from 'vitest';
import type { AgentEnv, StepResult } from '../src/mdp/env.js';
import { RenamingEnv } from '../src/mdp/renaming-env.js';
import { createTask } from '../src/tasks/index.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import type { AgentTask, EntityRenaming } from '../src/tasks/task.js';
import { resolveConfig } from '../src/trainer/config.js';
import { recordDemonstration, rewriteDemonstration } from '../src/trainer/demonstrations.js';
import { rlRenamings } from '../src/trainer/rl-renaming.js';
import { trainAgent } from '../src/trainer/trainer.js';

/** Answers each action with `saw <action>`, so what the inner env received is visible. */
class EchoEnv implements AgentEnv<string> {
  received: string[] = [];
  reset(question: string): string {
    return `Q: ${question}`;
  }
  async step(actionText: string): Promise<StepResult> {
    this.received.push(actionText);
    return { observation: `saw ${actionText}`, rewards: [], done: false, toolCalls: [], info: {} };
  }
}

const wholeWord = (name: string) =>
  new RegExp(`[^\\p{L}]${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\\p{L}]`, 'u');
const swap = (from: string, to: string) => (text: string) => text.replaceAll(from, to);
const paris: EntityRenaming = { apply: swap('Paris', 'Brelouk'), restore: swap('Brelouk', 'Paris') };

describe('RenamingEnv', () => {
  it('renames the prompt and observations, and restores actions before the inner env sees them', async () => {
    const inner = new EchoEnv();
    const env = new RenamingEnv(inner, (q) => (q.includes('Paris') ? paris : null));
    expect(await env.reset('where is Paris?')).toBe('Q: where is Brelouk?');
    const result = await env.step('<search> Brelouk</search>', [1, 2, 3]);
    expect(inner.received).toEqual(['<search> Paris</search>']);
    expect(result.observation).toBe('saw <search> Brelouk</search>');
    // An example without a renaming passes through untouched.
    expect(await env.reset('where is Rome?')).toBe('Q: where is Rome?');
    expect((await env.step('Brelouk', [])).observation).toBe('saw Brelouk');
  });
});

describe("rlRenamings (the task's renameChance in RL)", () => {
  const config = (chance: number, extra: string[] = []) =>
    resolveConfig({
      preset: 'multihop',
      overrides: [`taskOptions.renameEntities.rl=${chance}`, ...extra],
    });

  it('multihop QA: the scripted episode replayed with renamed actions earns the real rewards and reads renamed documents', async () => {
    const c = config(1);
    const task = (await createTask(c)) as AgentTask<QaExample>;
    const examples = task.train.slice(0, 6);
    const renamings = await rlRenamings(c, task, new Generator(5))!(examples);
    expect(renamings.size).toBe(examples.length);
    for (const [i, example] of examples.entries()) {
      const demo = await recordDemonstration(
        task.makeEnv(),
        example,
        task.scripted!(example, i),
        task.codec,
        {
          ...c.rollout,
          maxObservationTokens: 10_000,
        },
      );
      const renaming = renamings.get(example)!;
      const env = new RenamingEnv(task.makeEnv(), () => renaming);
      const prompt = await env.reset(example);
      expect(prompt).toBe(renaming.apply(demo.prompt));
      // Whole words only: a question may hold a longer word around a name ("Malaysian state").
      for (const name of example.entities ?? []) expect(` ${prompt} `).not.toMatch(wholeWord(name));
      for (const turn of demo.turns) {
        const action = renaming.apply(turn.action);
        const result = await env.step(action, task.codec.encode(action));
        expect(result.observation ?? '').toBe(renaming.apply(turn.observation));
        expect(result.rewards).toEqual(turn.rewards);
      }
    }
  }, 60_000);

  it('draws each example with the given chance, the same renamings from the same seed', async () => {
    const c = config(0.5);
    const task = (await createTask(c)) as AgentTask<QaExample>;
    const examples = task.train.slice(0, 40);
    const draw = (seed: number) => rlRenamings(c, task, new Generator(seed))!(examples);
    const [a, b] = [await draw(2), await draw(2)];
    expect(a.size).toBeGreaterThan(8);
    expect(a.size).toBeLessThan(32);
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [example, r] of a)
      expect(r.apply(example.question)).toBe(b.get(example)!.apply(example.question));
    expect(rlRenamings(config(0), await createTask(config(0)), new Generator(2))).toBeNull();
  }, 60_000);

  it('with train.renameToFit plays only renamings under which the demonstration fits the limits', async () => {
    const plain = config(1);
    const task = (await createTask(plain)) as AgentTask<QaExample>;
    // Area comparisons: their two pages come close to the observation limit, so renamings often overflow it.
    const examples = task.train.filter((e) => e.kind === 'compare_area').slice(0, 30);
    const demos = await Promise.all(
      examples.map((e) =>
        recordDemonstration(
          task.makeEnv(),
          e,
          task.scripted!(e, task.train.indexOf(e)),
          task.codec,
          plain.rollout,
        ),
      ),
    );
    const overflowing = (renamings: Map<QaExample, EntityRenaming>) =>
      examples.filter((e, i) => {
        const r = renamings.get(e);
        return (
          r !== undefined && rewriteDemonstration(demos[i], task.codec, plain.rollout, r.apply) === undefined
        );
      }).length;
    const free = await rlRenamings(plain, task, new Generator(4))!(examples);
    expect(free.size).toBe(examples.length);
    expect(overflowing(free)).toBeGreaterThan(3);
    const fitted = await rlRenamings(config(1, ['train.renameToFit=true']), task, new Generator(4))!(
      examples,
    );
    expect(overflowing(fitted)).toBe(0);
    expect(fitted.size).toBeGreaterThan(0.9 * examples.length);
  }, 60_000);

  it('is refused, naming the task, for a task that asks for renaming it cannot do', async () => {
    const c = resolveConfig({
      preset: 'reveal',
      overrides: ['sft.steps=0', 'train.steps=1', 'log.progress=none'],
    });
    const task = { ...(await createTask(c)), renameChance: () => 0.5 };
    await expect(trainAgent(c, task)).rejects.toThrow(/task "reveal" renames entities in RL \(chance 0.5\)/);
  });
});
