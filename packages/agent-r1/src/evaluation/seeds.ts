/**
 * One results table over several runs (the same pipeline under different seeds): every cell's mean and
 * spread, and each method's gain over a reference row (the warm start) paired seed by seed, so that
 * "RL helps" is a mean with its spread across seeds rather than one seed's figure.
 */
import type { ResultRow } from '../tasks/task.js';
import type { TableLayout } from './results.js';

/** One run's table and where it came from. */
export interface RunRows {
  source: string;
  rows: readonly ResultRow[];
}

/** A cell over runs: mean, sample standard deviation (0 for one run), extremes and each run's value. */
export interface Spread {
  mean: number;
  std: number;
  min: number;
  max: number;
  values: number[];
}

export function spreadOf(values: readonly number[]): Spread {
  const n = values.length;
  if (n === 0) throw new Error('spreadOf: no values');
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const [min, max] = [Math.min(...values), Math.max(...values)];
  // Equal values spread by exactly 0 (their rounded mean would leave a residue of 1e-17).
  const variance = n < 2 || min === max ? 0 : values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1);
  return {
    mean,
    std: Math.sqrt(variance),
    min,
    max,
    values: [...values],
  };
}

const cellKey = (method: string, group: number | string) => `${method}\u0000${group}`;

/** Each run's value of `metric` in the cell (method, group); an error names the run that lacks it. */
function cellValues(
  runs: readonly RunRows[],
  method: string,
  group: number | string,
  metric: string,
): number[] {
  return runs.map(({ source, rows }) => {
    const row = rows.find((r) => r.method === method && r.group === group);
    const value = row?.scores[metric];
    if (typeof value !== 'number')
      throw new Error(`${source}: no ${metric} for method "${method}", group ${JSON.stringify(group)}`);
    return value;
  });
}

/** The methods and groups of the first run, each checked to be in every run with the same example count. */
export function checkSameTables(runs: readonly RunRows[]): {
  methods: string[];
  groups: (number | string)[];
} {
  if (runs.length === 0) throw new Error('no runs to aggregate');
  const [first, ...rest] = runs;
  const count = new Map(first.rows.map((r) => [cellKey(r.method, r.group), r.n]));
  for (const run of rest) {
    const here = new Map(run.rows.map((r) => [cellKey(r.method, r.group), r.n]));
    for (const [key, n] of count) {
      const [method, group] = key.split('\u0000');
      if (!here.has(key))
        throw new Error(
          `${run.source}: has no row for method "${method}", group ${group} (${first.source} has)`,
        );
      if (here.get(key) !== n)
        throw new Error(
          `${run.source}: method "${method}", group ${group} has ${here.get(key)} examples, ${first.source} ${n}: not the same evaluation`,
        );
    }
  }
  return {
    methods: [...new Set(first.rows.map((r) => r.method))],
    groups: [...new Set(first.rows.map((r) => r.group))],
  };
}

/** `method` minus `reference` in one cell, seed by seed (the runs pair up by position). */
export function pairedGain(
  runs: readonly RunRows[],
  method: string,
  reference: string,
  group: number | string,
  metric: string,
): Spread {
  const a = cellValues(runs, method, group, metric);
  const b = cellValues(runs, reference, group, metric);
  return spreadOf(a.map((v, i) => v - b[i]));
}

const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

/**
 * The methods whose every cell of `metric` is the same in every run: the model-free baselines, which no
 * seed moves (runs from different versions may score other metrics besides).
 */
export function seedIndependent(runs: readonly RunRows[], metric: string): string[] {
  const { methods, groups } = checkSameTables(runs);
  return methods.filter((m) =>
    groups.every((g) => {
      const s = spreadOf(cellValues(runs, m, g, metric));
      return s.min === s.max;
    }),
  );
}

/**
 * The markdown of the table over runs for the main metric (mean ± standard deviation per cell), and, when
 * the tables have the `reference` method, the paired gain over it of each method that the seed moves
 * (the baselines, the same in every run, are left out).
 */
export function formatSeedTables(
  runs: readonly RunRows[],
  layout: TableLayout,
  options: { reference?: string } = {},
): string {
  const metric = layout.metrics[0];
  if (metric === undefined) throw new Error('the task names no answer metric');
  const { methods, groups } = checkSameTables(runs);
  const name = (g: number | string) => (g === 'all' ? 'all' : layout.groupLabel(g));
  const label = layout.labels[metric];
  const header = `| method | ${groups.map((g) => `${name(g)} ${label}`).join(' | ')} |`;
  const rule = `|---|${groups.map(() => '---:').join('|')}|`;
  const cell = (method: string, g: number | string) => {
    const s = spreadOf(cellValues(runs, method, g, metric));
    return s.std === 0 ? f3(s.mean) : `${f3(s.mean)} ± ${f3(s.std)}`;
  };
  const lines = [
    `${label}, mean ± standard deviation over ${runs.length} runs (${runs.map((r) => r.source).join(', ')}):`,
    '',
    header,
    rule,
    ...methods.map((m) => `| ${m} | ${groups.map((g) => cell(m, g)).join(' | ')} |`),
  ];
  const reference = options.reference;
  const skip = new Set([...seedIndependent(runs, metric), reference]);
  const trained = methods.filter((m) => !skip.has(m));
  if (reference !== undefined && methods.includes(reference) && trained.length > 0) {
    lines.push(
      '',
      `Gain over ${reference}, paired seed by seed (each run's value in brackets):`,
      '',
      header,
      rule,
    );
    for (const m of trained) {
      const cells = groups.map((g) => {
        const s = pairedGain(runs, m, reference, g, metric);
        return `${signed(s.mean)} ± ${f3(s.std)} [${s.values.map(signed).join(', ')}]`;
      });
      lines.push(`| ${m} − ${reference} | ${cells.join(' | ')} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The rows of a results.json (a run's folder, or the file), checked; errors name the file. */
export function parseRunRows(text: string, source: string): RunRows {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not valid JSON (${(e as Error).message})`);
  }
  const ok = (r: unknown): r is ResultRow => {
    const row = r as Partial<ResultRow> | null;
    return (
      typeof row === 'object' &&
      row !== null &&
      typeof row.method === 'string' &&
      (typeof row.group === 'number' || typeof row.group === 'string') &&
      typeof row.n === 'number' &&
      typeof row.scores === 'object' &&
      row.scores !== null
    );
  };
  if (!Array.isArray(rows) || rows.length === 0 || !rows.every(ok))
    throw new Error(`${source}: not a results table (a list of {method, group, n, scores} rows)`);
  return { source, rows };
}
