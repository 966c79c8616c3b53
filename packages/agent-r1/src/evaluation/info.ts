/** What a task's episode info says of the answer: the evaluation tables, episode files and kind rows read it. */
import type { AgentTask } from '../tasks/task.js';

/** The answer a task read from an episode, undefined where it read none. */
export const infoAnswer = (info: Record<string, unknown>): string | undefined =>
  typeof info.answer === 'string' ? info.answer : undefined;

/** An episode's score on one answer metric: 0 where it never answered. */
export const infoScore = (info: Record<string, unknown>, key: string) =>
  typeof info[key] === 'number' ? (info[key] as number) : 0;

/** An episode's score on each of the task's answer metrics (`AgentTask.answerMetrics`). */
export const answerScores = (
  task: Pick<AgentTask, 'answerMetrics'>,
  info: Record<string, unknown>,
): Record<string, number> =>
  Object.fromEntries((task.answerMetrics ?? []).map((k) => [k, infoScore(info, k)]));
