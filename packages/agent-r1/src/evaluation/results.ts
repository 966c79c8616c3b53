/**
 * The results table (the paper's): one row per method and group of examples (e.g. hop count, plus 'all'),
 * with the mean of each answer metric the task names (`AgentTask.answerMetrics`). Rows come from a task's
 * model-free baselines and from evaluation of trained policies (greedy, or sampled: `eval.temperature`,
 * `eval.samples`); the table is printed as markdown and written as markdown + JSON.
 */
import { join } from 'node:path';
import { type TransformerLM, writeFileAtomicSync } from '@agent-r1/nn';
import type { Trajectory } from '../mdp/trajectory.js';
import type { RolloutLimits } from '../rollout/config.js';
import type { AgentTask, ResultRow } from '../tasks/task.js';
import { normalizeAnswer } from '../rewards/qa.js';
import { type EvaluationSampling, GREEDY_EVALUATION, evaluate } from './evaluate.js';
import { answerScores, infoAnswer } from './info.js';
import { type KindRow, formatKindTable } from './kinds.js';

export type { ResultRow };

/** One scored example: its group (or groups), whether it counts in 'all', and its answer's scores. */
export interface ScoredExample {
  group: TableGroups;
  /** False for a probe example reported only in its own group (default true). */
  inAll?: boolean;
  scores: Record<string, number>;
}

/** The table group, or groups, of an example (e.g. its hop count and 'comparisons'). */
export type TableGroups = number | string | readonly (number | string)[];

/** How the table names things: its group column and groups, its metrics (the first two in the matrix). */
export interface TableLayout {
  metrics: readonly string[];
  labels: Readonly<Record<string, string>>;
  groupName: string;
  groupLabel(group: number | string): string;
}

const KNOWN_LABELS: Readonly<Record<string, string>> = {
  em: 'EM',
  f1: 'F1',
  subEm: 'subEM',
  sameAnswer: 'same answer',
};

/** The layout of a task's tables. */
export function tableLayout(
  task: Pick<AgentTask, 'answerMetrics' | 'metricLabels' | 'groupName' | 'groupLabel' | 'twinOf'>,
): TableLayout {
  const metrics = [...(task.answerMetrics ?? []), ...(task.twinOf ? [SAME_ANSWER] : [])];
  return {
    metrics,
    labels: Object.fromEntries(metrics.map((m) => [m, task.metricLabels?.[m] ?? KNOWN_LABELS[m] ?? m])),
    groupName: task.groupName ?? 'group',
    groupLabel: task.groupLabel ?? ((g) => String(g)),
  };
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

/** Mean scores per group and over all examples but probes ('all' last). */
export function aggregateRows(method: string, scored: readonly ScoredExample[]): ResultRow[] {
  const groups = new Map<number | string, ScoredExample[]>();
  for (const s of scored)
    for (const g of [s.group].flat()) if (g !== 'all') groups.set(g, [...(groups.get(g) ?? []), s]);
  groups.set(
    'all',
    scored.filter((s) => s.inAll !== false),
  );
  const keys = [...new Set(scored.flatMap((s) => Object.keys(s.scores)))];
  return [...groups.keys()].sort(compareGroups).map((group) => {
    const xs = groups.get(group) ?? [];
    // A score only some examples have (SAME_ANSWER: the probes') is the mean over those, absent elsewhere.
    const scores: Record<string, number> = {};
    for (const k of keys) {
      const has = xs.filter((x) => k in x.scores);
      if (has.length > 0 || xs.length === 0)
        scores[k] = has.length === 0 ? 0 : has.reduce((sum, x) => sum + x.scores[k], 0) / has.length;
    }
    return { method, group, n: xs.length, scores };
  });
}

/** The score of a probe example: 1 when its answer is its twin's (after QA normalisation), else 0. */
export const SAME_ANSWER = 'sameAnswer';

/**
 * Adds SAME_ANSWER to the scores of each example that `task.twinOf` pairs with another of `examples`
 * (e.g. a comparison asked again with its options swapped): whether the two got the same answer. An
 * example listed several times in a row (its sampled episodes) is compared sample by sample: the k-th
 * episode of an example with the k-th of its twin.
 */
export function addTwinAgreement<E>(
  task: Pick<AgentTask<E>, 'twinOf'>,
  examples: readonly E[],
  answers: readonly string[],
  scored: ScoredExample[],
): void {
  if (!task.twinOf) return;
  const first = new Map<E, number>();
  examples.forEach((e, i) => {
    if (!first.has(e)) first.set(e, i);
  });
  examples.forEach((example, i) => {
    const twin = task.twinOf!(example);
    const start = twin === undefined ? undefined : first.get(twin);
    const j = start === undefined ? undefined : start + (i - first.get(example)!);
    if (j !== undefined && examples[j] === twin)
      scored[i].scores[SAME_ANSWER] = normalizeAnswer(answers[i]) === normalizeAnswer(answers[j]) ? 1 : 0;
  });
}

/** The group (or groups) an example is scored in: `task.groupOf(example)`, or 'all' for a task without groups. */
export const exampleGroup = <E>(task: AgentTask<E>, example: E): TableGroups =>
  task.groupOf ? task.groupOf(example) : 'all';

/**
 * Evaluation of a policy (greedy by default; `sampling` for several sampled episodes of each example),
 * scored per episode on the task's answer metrics: a trajectory that never answered scores 0. The groups
 * are `task.groupOf(example)` when the task defines it, else 'all' only; an example for which
 * `task.countsInAll` is false is left out of 'all'. A row's `n` counts episodes.
 */
export async function policyRows<E>(
  method: string,
  policy: TransformerLM,
  task: AgentTask<E>,
  examples: readonly E[],
  limits: RolloutLimits,
  /** Hears the trajectories the rows are scored from (in order of example, `t.group` its index). */
  onTrajectories?: (trajectories: readonly Trajectory[]) => void,
  sampling: EvaluationSampling = GREEDY_EVALUATION,
): Promise<ResultRow[]> {
  const { trajectories } = await evaluate(policy, task, examples, limits, { sampling });
  onTrajectories?.(trajectories);
  // Each example's episodes in a row, examples in order.
  const scored: ScoredExample[] = trajectories.map((t) => ({
    group: exampleGroup(task, examples[t.group]),
    inAll: task.countsInAll?.(examples[t.group]) ?? true,
    scores: answerScores(task, t.info),
  }));
  const answers = trajectories.map((t) => infoAnswer(t.info) ?? '');
  addTwinAgreement(
    task,
    trajectories.map((t) => examples[t.group]),
    answers,
    scored,
  );
  return aggregateRows(method, scored);
}

const f3 = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(3));

/** A markdown table: method, group, n, and each metric. */
export function formatResultsTable(rows: readonly ResultRow[], layout: TableLayout): string {
  const { metrics, labels } = layout;
  return [
    `| method | ${layout.groupName} | n | ${metrics.map((m) => labels[m]).join(' | ')} |`,
    `|---|---|---:|${metrics.map(() => '---:').join('|')}|`,
    ...rows.map(
      (r) => `| ${r.method} | ${r.group} | ${r.n} | ${metrics.map((m) => f3(r.scores[m])).join(' | ')} |`,
    ),
  ].join('\n');
}

/** A compact table with one row per method and a column per group of the first two metrics: the paper's layout. */
export function formatResultsMatrix(rows: readonly ResultRow[], layout: TableLayout): string {
  const shown = layout.metrics.slice(0, 2);
  const methods = [...new Set(rows.map((r) => r.method))];
  const groups = [...new Set(rows.map((r) => r.group))].sort(compareGroups);
  const cell = (m: string, g: number | string) => {
    const r = rows.find((x) => x.method === m && x.group === g);
    return r ? shown.map((k) => f3(r.scores[k])).join(' / ') : '–';
  };
  const name = (g: number | string) => (g === 'all' ? 'all' : layout.groupLabel(g));
  const what = shown.map((k) => layout.labels[k]).join(' / ');
  return [
    `| method | ${groups.map((g) => `${name(g)} ${what}`).join(' | ')} |`,
    `|---|${groups.map(() => '---:').join('|')}|`,
    ...methods.map((m) => `| ${m} | ${groups.map((g) => cell(m, g)).join(' | ')} |`),
  ].join('\n');
}

/**
 * Writes `results.md` (both tables, then the rows by kind where there are any) and `results.json` (the
 * rows) into `dir`, atomically; the rows by kind also go to `results-kinds.json`.
 */
export function writeResults(
  dir: string,
  rows: readonly ResultRow[],
  title: string,
  layout: TableLayout,
  kinds: readonly KindRow[] = [],
): { md: string; json: string; kinds?: string } {
  const md = join(dir, 'results.md');
  const json = join(dir, 'results.json');
  const byKind =
    kinds.length === 0
      ? ''
      : `\nEach policy by kind of example, with each tool's calls per episode:\n\n${formatKindTable(kinds, layout)}\n`;
  writeFileAtomicSync(
    md,
    `# ${title}\n\n${formatResultsMatrix(rows, layout)}\n\nPer group, with every metric:\n\n${formatResultsTable(rows, layout)}\n${byKind}`,
  );
  writeFileAtomicSync(json, `${JSON.stringify(rows, null, 2)}\n`);
  if (kinds.length === 0) return { md, json };
  const kindsJson = join(dir, 'results-kinds.json');
  writeFileAtomicSync(kindsJson, `${JSON.stringify(kinds, null, 2)}\n`);
  return { md, json, kinds: kindsJson };
}
