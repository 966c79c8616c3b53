/**
 * The CI run of the whole multi-hop pipeline (`agent-r1 train --preset smoke`): tokenizer, pretraining,
 * warm start, GRPO and the results table all run, and the trained policy's greedy validation reward is
 * above an untrained policy's (no target EM: the preset is far too small for one).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { createTask } from '../src/tasks/index.js';
import { handlers } from '../src/cli/commands.js';
import { resolveConfig } from '../src/trainer/config.js';
import { evaluate } from '../src/evaluation/evaluate.js';
import { buildPolicy } from '../src/trainer/models.js';
import type { ResultRow } from '../src/evaluation/results.js';
import { Capture } from './support/capture.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-r1-smoke-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agent-r1 train --preset smoke', () => {
  it('runs every stage, ends with the results table, and raises reward above an untrained policy', async () => {
    const out = new Capture();
    const err = new Capture();
    const overrides = ['log.progress=none', `log.dir=${dir}`, `checkpoint.dir=${join(dir, 'checkpoints')}`];
    const code = await runCli(['train', '--preset', 'smoke', ...overrides], handlers, {
      stdout: out,
      stderr: err,
    });
    expect(err.text).toBe('');
    expect(code).toBe(0);
    expect(out.text).toMatch(/pretrain: 20 steps on \d+ tokens of \d+ texts/);
    expect(out.text).toMatch(/warm start: 200 steps on 96 demonstrations/);

    const rows: ResultRow[] = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
    const methods = [...new Set(rows.map((r) => r.method))];
    expect(methods).toEqual([
      'no retrieval',
      'naive RAG',
      'scripted searcher',
      'supervised (warm start)',
      'GRPO',
    ]);

    const trained = /final validation: reward ([\d.]+)/.exec(out.text);
    expect(trained).not.toBeNull();
    const config = resolveConfig({ preset: 'smoke', overrides });
    const task = await createTask(config);
    const untrained = buildPolicy(config, task.vocabSize);
    const before = await evaluate(
      untrained,
      task,
      task.validation.slice(0, config.eval.examples),
      config.rollout,
    );
    untrained.dispose();
    // Same seed, same result: measured 0.031 (about 3 in 10 episodes end in a well-formed answer) against 0.
    expect(Number(trained?.[1])).toBeGreaterThan(before.reward);
  }, 600_000);
});
