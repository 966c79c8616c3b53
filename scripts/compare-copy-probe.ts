/**
 * How well a multihop policy copies a compare call, apart from its own earlier mistakes: each area
 * comparison (both orders) is recorded as the warm start records a demonstration (the scripted searcher in
 * the task's environment, `recordDemonstration`) and laid out as its tokens (`encodeDemonstration`, or
 * `renamedDemonstration` renamed); the policy, teacher-forced on those tokens, reads the call's tokens after
 * `<compare>` (label 1, figure 1, label 2, figure 2). A call counts as wrong where the policy's most likely
 * token differs from the call's at any of them; a second figure counts as the first one's copied where a
 * most likely token that is wrong there is the first figure's at that offset.
 *
 *   npx tsx --conditions=@agent-r1/source scripts/compare-copy-probe.ts <policy folder> \
 *     [test|train|renamed] [--show]
 *
 * By default it reads the test split's area comparisons (names the policy never saw); on `train` the
 * training split's (names it was trained on), on `renamed` the training split's with made-up names, renamed
 * as the warm start renames them (seed 0; the first of its draws that fits the rollout's limits; those that
 * none fits are left out). `--show` lists each wrong token: the call up to it, the call's token (with the
 * policy's probability of it) and the policy's.
 */
import { Generator } from '@agent-r1/tensor';
import { loadAgent } from '../packages/agent-r1/src/checkpoints/load-agent.js';
import { scoreTokens } from '../packages/agent-r1/src/evaluation/imitation.js';
import type { QaExample } from '../packages/agent-r1/src/tasks/multihop-qa/data/types.js';
import {
  type Demonstration,
  demonstrationTexts,
  encodeDemonstration,
  recordDemonstration,
  renamedDemonstration,
} from '../packages/agent-r1/src/trainer/demonstrations.js';

const PARTS = ['label 1', 'figure 1', 'label 2', 'figure 2'] as const;
/** `Peru 1,285,216 ; Brazil 8,515,767` → its four parts. */
const CALL = /^\s*(.*?\S)\s+(\S+)\s*;\s*(.*?\S)\s+(\S+)\s*$/;
const OPEN = '<compare>';

const args = process.argv.slice(2);
const show = args.includes('--show');
const [dir, split = 'test'] = args.filter((a) => a !== '--show');
if (dir === undefined || !['test', 'train', 'renamed'].includes(split))
  throw new Error('usage: compare-copy-probe.ts <policy folder> [test|train|renamed] [--show]');
const agent = await loadAgent<QaExample>(dir, { overrides: ['threads=1'] });
const { task, policy } = agent;
const { codec } = task;
const limits = agent.config.rollout;
const examples = comparisons(split === 'test' ? (task.test ?? []) : task.train);
const generator = new Generator(0);
const wrong = new Map<string, number>(PARTS.map((p) => [p, 0]));
let calls = 0;
let callsWrong = 0;
let secondAsFirst = 0;
let leftOut = 0;

for (const [i, example] of examples.entries()) {
  const scripted = task.scripted?.(example, i);
  if (scripted === undefined) throw new Error(`${dir}: its task has no scripted searcher`);
  const demo = await recordDemonstration(task.makeEnv(), example, scripted, codec, limits);
  const turn = demo.turns.findIndex((t) => t.action.includes(OPEN));
  if (turn < 0) continue;
  const laidOut =
    split === 'renamed'
      ? renamed(example, demo)
      : { trajectory: encodeDemonstration(demo, codec, limits), renaming: { apply: (text: string) => text } };
  // The warm start keeps a demonstration that no renaming fits as it was; here it is left out.
  if (laidOut === undefined) {
    leftOut++;
    continue;
  }
  const { trajectory: traj, renaming } = laidOut;
  const action = renaming.apply(demo.turns[turn].action);
  const open = action.indexOf(OPEN) + OPEN.length;
  const callText = action.slice(open, action.indexOf('</compare>'));
  const match = CALL.exec(callText);
  if (match === null) continue;
  // The action is encoded alone (encodeDemonstration): its prefixes give each part's last token.
  const actionStart = traj.turns[turn].actionStart;
  const at = (chars: number) => actionStart + codec.encode(action.slice(0, chars)).length;
  const ends: number[] = [];
  let from = 0;
  for (const part of match.slice(1)) {
    from = callText.indexOf(part, from) + part.length;
    ends.push(at(open + from));
  }
  let start = at(open);
  const ids = traj.tokens;
  const targets = Array.from({ length: ends[3] - start }, (_, k) => start + k);
  const scores = await scoreTokens(policy, ids, targets);
  let anyWrong = false;
  const firstFigure = ids.slice(ends[0], ends[1]);
  PARTS.forEach((part, j) => {
    let partWrong = false;
    let copiesFirst = false;
    for (let t = start; t < ends[j]; t++) {
      const { likeliest, nll } = scores[t - targets[0]];
      if (likeliest === ids[t]) continue;
      partWrong = true;
      if (part === 'figure 2' && likeliest === firstFigure[t - start]) copiesFirst = true;
      if (show) {
        const text = (tokens: readonly number[]) => JSON.stringify(codec.decode(tokens));
        console.log(
          `${example.id} ${part}: ${text(ids.slice(targets[0], t))} → ${text([ids[t]])} (p ${Math.exp(-nll).toFixed(2)}), the policy ${text([likeliest])}`,
        );
      }
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
    (leftOut > 0 ? `; ${leftOut} that no renaming fits the rollout's limits left out` : ''),
);

/** The demonstration renamed as the warm start renames it (up to its number of draws), or undefined. */
function renamed(example: QaExample, demo: Demonstration) {
  const rename = task.renameEntities;
  if (rename === undefined) throw new Error(`${dir}: its task does not rename entities`);
  const texts = demonstrationTexts(demo);
  return renamedDemonstration(
    demo,
    codec,
    limits,
    (fit) => rename(example, texts, generator, 'warm-start', fit),
    agent.config.sft.renameToFit,
  );
}

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
