/**
 * The results table (the paper's): one row per method and group of examples (hop count for multi-hop QA,
 * plus 'all'), with EM, F1 and substring EM. Rows come from a task's model-free baselines and from greedy
 * evaluation of trained policies; the table is printed as markdown and written as markdown + JSON.
 */
import { join } from 'node:path';
import { type TransformerLM, writeFileAtomicSync } from '@agent-r1/nn';
import type { RolloutLimits } from '../rollout/config.js';
import type { AgentTask } from '../tasks/task.js';
import { evaluate } from './evaluate.js';

export interface ResultRow {
  method: string;
  /** The group (e.g. hop count), or 'all'. */
  group: number | string;
  n: number;
  em: number;
  f1: number;
  subEm: number;
}

/** One scored example: its group and its answer's scores. */
export interface ScoredExample {
  group: number | string;
  em: number;
  f1: number;
  subEm: number;
}

const compareGroups = (a: number | string, b: number | string) =>
  a === 'all'
    ? 1
    : b === 'all'
      ? -1
      : typeof a === 'number' && typeof b === 'number'
        ? a - b
        : String(a) < String(b)
          ? -1
          : 1;

/** Mean scores per group and over all examples ('all' last). */
export function aggregateRows(method: string, scored: readonly ScoredExample[]): ResultRow[] {
  const groups = new Map<number | string, ScoredExample[]>();
  for (const s of scored) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  groups.set('all', [...scored]);
  return [...groups.keys()].sort(compareGroups).map((group) => {
    const xs = groups.get(group) ?? [];
    const mean = (k: 'em' | 'f1' | 'subEm') =>
      xs.length === 0 ? 0 : xs.reduce((s, x) => s + x[k], 0) / xs.length;
    return { method, group, n: xs.length, em: mean('em'), f1: mean('f1'), subEm: mean('subEm') };
  });
}

const score = (info: Record<string, unknown>, key: string) =>
  typeof info[key] === 'number' ? (info[key] as number) : 0;

/**
 * Greedy evaluation of a policy, scored per example: a trajectory that never answered scores 0. The group
 * is `task.groupOf(example)` when the task defines it, else 'all' only.
 */
export async function policyRows<E>(
  method: string,
  policy: TransformerLM,
  task: AgentTask<E>,
  examples: readonly E[],
  limits: RolloutLimits,
): Promise<ResultRow[]> {
  const { trajectories } = await evaluate(policy, task, examples, limits);
  const scored = trajectories.map((t) => ({
    group: task.groupOf ? task.groupOf(examples[t.group]) : 'all',
    em: score(t.info, 'em'),
    f1: score(t.info, 'f1'),
    subEm: score(t.info, 'subEm'),
  }));
  return aggregateRows(method, scored);
}

/** A markdown table: method, group, n, EM, F1, substring EM. */
export function formatResultsTable(rows: readonly ResultRow[], groupName = 'hops'): string {
  const f = (x: number) => x.toFixed(3);
  return [
    `| method | ${groupName} | n | EM | F1 | subEM |`,
    '|---|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.method} | ${r.group} | ${r.n} | ${f(r.em)} | ${f(r.f1)} | ${f(r.subEm)} |`),
  ].join('\n');
}

/** A compact table with one row per method and EM/F1 columns per group: the paper's layout. */
export function formatResultsMatrix(rows: readonly ResultRow[]): string {
  const methods = [...new Set(rows.map((r) => r.method))];
  const groups = [...new Set(rows.map((r) => r.group))].sort(compareGroups);
  const cell = (m: string, g: number | string) => {
    const r = rows.find((x) => x.method === m && x.group === g);
    return r ? `${r.em.toFixed(3)} / ${r.f1.toFixed(3)}` : '–';
  };
  const name = (g: number | string) => (typeof g === 'number' ? `${g}-hop` : String(g));
  return [
    `| method | ${groups.map((g) => `${name(g)} EM / F1`).join(' | ')} |`,
    `|---|${groups.map(() => '---:').join('|')}|`,
    ...methods.map((m) => `| ${m} | ${groups.map((g) => cell(m, g)).join(' | ')} |`),
  ].join('\n');
}

/** Writes `results.md` (both tables) and `results.json` (the rows) into `dir`, atomically. */
export function writeResults(
  dir: string,
  rows: readonly ResultRow[],
  title: string,
): { md: string; json: string } {
  const md = join(dir, 'results.md');
  const json = join(dir, 'results.json');
  writeFileAtomicSync(
    md,
    `# ${title}\n\n${formatResultsMatrix(rows)}\n\nPer group, with substring EM:\n\n${formatResultsTable(rows)}\n`,
  );
  writeFileAtomicSync(json, `${JSON.stringify(rows, null, 2)}\n`);
  return { md, json };
}
