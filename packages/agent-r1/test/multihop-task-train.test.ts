import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { handlers } from '../src/cli/commands.js';
import { presets, resolveConfig } from '../src/trainer/config.js';
import type { ResultRow } from '../src/evaluation/results.js';
import { Capture } from './support/capture.js';

const dir = mkdtempSync(join(tmpdir(), 'multihop-train-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runCli(argv, handlers, { stdout, stderr });
  return { code, out: stdout.text, err: stderr.text };
}

const TINY = [
  'model.dModel=16',
  'model.layers=1',
  'model.heads=2',
  'model.kvHeads=1',
  'rollout.n=2',
  'train.promptsPerStep=1',
  'train.miniBatchSize=2',
  'train.microBatchSize=2',
  'eval.every=0',
  'eval.examples=2',
  'eval.testExamples=6',
  'log.progress=none',
  'checkpoint.every=0',
];

const rowsOf = (file: string): ResultRow[] => JSON.parse(readFileSync(file, 'utf8'));

/** The episodes `--episodes` wrote for `method` under `out`, one JSON line each. */
const episodesOf = (out: string, method: string) =>
  readFileSync(join(out, 'episodes', `${method}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

describe('multihop-qa pipeline through the CLI', () => {
  it('has a multihop preset on the multihop-qa task', () => {
    const c = resolveConfig({ preset: 'multihop' });
    expect(c.task).toBe('multihop-qa');
    expect(presets.multihop.rollout?.maxTurns).toBe(4);
  });

  it('train: warm start, RL, then the results table with baselines, the warm start and the policy', async () => {
    const run = join(dir, 'run');
    const r = await cli([
      'train',
      '--preset',
      'multihop',
      ...TINY,
      'sft.steps=2',
      'sft.demonstrations=4',
      'sft.batchSize=2',
      'train.steps=1',
      `log.dir=${run}`,
      `checkpoint.dir=${join(run, 'checkpoints')}`,
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/warm start: 2 steps on 4 demonstrations/);
    expect(r.out).toContain('multihop-qa: test split');
    const rows = rowsOf(join(run, 'results.json'));
    const methods = [...new Set(rows.map((x) => x.method))];
    expect(methods).toEqual([
      'no retrieval',
      'naive RAG',
      'scripted searcher',
      'supervised (warm start)',
      'GRPO',
    ]);
    for (const m of methods) expect(rows.find((x) => x.method === m && x.group === 'all')?.n).toBe(6);
    expect(readFileSync(join(run, 'results.md'), 'utf8')).toContain('| GRPO |');
  }, 120_000);

  it('train from init with PPO: the value head starts fresh; a checkpoint of another shape is refused', async () => {
    const run = join(dir, 'ppo-init');
    const init = `init=${join(dir, 'run', 'checkpoints', 'warm-start')}`;
    const args = ['train', '--preset', 'multihop', ...TINY, 'sft.steps=0', 'train.steps=1', init];
    const r = await cli([
      ...args,
      'algorithm.name=ppo',
      'eval.table=false',
      `log.dir=${run}`,
      `checkpoint.dir=${run}/c`,
    ]);
    expect(r.err).toBe('');
    expect(r.out).not.toContain('test split');
    const bad = await cli([...args, 'model.dModel=24', `log.dir=${run}-bad`, `checkpoint.dir=${run}-bad/c`]);
    expect(bad.code).toBe(1);
    // One line: the first misfits and how many more.
    expect(bad.err).toMatch(
      /^agent-r1: policy .*warm-start: the checkpoint does not fit this model's config \(.*expected \[.* and \d+ more\)\n$/,
    );
  }, 120_000);

  it('train from init: starts from a checkpoint folder, no warm start', async () => {
    const run = join(dir, 'from-init');
    const r = await cli([
      'train',
      '--preset',
      'multihop',
      ...TINY,
      'sft.steps=0',
      'train.steps=1',
      'algorithm.useActionMask=false',
      `init=${join(dir, 'run', 'checkpoints', 'warm-start')}`,
      `log.dir=${run}`,
      `checkpoint.dir=${join(run, 'checkpoints')}`,
    ]);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/initialised the policy from .*warm-start/);
    const methods = new Set(rowsOf(join(run, 'results.json')).map((x) => x.method));
    expect(methods.has('supervised (warm start)')).toBe(true);
    expect(methods.has('GRPO, no action mask')).toBe(true);
  }, 120_000);

  it('eval: policies by name on user JSONL questions and corpus (no scripted searcher row there)', async () => {
    const questions = join(dir, 'q.jsonl');
    const corpus = join(dir, 'c.jsonl');
    writeFileSync(
      questions,
      `${JSON.stringify({ question: 'What is the capital of Norway?', golden_answers: ['Oslo'] })}\n${JSON.stringify({ question: 'What currency does Japan use?', golden_answers: ['yen', 'Japanese yen'] })}\n`,
    );
    writeFileSync(
      corpus,
      `${JSON.stringify({ id: 'a', contents: '"Norway (capital)"\nThe capital of Norway is Oslo.' })}\n${JSON.stringify({ id: 'b', contents: '"Japan (currency)"\nJapan uses the Japanese yen (JPY).' })}\n`,
    );
    const out = join(dir, 'user-eval');
    const r = await cli([
      'eval',
      '--preset',
      'multihop',
      ...TINY,
      '--questions',
      questions,
      '--corpus',
      corpus,
      '--policy',
      `sft=${join(dir, 'run', 'checkpoints', 'warm-start')}`,
      '--policy',
      `grpo=${join(dir, 'run', 'checkpoints', 'policy')}`,
      '--out',
      out,
      '--episodes',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const rows = rowsOf(join(out, 'results.json'));
    // --episodes: each policy's episodes (greedy: one per question), scored as its row is.
    expect(r.out).toContain(
      `episodes: ${join(out, 'episodes', 'sft.jsonl')}, ${join(out, 'episodes', 'grpo.jsonl')}`,
    );
    for (const method of ['sft', 'grpo']) {
      const episodes = episodesOf(out, method);
      expect(episodes.map((e) => [e.index, e.example.question])).toEqual([
        [0, 'What is the capital of Norway?'],
        [1, 'What currency does Japan use?'],
      ]);
      for (const e of episodes) {
        expect(e.turns.length).toBeGreaterThan(0);
        expect(e.turns[0].action.length).toBeGreaterThan(0);
        expect(e.group).toBe('all');
      }
      const em = episodes.reduce((sum, e) => sum + e.scores.em, 0) / episodes.length;
      expect(em).toBe(rows.find((x) => x.method === method && x.group === 'all')?.scores.em);
      // The rows by kind (a user's questions are all of kind 'user') count the searches that ran.
      expect(r.out).toContain(`${join(out, 'results.json')}, ${join(out, 'results-kinds.json')}`);
      const kinds = JSON.parse(readFileSync(join(out, 'results-kinds.json'), 'utf8'));
      // A call in the last turn, whose result no one would read, does not run: it has no observation.
      const searches = episodes.flatMap((e) =>
        e.turns
          .filter((t: { observation: string }) => t.observation !== '')
          .map((t: { action: string }) => t.action.split('<search>').length - 1),
      );
      expect(kinds.filter((k: { method: string }) => k.method === method)).toEqual([
        {
          method,
          kind: 'user',
          n: 2,
          scores: expect.objectContaining({ em }),
          toolCalls: expect.objectContaining({ search: searches.reduce((a, b) => a + b, 0) / 2 }),
        },
      ]);
    }
    expect([...new Set(rows.map((x) => x.method))]).toEqual(['no retrieval', 'naive RAG', 'sft', 'grpo']);
    // Naive RAG reads both answers out of this two-document corpus.
    expect(rows.find((x) => x.method === 'naive RAG' && x.group === 'all')?.scores.em).toBe(1);
    expect(existsSync(join(out, 'results.md'))).toBe(true);
    // Questions without hop counts: titled as the user's file, one 'all' group and no '0-hop' column.
    expect(r.out).toContain(`multihop-qa: ${questions} (2 examples)`);
    expect(r.out).not.toContain('test split');
    expect(r.out).not.toContain('0-hop');
    expect(new Set(rows.map((x) => x.group))).toEqual(new Set(['all']));
    // An option the task would ignore is refused: reveal has no questions to replace.
    const ignored = await cli(['eval', '--preset', 'reveal', '--questions', questions]);
    expect(ignored.code).toBe(2);
    expect(ignored.err).toBe(
      'agent-r1: config: unknown key "taskOptions.questions": task "reveal" has no options\n',
    );
  }, 120_000);

  it("eval, sampled: each question's episodes numbered in a row, and the rows their mean", async () => {
    const out = join(dir, 'sampled-eval');
    const r = await cli([
      'eval',
      '--preset',
      'multihop',
      ...TINY,
      'eval.temperature=1',
      'eval.samples=3',
      '--policy',
      `grpo=${join(dir, 'run', 'checkpoints', 'policy')}`,
      '--out',
      out,
      '--episodes',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('policies sampled at temperature 1, 3 episodes per example');
    const episodes = episodesOf(out, 'grpo');
    const questions = new Set(episodes.map((e) => e.index)).size;
    expect(episodes.map((e) => [e.index, e.sample])).toEqual(
      Array.from({ length: questions * 3 }, (_, i) => [Math.floor(i / 3), i % 3]),
    );
    const rows = rowsOf(join(out, 'results.json'));
    const all = rows.find((x) => x.method === 'grpo' && x.group === 'all')!;
    const counted = episodes.filter((e) => !e.example.id.endsWith('~swapped'));
    expect(all.n).toBe(counted.length);
    expect(all.scores.em).toBeCloseTo(counted.reduce((sum, e) => sum + e.scores.em, 0) / counted.length, 12);
  }, 120_000);

  it("eval --imitation: each policy's token-by-token imitation of the scripted demonstrations", async () => {
    const r = await cli([
      'eval',
      '--preset',
      'multihop',
      ...TINY,
      '--split',
      'validation',
      '--imitation',
      '--out',
      join(dir, 'imitation'),
      '--policy',
      `sft=${join(dir, 'run', 'checkpoints', 'warm-start')}`,
    ]);
    expect(r.err).toBe('');
    expect(r.out).toContain('sft: imitation of the scripted searcher');
    expect(r.out).toMatch(/\| search 1 \| open \| \d+ \|/);
    expect(r.out).toMatch(/\| answer 1 \| close \| \d+ \|/);
  }, 120_000);

  it('eval: a missing policy folder stops with the folder named; a self-describing one loads as trained', async () => {
    const missing = await cli([
      'eval',
      '--preset',
      'multihop',
      ...TINY,
      '--policy',
      `x=${join(dir, 'nope')}`,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`policy ${join(dir, 'nope')}: no model.safetensors there`);
    const shape = await cli([
      'eval',
      '--preset',
      'multihop',
      ...TINY,
      'model.dModel=24',
      // Its own folder: without --out the table goes to the preset's log.dir, the user's runs/multihop.
      '--out',
      join(dir, 'eval-shape'),
      '--policy',
      `x=${join(dir, 'run', 'checkpoints', 'policy')}`,
    ]);
    // The folder describes its model (agent.json): it loads as trained, whatever the preset's model.
    expect(shape.err).toBe('');
    expect(shape.code).toBe(0);
    expect(existsSync(join(dir, 'eval-shape', 'results.md'))).toBe(true);
  }, 120_000);
});
