/**
 * The results table of runs: the task's baselines and policies from checkpoint folders, on the held-out
 * split, written as results.md / results.json plus a plot of the runs' validation curves. `agent-r1 eval`
 * and the end of `agent-r1 train` both use it.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MODEL_FILE, TransformerLM } from '@agent-r1/nn';
import type { Trajectory } from '../mdp/trajectory.js';
import type { AgentTask } from '../tasks/task.js';
import { checkTaskFits, readAgentDescription } from '../checkpoints/agent-files.js';
import type { TrainConfig } from '../trainer/config.js';
import { initPolicy } from '../checkpoints/init.js';
import { readMetrics } from '../trainer/metrics-log.js';
import { buildPolicy } from '../trainer/models.js';
import { type PlotSeries, writeSvgPlot } from '../trainer/plot.js';
import { tableSampling, validationKey } from './evaluate.js';
import { type KindRow, kindRows } from './kinds.js';
import { type ResultRow, policyRows } from './results.js';

const ALGORITHM_NAMES: Record<string, string> = {
  grpo: 'GRPO',
  ppo: 'PPO',
  'reinforce++': 'REINFORCE++',
  'reinforce++-baseline': 'REINFORCE++ (baseline)',
  rloo: 'RLOO',
};

/** The table's name of the RL policy a config trains, e.g. "GRPO" or "GRPO, no action mask". */
export function methodName(config: TrainConfig): string {
  const name = ALGORITHM_NAMES[config.algorithm.name] ?? config.algorithm.name;
  return config.algorithm.useActionMask ? name : `${name}, no action mask`;
}

/**
 * The examples of the table: the test split (or validation), cut to its first `eval.testExamples` examples
 * when set, counting only those in 'all': a probe (`countsInAll` false) comes along with the example before
 * it, as the multi-hop task's swapped comparisons follow their originals.
 */
export function tableExamples<E>(
  task: AgentTask<E>,
  config: TrainConfig,
  split?: 'test' | 'validation',
): readonly E[] {
  const all = split === 'validation' || !task.test ? task.validation : task.test;
  const limit = config.eval.testExamples;
  if (limit <= 0) return all;
  const out: E[] = [];
  let counted = 0;
  for (const example of all) {
    if (task.countsInAll?.(example) !== false) {
      if (counted === limit) break;
      counted++;
    }
    out.push(example);
  }
  return out;
}

/** A policy of the table: a name and a checkpoint folder (with model.safetensors), or a live model. */
export type TablePolicy = { method: string } & ({ dir: string } | { policy: TransformerLM });

/**
 * Loads a policy checkpoint folder: a self-describing one (agent.json) into the model it describes, after
 * checking that `task` is the one it was trained on; an older one into a model of the config's shape.
 * Errors name the folder and what does not fit, in one line.
 */
export async function loadPolicyFrom<E>(
  dir: string,
  config: TrainConfig,
  task: AgentTask<E>,
): Promise<TransformerLM> {
  if (!existsSync(join(dir, MODEL_FILE)))
    throw new Error(`policy ${dir}: no ${MODEL_FILE} there (is it a checkpoint folder?)`);
  const description = readAgentDescription(dir);
  if (description) checkTaskFits(dir, description, task as AgentTask<unknown>);
  const policy = description
    ? new TransformerLM({ ...description.model, device: config.backend })
    : buildPolicy(config, task.vocabSize);
  try {
    // A PPO policy's value head is not needed to act: it may be there or not.
    await initPolicy(policy, dir);
  } catch (e) {
    policy.dispose();
    throw e;
  }
  return policy;
}

/** Baseline rows, then each policy's rows, on `examples`. */
export async function resultsTable<E>(
  task: AgentTask<E>,
  config: TrainConfig,
  policies: readonly TablePolicy[],
  examples: readonly E[],
  /** Hears each policy's trajectories (`eval.samples` per example, in order of example). */
  onTrajectories?: (method: string, trajectories: readonly Trajectory[]) => void,
): Promise<ResultRow[]> {
  const rows: ResultRow[] = task.baselines ? await task.baselines(examples) : [];
  for (const p of policies) {
    const model = 'policy' in p ? p.policy : await loadPolicyFrom(p.dir, config, task);
    try {
      const heard = onTrajectories && ((ts: readonly Trajectory[]) => onTrajectories(p.method, ts));
      rows.push(
        ...(await policyRows(p.method, model, task, examples, config.rollout, heard, tableSampling(config))),
      );
    } finally {
      if (!('policy' in p)) model.dispose();
    }
  }
  return rows;
}

/** `resultsTable`, and each policy's rows by kind of example (`kindRows`; none where the task has no kinds). */
export async function resultsAndKinds<E>(
  task: AgentTask<E>,
  config: TrainConfig,
  policies: readonly TablePolicy[],
  examples: readonly E[],
  onTrajectories?: (method: string, trajectories: readonly Trajectory[]) => void,
): Promise<{ rows: ResultRow[]; kinds: KindRow[] }> {
  const kinds: KindRow[] = [];
  const rows = await resultsTable(task, config, policies, examples, (method, trajectories) => {
    kinds.push(...kindRows(method, task, examples, trajectories));
    onTrajectories?.(method, trajectories);
  });
  return { rows, kinds };
}

/** The run folder of a policy checkpoint (`<run>/checkpoints/policy` → `<run>`) holding metrics.jsonl. */
function metricsFileOf(dir: string): string | undefined {
  for (let d = dir, i = 0; i < 3; d = dirname(d), i++) {
    const f = join(d, 'metrics.jsonl');
    if (existsSync(f)) return f;
  }
  return undefined;
}

/**
 * Plots the validation curve of the task's main answer metric (`metric`, e.g. 'em') of each policy's run
 * (where its metrics.jsonl is found) into `path`; nothing without a metric.
 */
export function plotRunCurves(
  path: string,
  policies: readonly { method: string; dir: string }[],
  metric: string | undefined,
): boolean {
  if (metric === undefined) return false;
  const key = validationKey(metric);
  const series: PlotSeries[] = [];
  for (const p of policies) {
    const file = metricsFileOf(p.dir);
    if (!file) continue;
    const points = readMetrics(file)
      .filter((r) => Number.isFinite(r[key]))
      .map((r) => [r.step, r[key]] as const);
    if (points.length > 0) series.push({ name: p.method, points });
  }
  if (series.length === 0) return false;
  writeSvgPlot(path, series, {
    title: `validation ${metric} during RL`,
    xLabel: 'RL step',
    yLabel: `${metric} (greedy)`,
  });
  return true;
}
