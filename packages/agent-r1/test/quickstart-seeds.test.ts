/**
 * The quickstart (`npm run train:quick`, the `reveal` preset) learns whatever seed a newcomer starts it
 * with: on seeds 0 to 4, the RL stage lifts greedy validation (reward, EM and tool calls per episode) well
 * above the warm start's, which guesses. Each seed trains the preset as the CLI does, only with its files
 * in a temporary folder, one kernel thread and no progress bar.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/tasks/index.js';
import { prepareBackend } from '../src/trainer/backend-setup.js';
import { resolveConfig } from '../src/trainer/config.js';
import { trainAgent } from '../src/trainer/trainer.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-quickstart-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** How far RL must lift validation reward and EM (on a scale of 0 to 1) above the warm start's. */
const LIFT = 0.5;

describe('the reveal preset (npm run train:quick)', () => {
  it.each([0, 1, 2, 3, 4])(
    'seed %i: RL lifts greedy validation reward, EM and tool use well above the warm start',
    async (seed) => {
      const config = resolveConfig({
        preset: 'reveal',
        overrides: [
          `seed=${seed}`,
          'threads=1',
          'log.progress=none',
          `checkpoint.dir=${join(root, `seed-${seed}`, 'checkpoints')}`,
          `log.dir=${join(root, `seed-${seed}`)}`,
        ],
      });
      await prepareBackend(config);
      const result = await trainAgent(config, await createTask(config));
      result.policy.dispose();
      const first = result.evaluations[0];
      const last = result.evaluations.at(-1)!;
      // The warm start's evaluation (before any RL step) and the final one, after every RL step.
      expect(first.step).toBe(0);
      expect(last.step).toBe(config.train.steps);
      const [start, end] = [first.evaluation, last.evaluation];
      const summary = (e: typeof start) =>
        `reward ${e.reward.toFixed(2)}, EM ${e.scores.em.toFixed(2)}, tools ${e.toolCalls.toFixed(2)}`;
      const lifted = `seed ${seed}: warm start ${summary(start)} → final ${summary(end)}`;
      expect(end.reward, lifted).toBeGreaterThan(start.reward + LIFT);
      expect(end.scores.em, lifted).toBeGreaterThan(start.scores.em + LIFT);
      // The final policy calls the tool in (nearly) every episode, where the warm start's greedy policy guesses.
      expect(end.toolCalls, lifted).toBeGreaterThanOrEqual(0.9);
      expect(end.toolCalls, lifted).toBeGreaterThan(start.toolCalls + LIFT);
    },
    60_000,
  );
});
