import { describe, expect, it } from 'vitest';
import {
  HermesFormat,
  makeSecretNumberTask,
  runTextEpisode,
  scriptedAction,
  type SecretNumberExample,
  type SecretNumberTask,
} from '../src/index.js';

async function play(task: SecretNumberTask, ex: SecretNumberExample) {
  return runTextEpisode(task.makeEnv(), ex, task.scriptedAction);
}

describe('secret-number task', () => {
  it('is generated from the seed', () => {
    const a = makeSecretNumberTask({ seed: 7, count: 50, keys: 8 });
    const b = makeSecretNumberTask({ seed: 7, count: 50, keys: 8 });
    const c = makeSecretNumberTask({ seed: 8, count: 50, keys: 8 });
    expect(a.examples).toEqual(b.examples);
    expect(a.examples).not.toEqual(c.examples);
    expect([...a.secrets.keys()]).toEqual(['K0', 'K1', 'K2', 'K3', 'K4', 'K5', 'K6', 'K7']);
    expect(new Set(a.examples.map((e) => e.key)).size).toBeGreaterThan(4);
    for (const e of a.examples) {
      expect(e.question).toBe(`What is the secret for key ${e.key}?`);
      expect(e.secret).toBe(a.secrets.get(e.key));
      expect(Number.isInteger(e.secret) && e.secret >= 0 && e.secret <= 99).toBe(true);
      expect(e.answers).toEqual([String(e.secret)]);
    }
  });

  it('the lookup tool answers "KEY: N"', async () => {
    const task = makeSecretNumberTask({ seed: 1, count: 3, keys: ['alpha', 'beta'] });
    const ex = task.examples[0];
    const env = task.makeEnv();
    expect(env.reset(ex)).toBe(`What is the secret for key ${ex.key}?\n`);
    expect(task.format.stop).toEqual(['</lookup>', '</answer>']);
    const r = await env.step(`<lookup>${ex.key}</lookup>`, []);
    expect(r.observation).toBe(`\n<result>${ex.key}: ${ex.secret}</result>\n`);
    const miss = await env.step('<lookup>gamma</lookup>', []);
    expect(miss.observation).toBe('\n<result>no secret for key "gamma"</result>\n');
  });

  it('the scripted policy reaches reward 1 on every example (tags format)', async () => {
    const task = makeSecretNumberTask({ seed: 42, count: 40, keys: 10 });
    for (const ex of task.examples) {
      const ep = await play(task, ex);
      expect(ep.total).toBe(1);
      expect(ep.actions).toEqual([`<lookup>${ex.key}</lookup>`, `<answer>${ex.secret}</answer>`]);
      expect(ep.info).toMatchObject({ em: 1, f1: 1, answer: String(ex.secret), reason: 'answer' });
    }
  });

  it('the scripted policy reaches reward 1 on every example (Hermes format, process rewards)', async () => {
    const task = makeSecretNumberTask({ seed: 3, count: 20, keys: 12, format: 'hermes', lookupReward: 0.1 });
    expect(task.format).toBeInstanceOf(HermesFormat);
    for (const ex of task.examples) {
      const ep = await play(task, ex);
      expect(ep.rewards).toEqual([
        { turn: 0, value: 0.1, kind: 'process' },
        { turn: 1, value: 1, kind: 'outcome' },
      ]);
      expect(ep.toolCalls[0]).toMatchObject({ name: 'lookup', args: { key: ex.key }, success: true });
    }
  });

  it('wrong answers, skipped lookups and running out of turns', async () => {
    const task = makeSecretNumberTask({ seed: 5, count: 1, maxTurns: 2, formatPenalty: 0.5 });
    const ex = task.examples[0];
    const wrong = await runTextEpisode(task.makeEnv(), ex, () => `<answer>${ex.secret + 1}</answer>`);
    expect(wrong.total).toBe(0);
    const loop = await runTextEpisode(task.makeEnv(), ex, () => `<lookup>${ex.key}</lookup>`);
    expect(loop.info).toMatchObject({ reason: 'max_turns' });
    expect(loop.total).toBe(0);
    const babble = await runTextEpisode(task.makeEnv(), ex, () => 'hmm');
    expect(babble.total).toBe(-1);
  });

  it('scriptedAction reads the last question and a matching observation only', () => {
    expect(scriptedAction('What is the secret for key K1?\n')).toBe('<lookup>K1</lookup>');
    expect(
      scriptedAction('What is the secret for key K1?\n<lookup>K1</lookup>\n<result>K11: 5</result>\n'),
    ).toBe('<lookup>K1</lookup>');
    expect(
      scriptedAction('What is the secret for key K1?\n<lookup>K1</lookup>\n<result>K1: 5</result>\n'),
    ).toBe('<answer>5</answer>');
    expect(scriptedAction('K1: 5\nWhat is the secret for key K1?\n')).toBe('<lookup>K1</lookup>');
    expect(() => scriptedAction('no question')).toThrow(/no secret-number question/);
  });

  it('rejects bad options', () => {
    expect(() => makeSecretNumberTask({ seed: 0, count: 1, keys: [] })).toThrow(/at least one key/);
    expect(() => makeSecretNumberTask({ seed: 0, count: 1, keys: ['a b'] })).toThrow(/invalid key/);
    expect(() => makeSecretNumberTask({ seed: 0, count: -1 })).toThrow(/count/);
  });
});
