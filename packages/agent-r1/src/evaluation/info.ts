/** What a task's episode info says of the answer: the evaluation tables, episode files and kind rows read it. */

/** The answer a task read from an episode, undefined where it read none. */
export const infoAnswer = (info: Record<string, unknown>): string | undefined =>
  typeof info.answer === 'string' ? info.answer : undefined;

/** An episode's score on one answer metric: 0 where it never answered. */
export const infoScore = (info: Record<string, unknown>, key: string) =>
  typeof info[key] === 'number' ? (info[key] as number) : 0;
