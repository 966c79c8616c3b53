/** One results table over seeds: means, spreads, gains paired seed by seed, and `agent-r1 seeds`. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHandlers } from '../src/cli/handlers.js';
import { runCli } from '../src/cli/run.js';
import { tableLayout } from '../src/evaluation/results.js';
import {
  type RunRows,
  formatSeedTables,
  pairedGain,
  parseRunRows,
  seedIndependent,
  spreadOf,
} from '../src/evaluation/seeds.js';
import type { ResultRow } from '../src/tasks/task.js';
import { Capture } from './support/capture.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-seeds-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A run's table: a baseline the seed does not move, the warm start and GRPO, in groups 1 and 'all'. */
function run(source: string, warm: [number, number], grpo: [number, number]): RunRows {
  const rows: ResultRow[] = [];
  const add = (method: string, [g1, all]: [number, number]) =>
    rows.push(
      { method, group: 1, n: 10, scores: { em: g1, f1: g1 } },
      { method, group: 'all', n: 30, scores: { em: all, f1: all } },
    );
  add('naive RAG', [0.9, 0.4]);
  add('supervised (warm start)', warm);
  add('GRPO', grpo);
  return { source, rows };
}

const layout = tableLayout({ answerMetrics: ['em', 'f1'], groupLabel: (g) => `${g}-hop` });

describe('tables over seeds', () => {
  it('spreadOf: mean, sample standard deviation, extremes', () => {
    expect(spreadOf([1, 2, 3, 4])).toEqual({
      mean: 2.5,
      std: Math.sqrt(5 / 3),
      min: 1,
      max: 4,
      values: [1, 2, 3, 4],
    });
    expect(spreadOf([0.7]).std).toBe(0);
    expect(() => spreadOf([])).toThrow('no values');
  });

  it('pairs the gain seed by seed, and leaves the seed-independent baselines out of the gains', () => {
    const runs = [
      run('s0', [0.9, 0.7], [0.95, 0.8]),
      run('s1', [0.8, 0.6], [0.82, 0.7]),
      run('s2', [0.85, 0.75], [0.9, 0.76]),
    ];
    const gain = pairedGain(runs, 'GRPO', 'supervised (warm start)', 'all', 'em');
    expect(gain.values.map((v) => Number(v.toFixed(12)))).toEqual([0.1, 0.1, 0.01]);
    expect(gain.mean).toBeCloseTo(0.07, 12);
    expect(seedIndependent(runs, 'em')).toEqual(['naive RAG']);
    // A run from a later version that scores one more metric keeps its baselines seed-independent.
    const more = { ...runs[2], rows: runs[2].rows.map((r) => ({ ...r, scores: { ...r.scores, extra: 1 } })) };
    expect(seedIndependent([runs[0], runs[1], more], 'em')).toEqual(['naive RAG']);
    const text = formatSeedTables(runs, layout, { reference: 'supervised (warm start)' });
    expect(text).toContain('| method | 1-hop EM | all EM |');
    expect(text).toContain('| naive RAG | 0.900 | 0.400 |');
    expect(text).toContain('| supervised (warm start) | 0.850 ± 0.050 | 0.683 ± 0.076 |');
    expect(text).toContain(
      '| GRPO − supervised (warm start) | +0.040 ± 0.017 [+0.050, +0.020, +0.050] | +0.070 ± 0.052 [+0.100, +0.100, +0.010] |',
    );
    expect(text).not.toContain('naive RAG − ');
  });

  it('refuses runs that are not the same evaluation, naming the run', () => {
    const other = run('s1', [0.8, 0.6], [0.82, 0.7]);
    const fewer = { source: 'fewer', rows: other.rows.map((r) => (r.group === 1 ? { ...r, n: 9 } : r)) };
    expect(() => formatSeedTables([run('s0', [0.9, 0.7], [0.95, 0.8]), fewer], layout)).toThrow(
      /^fewer: method "naive RAG", group 1 has 9 examples, s0 10: not the same evaluation$/,
    );
    const missing = { source: 'missing', rows: other.rows.filter((r) => r.method !== 'GRPO') };
    expect(() => formatSeedTables([run('s0', [0.9, 0.7], [0.95, 0.8]), missing], layout)).toThrow(
      /^missing: has no row for method "GRPO", group 1/,
    );
    expect(() => parseRunRows('{"rows": 1}', 'x/results.json')).toThrow(
      /^x\/results\.json: not a results table/,
    );
    expect(() => parseRunRows('nope', 'y/results.json')).toThrow(/^y\/results\.json: not valid JSON/);
  });

  it('agent-r1 seeds reads each run’s results.json and writes results-seeds.md', async () => {
    const dirs = [run('a', [0.9, 0.7], [0.95, 0.8]), run('b', [0.8, 0.6], [0.82, 0.7])].map(({ rows }, i) => {
      const dir = join(root, `seed-${i}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'results.json'), JSON.stringify(rows));
      return dir;
    });
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await runCli(
      ['seeds', '--preset', 'smoke', '--run', dirs[0], '--run', dirs[1], '--out', root],
      loadHandlers,
      { stdout, stderr },
    );
    expect(stderr.text).toBe('');
    expect(code).toBe(0);
    const written = readFileSync(join(root, 'results-seeds.md'), 'utf8');
    expect(written).toContain('| GRPO − supervised (warm start) | +0.035 ± 0.021 [+0.050, +0.020] |');
    expect(stdout.text).toContain('EM, mean ± standard deviation over 2 runs');
    const one = await runCli(['seeds', '--preset', 'smoke', '--run', dirs[0]], loadHandlers, {
      stdout: new Capture(),
      stderr,
    });
    expect(one).toBe(1);
    expect(stderr.text).toContain('seeds: give two --run folders or more');
  });
});
