/**
 * The supervised warm start stage: scripted demonstrations, then `sft.steps` optimizer steps on batches
 * of similar length (less padding: attention costs grow with the square of the padded length), drawn
 * from a seeded order, with its own checkpoint (`<checkpoint.dir>/warm-start`) so that an interrupted
 * stage resumes where it stopped, exactly.
 */
import { join } from 'node:path';
import { type TransformerLM, saveCheckpoint } from '@agent-r1/nn';
import { agentFiles } from '../checkpoints/agent-files.js';
import type { AgentTask } from '../tasks/task.js';
import type { StepTracer } from './kernel-trace-log.js';
import type { TrainConfig } from './config.js';
import { openMetricsLog } from './metrics-log.js';
import { createProgress } from './progress.js';
import { warmStartData, warmStartOptimizers, warmStartStep } from './warm-start-steps.js';
import { refuseToContinueAverage, resumeStage } from '../checkpoints/stage-checkpoint.js';

export { lengthBucketedBatches } from './warm-start-steps.js';

export const WARM_START_METRICS = 'warm-start.jsonl';

/** The warm start's checkpoint folder: the policy the RL stage starts from. */
export function warmStartDir(config: Pick<TrainConfig, 'checkpoint'>): string {
  return join(config.checkpoint.dir, 'warm-start');
}

interface WarmStartState {
  step: number;
  /** Set once the finished stage wrote its weight average into the model (`sft.emaDecay`). */
  averaged?: boolean;
}

export async function warmStart<E>(
  config: TrainConfig,
  task: AgentTask<E>,
  policy: TransformerLM,
  log: (line: string) => void,
  tracer: StepTracer | null = null,
): Promise<void> {
  const { sft } = config;
  if (sft.steps === 0) return;
  if (!task.scripted)
    throw new Error(`config: "sft.steps" is ${sft.steps} but task "${task.name}" has no scripted policy`);
  const started = performance.now();
  const optimizers = warmStartOptimizers(config, policy);
  const { optimizer, average } = optimizers;
  const release = () => optimizers.dispose();
  const dir = warmStartDir(config);
  const resumed = await resumeStage<WarmStartState>(
    config,
    {
      label: 'warm start',
      dir,
      steps: sft.steps,
      parts: { model: policy, optimizer, average },
      // A stage that finished with a weight average saved the average alone.
      check: (saved) => refuseToContinueAverage('warm start', dir, saved, sft.steps, 'sft.emaDecay'),
    },
    log,
  );
  if (resumed === 'complete') {
    release();
    return;
  }
  let state: WarmStartState = resumed ?? { step: 0 };
  const data = await warmStartData(config, task, log);
  const files = agentFiles(config, task, policy);
  const save = () => saveCheckpoint(dir, { model: policy, optimizer, average, state, files });
  const metrics = openMetricsLog(config.log.dir, { fileName: WARM_START_METRICS, fromStep: state.step + 1 });
  const progress = createProgress({ label: 'warm start', mode: config.log.progress });
  progress.start(sft.steps, {}, state.step);
  for (let step = 0; step < sft.steps; step++) {
    const batch = data.nextBatch();
    if (step < state.step) continue;
    tracer?.begin('warm-start', step + 1);
    const result = await warmStartStep(config, policy, optimizers, batch, step + 1);
    tracer?.end('warm-start', step + 1);
    state = { step: step + 1 };
    metrics.append(step + 1, {
      sftLoss: result.loss,
      sftLr: result.lr,
      ...(Number.isNaN(result.contextLoss) ? {} : { sftContextLoss: result.contextLoss }),
    });
    progress.update(step + 1, { loss: result.loss });
    if (config.checkpoint.every > 0 && (step + 1) % config.checkpoint.every === 0) await save();
  }
  progress.stop();
  metrics.close();
  if (average) {
    average.copyToParams();
    state = { ...state, averaged: true };
    await saveCheckpoint(dir, { model: policy, state, files });
  } else await save();
  release();
  const seconds = (performance.now() - started) / 1000;
  log(`warm start: ${sft.steps} steps on ${data.demonstrations} demonstrations in ${seconds.toFixed(0)} s`);
}
