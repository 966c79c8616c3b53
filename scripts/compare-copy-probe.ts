/**
 * How well a multihop policy copies a compare call, apart from its own earlier mistakes: each area
 * comparison (both orders) is run by the scripted searcher, and the policy, teacher-forced on that episode,
 * reads the call's tokens after `<compare>` (label 1, figure 1, label 2, figure 2). A call counts as wrong
 * where the policy's most likely token differs from the call's at any of them; a second figure counts as
 * the first one's copied where a most likely token that is wrong there is the first figure's at that offset.
 *
 *   npx tsx --conditions=@agent-r1/source scripts/compare-copy-probe.ts <policy folder> [test|train|renamed]
 *
 * By default it reads the test split's area comparisons (names the policy never saw); on `train` the training
 * split's (names it was trained on), on `renamed` the training split's with made-up names, renamed as the
 * warm start renames them (seed 0).
 */
import { Generator } from '@agent-r1/tensor';
import { loadAgent } from '../packages/agent-r1/src/checkpoints/load-agent.js';
import { scoreTokens } from '../packages/agent-r1/src/evaluation/imitation.js';
import { runTextEpisode } from '../packages/agent-r1/src/mdp/text-episode.js';
import type { QaExample } from '../packages/agent-r1/src/tasks/multihop-qa/data/types.js';

const PARTS = ['label 1', 'figure 1', 'label 2', 'figure 2'] as const;
/** `Peru 1,285,216 ; Brazil 8,515,767` → its four parts. */
const CALL = /^\s*(.*?\S)\s+(\S+)\s*;\s*(.*?\S)\s+(\S+)\s*$/;

const [dir, split = 'test'] = process.argv.slice(2);
if (dir === undefined || !['test', 'train', 'renamed'].includes(split))
  throw new Error('usage: compare-copy-probe.ts <policy folder> [test|train|renamed]');
const agent = await loadAgent<QaExample>(dir, { overrides: ['threads=1'] });
const { task, policy } = agent;
const codec = task.codec;
const examples = comparisons(split === 'test' ? (task.test ?? []) : task.train);
const generator = new Generator(0);
const wrong = new Map<string, number>(PARTS.map((p) => [p, 0]));
let calls = 0;
let callsWrong = 0;
let secondAsFirst = 0;
let tooLong = 0;

for (const [i, example] of examples.entries()) {
  const scripted = task.scripted?.(example, i);
  if (scripted === undefined) throw new Error(`${dir}: its task has no scripted searcher`);
  const episode = await runTextEpisode(task.makeEnv(), example, scripted);
  const turn = episode.actions.findIndex((a) => a.includes('<compare>'));
  if (turn < 0) continue;
  let head = episode.prompt;
  for (let t = 0; t < turn; t++) head += episode.actions[t] + (episode.observations[t] ?? '');
  let action = episode.actions[turn];
  if (split === 'renamed') {
    const texts = [episode.prompt, ...episode.actions, ...episode.observations.filter((o) => o !== null)];
    const renaming = task.renameEntities?.(example, texts, generator, 'warm-start');
    if (renaming === undefined) throw new Error(`${dir}: its task does not rename entities`);
    head = renaming.apply(head);
    action = renaming.apply(action);
  }
  const open = action.indexOf('<compare>') + '<compare>'.length;
  head += action.slice(0, open);
  const args = action.slice(open, action.indexOf('</compare>'));
  const match = CALL.exec(args);
  if (match === null) continue;
  // Each part ends where its text ends in the call; token boundaries are the whole text's.
  const ends: number[] = [];
  let from = 0;
  for (const part of match.slice(1)) {
    from = args.indexOf(part, from) + part.length;
    ends.push(codec.encode(head + args.slice(0, from)).length);
  }
  const ids = codec.encode(head + args);
  // Made-up names are more tokens: a renamed episode can outgrow the policy's context. Left out here.
  if (ids.length > agent.config.model.maxLength) {
    tooLong++;
    continue;
  }
  let start = codec.encode(head).length;
  const targets = Array.from({ length: ids.length - start }, (_, k) => start + k);
  const scores = await scoreTokens(policy, ids, targets);
  let anyWrong = false;
  const firstFigure = ids.slice(ends[0], ends[1]);
  PARTS.forEach((part, j) => {
    let partWrong = false;
    let copiesFirst = false;
    for (let t = start; t < ends[j]; t++) {
      const { likeliest } = scores[t - targets[0]];
      if (likeliest === ids[t]) continue;
      partWrong = true;
      if (part === 'figure 2' && likeliest === firstFigure[t - start]) copiesFirst = true;
    }
    if (copiesFirst) secondAsFirst++;
    if (partWrong) wrong.set(part, (wrong.get(part) ?? 0) + 1);
    anyWrong ||= partWrong;
    start = ends[j];
  });
  calls++;
  if (anyWrong) callsWrong++;
}
agent.dispose();
const byPart = PARTS.map((p) => `${p} ${wrong.get(p)}`).join(', ');
console.log(
  `${dir} (${split}): ${callsWrong} of ${calls} compare calls wrong (${byPart}; figure 2 as figure 1's: ${secondAsFirst})` +
    (tooLong > 0 ? `; ${tooLong} longer than the policy's context left out` : ''),
);

/** The split's area comparisons, each with its swapped twin where the task has one, each once. */
function comparisons(questions: readonly QaExample[]): QaExample[] {
  const seen = new Set<string>();
  const out: QaExample[] = [];
  for (const e of questions.filter((x) => x.kind === 'compare_area'))
    for (const x of [e, task.twinOf?.(e)])
      if (x !== undefined && !seen.has(x.id)) {
        seen.add(x.id);
        out.push(x);
      }
  return out;
}
