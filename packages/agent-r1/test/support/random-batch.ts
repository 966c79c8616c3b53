/** Trajectory batches of random lengths for the sequence and update tests. */
import { Generator } from '@agent-r1/tensor';
import { type TrajectoryBatch, buildBatch } from '../../src/algorithms/batch.js';
import { startTrajectory } from '../../src/mdp/trajectory.js';

/**
 * `rows` trajectories over a vocabulary of `vocab`: a prompt of 1 to 4 tokens, then up to `maxTail - 1`
 * tokens, each an action with chance 1/3 (with a made-up behaviour log-prob) and an outcome reward in [0, 1).
 */
export function randomBatch(seed: number, rows: number, vocab: number, maxTail = 9): TrajectoryBatch {
  const generator = new Generator(seed);
  const int = (n: number) => Math.floor(generator.random() * n);
  const trajectories = Array.from({ length: rows }, (_, group) => {
    const prompt = Array.from({ length: 1 + int(4) }, () => int(vocab));
    const t = startTrajectory(group, prompt);
    for (let i = 0, n = int(maxTail); i < n; i++) {
      const action = generator.random() < 1 / 3;
      t.tokens.push(int(vocab));
      t.actionMask.push(action ? 1 : 0);
      t.logprobs.push(action ? -1 - generator.random() : 0);
    }
    if (t.actionMask.some((a) => a !== 0))
      t.rewards.push({ position: t.tokens.length - 1, value: generator.random(), kind: 'outcome' });
    return t;
  });
  return buildBatch(trajectories);
}
