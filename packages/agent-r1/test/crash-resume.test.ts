/**
 * A run killed at any file write resumes to exactly the uninterrupted run: each case trains a tiny agent
 * in a child process, kills it (SIGKILL) just before its k-th file-system write for a spread of random k
 * over the whole run (warm start, RL steps, checkpoint saves, metrics lines), resumes it, and compares the
 * metrics logs and the saved weights (policy, optimizer, KL reference, critic) with an uninterrupted run's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { TINY_REVEAL, TINY_STAGES } from './support/tiny-model.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-crash-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const support = (f: string) => fileURLToPath(new URL(`./support/${f}`, import.meta.url));
// Per case; AGENT_R1_CRASH_POINTS=n tries more (and AGENT_R1_CRASH_SEED repeats a draw).
const CRASH_POINTS = Number(process.env.AGENT_R1_CRASH_POINTS ?? 6);

function run(dir: string, extra: string[], env: Record<string, string> = {}) {
  const args = [
    ...TINY_REVEAL,
    ...TINY_STAGES,
    'threads=1',
    'sft.steps=3',
    'train.steps=3',
    'algorithm.entropyCoef=0.01',
    'eval.every=2',
    'eval.examples=4',
    'checkpoint.every=1',
    'checkpoint.resume=true',
    `checkpoint.dir=${join(dir, 'checkpoints')}`,
    `log.dir=${dir}`,
    'log.progress=none',
    ...extra,
  ];
  return spawnSync(
    process.execPath,
    [
      '--conditions=@agent-r1/source',
      '--import',
      'tsx',
      '--import',
      support('crash-hook.mjs'),
      support('crash-run.ts'),
      ...args,
    ],
    { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 },
  );
}

/** Metrics lines without their clock fields. */
function metrics(dir: string, file: string): unknown[] {
  const timing = /^(time|elapsed)$|Seconds$|PerSecond$/;
  return readFileSync(join(dir, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => Object.fromEntries(Object.entries(JSON.parse(l)).filter(([k]) => !timing.test(k))));
}

/** The saved tensors and generator positions of a run's policy folder. */
function saved(dir: string): Record<string, string> {
  const policy = join(dir, 'checkpoints', 'policy');
  const out: Record<string, string> = {};
  for (const f of readdirSync(policy).filter((f) => f.endsWith('.safetensors')))
    out[f] = readFileSync(join(policy, f)).toString('base64');
  const state = JSON.parse(readFileSync(join(policy, 'state.json'), 'utf8'));
  out.state = JSON.stringify({ generators: state.generators, state: state.state });
  return out;
}

/** `count` distinct crash points spread over 1..total: one drawn in each of `count` equal stretches. */
function crashPoints(total: number, count: number, seed: number): number[] {
  let s = seed;
  const random = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const stretch = total / count;
  return [...new Set(Array.from({ length: count }, (_, i) => 1 + Math.floor((i + random()) * stretch)))];
}

describe.each([
  ['GRPO with a KL reference', ['algorithm.name=grpo', 'algorithm.klCoef=0.1']],
  ['PPO with a separate critic', ['algorithm.name=ppo', 'critic.shareTrunk=false']],
])('a run killed at any file write: %s', (name, extra) => {
  it('resumes to the uninterrupted metrics and weights, and leaves no temporary folder', () => {
    const slug = name.replace(/\W+/g, '-');
    const straight = join(root, `${slug}-straight`);
    const countFile = join(root, `${slug}.count`);
    const first = run(straight, extra, { AGENT_R1_COUNT_FILE: countFile });
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const total = Number(readFileSync(countFile, 'utf8'));
    expect(total).toBeGreaterThan(20);
    const expected = {
      rl: metrics(straight, 'metrics.jsonl'),
      warmStart: metrics(straight, 'warm-start.jsonl'),
      saved: saved(straight),
    };
    const seed = Number(process.env.AGENT_R1_CRASH_SEED ?? Date.now() % 2 ** 31);
    for (const k of crashPoints(total, CRASH_POINTS, seed)) {
      const dir = join(root, `${slug}-crash-${k}`);
      const killed = run(dir, extra, { AGENT_R1_CRASH_AT: String(k) });
      expect(killed.signal, `killed at write ${k} of ${total} (seed ${seed})`).toBe('SIGKILL');
      const resumed = run(dir, extra);
      expect(resumed.status, `resumed after write ${k} (seed ${seed}): ${resumed.stderr}`).toBe(0);
      expect(metrics(dir, 'metrics.jsonl'), `metrics after write ${k} (seed ${seed})`).toEqual(expected.rl);
      expect(metrics(dir, 'warm-start.jsonl'), `warm start after write ${k}`).toEqual(expected.warmStart);
      expect(saved(dir), `weights after write ${k} (seed ${seed})`).toEqual(expected.saved);
      expect(readdirSync(join(dir, 'checkpoints')).filter((f) => f.startsWith('.'))).toEqual([]);
    }
  }, 600_000);
});
