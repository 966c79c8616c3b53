/**
 * The results table broken down by kind of example (a question template, for multi-hop QA), with each
 * tool's calls: where a policy fails and which tool it reaches for there. A table over hop counts says
 * that comparisons fall after RL; this one says that the area comparisons stopped calling `compare`.
 */
import type { Trajectory } from '../mdp/trajectory.js';
import type { AgentTask } from '../tasks/task.js';
import { infoScore } from './info.js';
import type { TableLayout } from './results.js';

export interface KindRow {
  method: string;
  kind: string;
  n: number;
  /** Mean of each answer metric over the kind's episodes (0 where an episode never answered). */
  scores: Record<string, number>;
  /**
   * Mean calls per episode of each tool any episode of the method called: the calls that ran, failed ones
   * included (a call in an episode's last turn, whose result would never be read, does not run).
   */
  toolCalls: Record<string, number>;
}

/**
 * One row per kind (`task.kindOf`) of a policy's trajectories on `examples` (`t.group` is the
 * example's index), kinds in order of first appearance; none where the task has no kinds. Probe copies
 * (the swapped comparisons) count in their kind: every episode of the table is in some row.
 */
export function kindRows<E>(
  method: string,
  task: Pick<AgentTask<E>, 'kindOf' | 'answerMetrics'>,
  examples: readonly E[],
  trajectories: readonly Trajectory[],
): KindRow[] {
  const kindOf = task.kindOf;
  if (!kindOf) return [];
  const byKind = new Map<string, Trajectory[]>();
  for (const t of trajectories) {
    const kind = kindOf(examples[t.group]);
    if (kind === undefined) continue;
    const same = byKind.get(kind);
    if (same) same.push(t);
    else byKind.set(kind, [t]);
  }
  const tools = [...new Set(trajectories.flatMap((t) => t.toolCalls.map((c) => c.name)))].sort();
  const mean = (ts: readonly Trajectory[], f: (t: Trajectory) => number) =>
    ts.reduce((sum, t) => sum + f(t), 0) / ts.length;
  return [...byKind].map(([kind, ts]) => ({
    method,
    kind,
    n: ts.length,
    scores: Object.fromEntries(
      (task.answerMetrics ?? []).map((k) => [k, mean(ts, (t) => infoScore(t.info, k))]),
    ),
    toolCalls: Object.fromEntries(
      tools.map((tool) => [tool, mean(ts, (t) => t.toolCalls.filter((c) => c.name === tool).length)]),
    ),
  }));
}

/** A markdown table: method, kind, n, the first two metrics, then calls per episode of each tool. */
export function formatKindTable(rows: readonly KindRow[], layout: TableLayout): string {
  const metrics = layout.metrics.filter((m) => rows.some((r) => m in r.scores)).slice(0, 2);
  const tools = [...new Set(rows.flatMap((r) => Object.keys(r.toolCalls)))].sort();
  const cell = (x: number | undefined, digits: number) => (x === undefined ? '–' : x.toFixed(digits));
  return [
    `| method | kind | n | ${[...metrics.map((m) => layout.labels[m]), ...tools.map((t) => `${t} calls`)].join(' | ')} |`,
    `|---|---|---:|${[...metrics, ...tools].map(() => '---:').join('|')}|`,
    ...rows.map(
      (r) =>
        `| ${r.method} | ${r.kind} | ${r.n} | ${[
          ...metrics.map((m) => cell(r.scores[m], 3)),
          // A tool a method never called is 0 calls for it, not a missing figure.
          ...tools.map((t) => cell(r.toolCalls[t] ?? 0, 2)),
        ].join(' | ')} |`,
    ),
  ].join('\n');
}
