/**
 * The language-model pretraining stage (`pretrain.steps`): next-token prediction on plain text before the
 * warm start, the step a model trained from scratch takes where a real one would arrive pretrained. The
 * texts are the task's (`AgentTask.pretrainTexts`: multi-hop QA's are its search corpus), encoded once into
 * one token stream with the task's end token between texts; each step trains on `pretrain.batchSize`
 * windows of `pretrain.length` tokens drawn at seeded random offsets. It has its own checkpoint
 * (`<checkpoint.dir>/pretrain`) and resumes exactly.
 */
import { join } from 'node:path';
import { AdamW, type TransformerLM, saveCheckpoint } from '@agent-r1/nn';
import { agentFiles } from '../checkpoints/agent-files.js';
import { Generator } from '@agent-r1/tensor';
import { startTrajectory } from '../mdp/trajectory.js';
import type { TextCodec } from '../rollout/config.js';
import type { AgentTask } from '../tasks/task.js';
import type { TrainConfig } from './config.js';
import type { StepTracer } from './kernel-trace-log.js';
import { lrMultiplier } from './lr-schedule.js';
import { openMetricsLog } from './metrics-log.js';
import { createProgress } from './progress.js';
import { sftStep } from './sft.js';
import { resumeStage } from '../checkpoints/stage-checkpoint.js';

export const PRETRAIN_METRICS = 'pretrain.jsonl';

/** The stage's checkpoint folder. */
export function pretrainDir(config: Pick<TrainConfig, 'checkpoint'>): string {
  return join(config.checkpoint.dir, 'pretrain');
}

/** The texts encoded one after another, each followed by `separator` when one is given. */
export function tokenStream(texts: readonly string[], codec: TextCodec, separator?: number): Int32Array {
  const parts = texts.map((text) => codec.encode(text));
  const total = parts.reduce((n, p) => n + p.length + (separator === undefined ? 0 : 1), 0);
  const out = new Int32Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
    if (separator !== undefined) out[at++] = separator;
  }
  return out;
}

/** `count` windows of `length` tokens from the stream, each starting at a uniformly drawn offset. */
export function drawWindows(
  stream: Int32Array,
  length: number,
  count: number,
  generator: Generator,
): number[][] {
  const starts = stream.length - length + 1;
  return Array.from({ length: count }, () => {
    const start = Math.min(starts - 1, Math.floor(generator.random() * starts));
    return Array.from(stream.subarray(start, start + length));
  });
}

interface PretrainState {
  step: number;
}

export async function pretrain<E>(
  config: TrainConfig,
  task: AgentTask<E>,
  policy: TransformerLM,
  log: (line: string) => void,
  tracer: StepTracer | null = null,
): Promise<void> {
  const options = config.pretrain;
  if (options.steps === 0) return;
  if (!task.pretrainTexts)
    throw new Error(
      `config: "pretrain.steps" is ${options.steps} but task "${task.name}" has no texts to pretrain on`,
    );
  const started = performance.now();
  const dir = pretrainDir(config);
  const optimizer = new AdamW(policy.parameters(), { lr: options.lr, weightDecay: config.train.weightDecay });
  const resumed = await resumeStage<PretrainState>(
    config,
    { label: 'pretrain', dir, steps: options.steps, parts: { model: policy, optimizer } },
    log,
  );
  if (resumed === 'complete') {
    optimizer.dispose();
    return;
  }
  let state: PretrainState = resumed ?? { step: 0 };
  const texts = task.pretrainTexts();
  const stream = tokenStream(texts, task.codec, task.stopTokens[0]);
  if (stream.length < options.length)
    throw new Error(
      `pretrain: task "${task.name}"'s ${texts.length} texts make ${stream.length} tokens, fewer than "pretrain.length" (${options.length})`,
    );
  // Its own stream (seed + 4). Not checkpointed: a resumed stage replays the draws of the steps it skips.
  const generator = new Generator(config.seed + 4);
  const save = () =>
    saveCheckpoint(dir, { model: policy, optimizer, state, files: agentFiles(config, task, policy) });
  const metrics = openMetricsLog(config.log.dir, { fileName: PRETRAIN_METRICS, fromStep: state.step + 1 });
  const lrScale = lrMultiplier(options);
  const progress = createProgress({ label: 'pretrain', mode: config.log.progress });
  progress.start(options.steps, {}, state.step);
  for (let step = 0; step < options.steps; step++) {
    const windows = drawWindows(stream, options.length, options.batchSize, generator);
    if (step < state.step) continue;
    const lr = options.lr * lrScale(step + 1);
    tracer?.begin('pretrain', step + 1);
    // A window is a prompt-only sequence: every token is context, trained at weight 1.
    const { contextLoss } = await sftStep(
      policy,
      optimizer,
      windows.map((tokens) => startTrajectory(0, tokens)),
      { microBatchSize: config.train.microBatchSize, gradClip: config.train.gradClip, contextWeight: 1, lr },
    );
    tracer?.end('pretrain', step + 1);
    state = { step: step + 1 };
    metrics.append(step + 1, { pretrainLoss: contextLoss, pretrainLr: lr });
    progress.update(step + 1, { loss: contextLoss });
    if (config.checkpoint.every > 0 && (step + 1) % config.checkpoint.every === 0) await save();
  }
  progress.stop();
  metrics.close();
  await save();
  optimizer.dispose();
  const seconds = (performance.now() - started) / 1000;
  log(
    `pretrain: ${options.steps} steps on ${stream.length} tokens of ${texts.length} texts in ${seconds.toFixed(0)} s`,
  );
}
