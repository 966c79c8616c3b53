/**
 * Where a training stage with a checkpoint folder of its own (pretraining, the warm start) starts, with
 * `checkpoint.resume`: a finished stage's model is loaded and the stage is not run again; an unfinished one
 * continues from its saved model, optimizer and state; without a saved state it starts afresh.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type LoadCheckpointOptions,
  STATE_FILE,
  loadCheckpoint,
  readCheckpointState,
  recoverCheckpoint,
} from '@agent-r1/nn';
import type { TrainConfig } from '../trainer/config.js';

export interface StageResume<S> {
  /** The stage's label in log lines, e.g. 'warm start'. */
  label: string;
  dir: string;
  /** The steps the stage is configured for: a saved state at or past them is a finished stage. */
  steps: number;
  /** What an unfinished stage loads (a finished one loads the model alone). */
  parts: LoadCheckpointOptions;
  /** Called with the saved state before anything is loaded, to refuse one (by throwing). */
  check?: (saved: S) => void;
}

/**
 * Throws when a saved stage finished with a weight average (`averaged`) and is asked for more steps: its
 * model is the average, the stage's output, not a point to continue training from. `key` names the
 * setting that averages (`sft.emaDecay`, `train.emaDecay`).
 */
export function refuseToContinueAverage(
  label: string,
  dir: string,
  saved: { step: number; averaged?: boolean },
  steps: number,
  key: string,
): void {
  if (saved.averaged && saved.step < steps)
    throw new Error(
      `${label}: ${dir} finished at step ${saved.step} and holds the average of its weights (${key}); it cannot be continued to ${steps} steps: use another checkpoint.dir, or checkpoint.resume=false to start over`,
    );
}

/** 'complete' when the stage is finished (its model loaded), else the state to continue from. */
export async function resumeStage<S extends { step: number }>(
  config: Pick<TrainConfig, 'checkpoint'>,
  o: StageResume<S>,
  log: (line: string) => void,
): Promise<'complete' | S | null> {
  if (!config.checkpoint.resume) return null;
  for (const line of await recoverCheckpoint(o.dir)) log(`${o.label}: ${line}`);
  if (!existsSync(o.dir) || readdirSync(o.dir).length === 0) return null;
  if (!existsSync(join(o.dir, STATE_FILE)))
    throw new Error(
      `${o.label}: ${o.dir} holds no ${STATE_FILE}, so it is no checkpoint of the stage; move it away, or set checkpoint.resume=false to start over`,
    );
  const saved = await readCheckpointState<S>(o.dir);
  if (typeof saved !== 'object' || saved === null || !Number.isSafeInteger(saved.step) || saved.step < 0)
    throw new Error(`${o.label}: ${join(o.dir, STATE_FILE)}: "state.step" must be a whole number >= 0`);
  o.check?.(saved);
  if (saved.step >= o.steps) {
    await loadCheckpoint(o.dir, { model: o.parts.model });
    log(`${o.label}: ${o.dir} is complete (step ${saved.step})`);
    return 'complete';
  }
  const state = await loadCheckpoint<S>(o.dir, o.parts);
  log(`${o.label}: resumed from ${o.dir} at step ${state.step}`);
  return state;
}
