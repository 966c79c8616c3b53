/**
 * Each episode of a results table as a JSON line (`agent-r1 eval --episodes`): the example, its
 * group, every turn's action and observation as text, the answer and its scores, so that a user can read
 * where a policy goes wrong question by question, as the table only counts it.
 */
import { join } from 'node:path';
import { writeFileAtomicSync } from '@agent-r1/nn';
import { type Trajectory, totalReward } from '../mdp/trajectory.js';
import type { AgentTask } from '../tasks/task.js';
import { transcript } from '../checkpoints/agent.js';
import { answerScores, infoAnswer } from './info.js';
import { exampleGroup } from './results.js';

export interface EpisodeRecord<E = unknown> {
  /** The example's position among the table's examples. */
  index: number;
  /** Which of the example's episodes this is: 0 for a greedy table, 0 to `eval.samples` − 1 for a sampled one. */
  sample: number;
  example: E;
  group: string;
  turns: { action: string; observation: string }[];
  /** The answer the task read from the episode, where it reads one. */
  answer: string | null;
  /** The task's answer metrics (e.g. em, f1) of this episode. */
  scores: Record<string, number>;
  reward: number;
}

/** The episodes of one policy on `examples` (each example's trajectories in a row, `t.group` its index). */
export function episodeRecords<E>(
  task: AgentTask<E>,
  examples: readonly E[],
  trajectories: readonly Trajectory[],
): EpisodeRecord<E>[] {
  let sample = 0;
  return trajectories.map((t, i) => {
    const example = examples[t.group];
    sample = i > 0 && trajectories[i - 1].group === t.group ? sample + 1 : 0;
    return {
      index: t.group,
      sample,
      example,
      group: String(exampleGroup(task, example)),
      turns: transcript(task as AgentTask<unknown>, t),
      answer: infoAnswer(t.info) ?? null,
      scores: answerScores(task, t.info),
      reward: totalReward(t),
    };
  });
}

/** `GRPO, no action mask` → `grpo-no-action-mask`: a file name for a table's method. */
export const methodSlug = (method: string) =>
  method
    .toLowerCase()
    .replace(/[^a-z0-9+]+/g, '-')
    .replace(/^-|-$/g, '') || 'policy';

/**
 * Stops before any policy is evaluated when two of `methods` would write the same episode file
 * (`GRPO` and `grpo`), naming both: the second would overwrite the first's episodes.
 */
export function checkEpisodeFiles(methods: readonly string[]): void {
  const bySlug = new Map<string, string>();
  for (const method of methods) {
    const slug = methodSlug(method);
    const earlier = bySlug.get(slug);
    if (earlier !== undefined)
      throw new Error(
        `--episodes: the methods "${earlier}" and "${method}" would share the file ${slug}.jsonl; name them apart`,
      );
    bySlug.set(slug, method);
  }
}

/** Writes `<dir>/<method>.jsonl` atomically and returns its path. */
export function writeEpisodes(dir: string, method: string, records: readonly EpisodeRecord[]): string {
  const path = join(dir, `${methodSlug(method)}.jsonl`);
  writeFileAtomicSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return path;
}
