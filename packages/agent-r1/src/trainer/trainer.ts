/**
 * The training run: optional language-model pretraining on the task's texts (pretrain.ts) and a supervised
 * warm start on scripted demonstrations (warm-start.ts), then RL steps (rl-step.ts), with greedy
 * validation, metrics to JSONL and an SVG plot, and checkpoints that resume the run exactly (weights,
 * optimizer moments, random generators, step).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  STATE_FILE,
  type TransformerLM,
  loadCheckpoint,
  loadHfWeights,
  readHfModelInfo,
  readCheckpointState,
  recoverCheckpoint,
  saveCheckpoint,
} from '@agent-r1/nn';
import type { AgentTask } from '../tasks/task.js';
import type { TrainConfig } from './config.js';
import {
  type Evaluation,
  describeEvaluation,
  evaluate,
  validationKey,
  validationRecord,
} from '../evaluation/evaluate.js';
import { openMetricsLog, readMetrics } from './metrics-log.js';
import { initPolicy } from '../checkpoints/init.js';
import { agentFiles } from '../checkpoints/agent-files.js';
import { refuseToContinueAverage } from '../checkpoints/stage-checkpoint.js';
import { exportPretrainedPolicy } from '../checkpoints/pretrained.js';
import { buildPolicy } from './models.js';
import { plotMetrics } from './plot.js';
import { createProgress } from './progress.js';
import { rlRun } from './rl-run.js';
import type { StepMetrics } from './rl-step.js';
import { kernelTraceLog } from './kernel-trace-log.js';
import { prepareBackend } from './backend-setup.js';
import { pretrain } from './pretrain.js';
import { warmStart } from './warm-start.js';

/** The folder under checkpoint.dir where a run from a pretrained model (`model.from`) writes its policy as a Hugging Face folder. */
export const HF_EXPORT_DIR = 'hf';

export interface TrainResult {
  /** RL steps taken in this run (after any resumed ones). */
  steps: number;
  metrics: StepMetrics[];
  /** Greedy validation by step; with a weight average (`train.emaDecay`) the last one is the average's. */
  evaluations: { step: number; evaluation: Omit<Evaluation, 'trajectories'> }[];
  policy: TransformerLM;
}

interface SavedState {
  step: number;
  warmStarted: boolean;
  /** Set once the finished stage wrote its weight average into the policy (`train.emaDecay`). */
  averaged?: boolean;
}

/**
 * The RL state saved in `policyDir` (null when nothing is saved there yet), every field checked: an error
 * names the file and the field. A folder without a state is not a run to resume: it stops the run.
 */
async function readRunState(policyDir: string, config: TrainConfig): Promise<SavedState | null> {
  if (!existsSync(policyDir) || readdirSync(policyDir).length === 0) return null;
  const file = join(policyDir, STATE_FILE);
  if (!existsSync(file))
    throw new Error(
      `resume: ${policyDir} holds no ${STATE_FILE}, so it is no checkpoint of a run; move it away, or set checkpoint.resume=false to start over`,
    );
  const saved = await readCheckpointState<Partial<SavedState> | null>(policyDir);
  const bad = (field: string, rule: string) => new Error(`resume: ${file}: "state.${field}" ${rule}`);
  if (typeof saved !== 'object' || saved === null)
    throw new Error(`resume: ${file}: "state" must be an object`);
  if (typeof saved.warmStarted !== 'boolean') throw bad('warmStarted', 'must be true or false');
  if (!Number.isSafeInteger(saved.step) || (saved.step as number) < 0)
    throw bad('step', `must be a whole number >= 0, got ${JSON.stringify(saved.step)}`);
  if ((saved.step as number) > config.train.steps)
    throw bad(
      'step',
      `is ${saved.step}, past train.steps (${config.train.steps}): raise train.steps to continue the run`,
    );
  if (saved.averaged !== undefined && typeof saved.averaged !== 'boolean')
    throw bad('averaged', 'must be true or false');
  refuseToContinueAverage('resume', policyDir, saved as SavedState, config.train.steps, 'train.emaDecay');
  return saved as SavedState;
}

export async function trainAgent<E>(
  config: TrainConfig,
  task: AgentTask<E>,
  options: { log?: (line: string) => void } = {},
): Promise<TrainResult> {
  const log = options.log ?? (() => {});
  log(await prepareBackend(config));
  const mainMetric = task.answerMetrics?.[0];
  const tracer = kernelTraceLog(config);
  // A stage that throws leaves the kernels untraced for whoever catches the error.
  const stopTracing = (error: unknown): never => {
    tracer?.close();
    throw error;
  };
  const dir = config.checkpoint.dir;
  const policyDir = join(dir, 'policy');
  const from = config.model.from;
  const pretrained =
    from === ''
      ? null
      : await readHfModelInfo(from, { maxLength: config.model.maxLength }).catch(stopTracing);
  if (pretrained && task.vocabSize !== pretrained.transformer.vocabSize)
    stopTracing(
      new Error(
        `model.from: ${from} has ${pretrained.transformer.vocabSize} token rows, task "${task.name}" ${task.vocabSize}: build the task with createTask(config), which gives it the model's tokenizer`,
      ),
    );
  const policy = buildPolicy(config, task.vocabSize, pretrained?.transformer);
  const run = rlRun(config, task, policy);
  const { optimizer, critic, criticOptimizer, average, generators } = run;
  let state: SavedState = { step: 0, warmStarted: false };
  const usesReference = config.algorithm.klCoef > 0;
  // Everything an RL step changes is one checkpoint folder: the policy, its optimizer, the generators, the
  // step, and its companions (the KL reference, a separate critic with its optimizer), saved and replaced
  // together, so a run resumes to one step's state, never a mix.
  const companions = () => ({
    ...(critic && criticOptimizer ? { critic: { model: critic, optimizer: criticOptimizer } } : {}),
    ...(run.ctx.reference ? { reference: { model: run.ctx.reference } } : {}),
  });
  const release = () => run.dispose();
  // A checkpoint that cannot be resumed stops the run with nothing left allocated.
  const releaseAll = (error: unknown): never => {
    release();
    policy.dispose();
    return stopTracing(error);
  };
  const resume = async () => {
    for (const line of await recoverCheckpoint(policyDir)) log(`resume: ${line}`);
    const saved = await readRunState(policyDir, config);
    if (saved) {
      // The reference is the policy the RL stage started from, saved with every RL checkpoint.
      if (usesReference && saved.warmStarted) run.startReference();
      state = await loadCheckpoint<SavedState>(policyDir, {
        model: policy,
        optimizer,
        ...(average ? { average } : {}),
        generators,
        companions: companions(),
      });
      log(`resumed from ${policyDir} at step ${state.step}`);
    }
  };
  if (config.checkpoint.resume) await resume().catch(releaseAll);
  if (!state.warmStarted) {
    if (pretrained) {
      const models = critic ? [policy, critic] : [policy];
      for (const model of models) await loadHfWeights(model, from, pretrained).catch(releaseAll);
      log(
        `loaded ${from}: ${pretrained.architecture}, ${policy.numParameters().toLocaleString('en-US')} parameters`,
      );
    }
    if (config.init !== '') {
      await initPolicy(policy, config.init);
      log(`initialised the policy from ${config.init}`);
    }
    await pretrain(config, task, policy, log, tracer).catch(stopTracing);
    await warmStart(config, task, policy, log, tracer).catch(stopTracing);
    state.warmStarted = true;
  }
  if (usesReference && !run.ctx.reference) run.startReference();
  const describe = agentFiles(config, task, policy);
  // A run from a pretrained model also keeps its latest policy as a Hugging Face folder (checkpoint.dir/hf).
  const save = async () => {
    await saveCheckpoint(policyDir, {
      model: policy,
      optimizer,
      ...(average ? { average } : {}),
      generators,
      state,
      files: describe,
      companions: companions(),
    });
    if (pretrained) await exportPretrainedPolicy(join(dir, HF_EXPORT_DIR), policy, from, pretrained);
  };
  // Rows after the resumed step go; a run resumed at step 0 evaluates step 0 again, so its row goes too.
  const metricsLog = openMetricsLog(config.log.dir, { fromStep: state.step === 0 ? 0 : state.step + 1 });
  const validation = task.validation.slice(0, config.eval.examples);
  const result: TrainResult = { steps: 0, metrics: [], evaluations: [], policy };
  const runEval = async (step: number, what = '') => {
    const { trajectories: _, ...evaluation } = await evaluate(policy, task, validation, config.rollout);
    result.evaluations.push({ step, evaluation });
    log(`eval @${step}${what}: ${describeEvaluation(evaluation)}`);
    return evaluation;
  };
  // The starting point (after the warm start), so the curve of validation EM begins before any RL.
  if (state.step === 0 && config.eval.every > 0 && validation.length > 0) {
    const e = await runEval(0);
    metricsLog.append(0, validationRecord(e));
  }
  const progress = createProgress({ label: `rl (${config.algorithm.name})`, mode: config.log.progress });
  progress.start(config.train.steps, {}, state.step);
  for (let step = state.step + 1; step <= config.train.steps; step++) {
    const metrics = await run.step(step, tracer).catch(stopTracing);
    const record: StepMetrics = { ...metrics };
    if (config.eval.every > 0 && step % config.eval.every === 0 && validation.length > 0) {
      const e = await runEval(step);
      Object.assign(record, validationRecord(e));
    }
    metricsLog.append(step, record);
    result.metrics.push(record);
    result.steps++;
    state.step = step;
    progress.update(step, {
      reward: metrics.reward,
      ...(mainMetric ? { [mainMetric]: metrics[mainMetric] } : {}),
    });
    if (config.checkpoint.every > 0 && step % config.checkpoint.every === 0) await save();
  }
  progress.stop();
  tracer?.close();
  metricsLog.close();
  if (average && !state.averaged && state.step > 0) {
    average.copyToParams();
    state.averaged = true;
    log(
      `rl: the policy is the average of its weights over ${average.updates} steps (train.emaDecay ${average.decay})`,
    );
    if (validation.length > 0) await runEval(state.step, ' (weight average)');
  }
  if (validation.length > 0 && result.evaluations.at(-1)?.step !== state.step) await runEval(state.step);
  await save();
  if (pretrained) log(`the trained policy as a Hugging Face folder: ${join(dir, HF_EXPORT_DIR)}`);
  const records = readMetrics(metricsLog.path);
  const plotted = ['reward', ...(mainMetric ? [mainMetric] : []), 'toolCalls', 'entropy'];
  if (mainMetric) plotted.push(validationKey(mainMetric));
  if (records.length > 0)
    plotMetrics(join(config.log.dir, 'curves.svg'), records, plotted, {
      title: `${task.name}: ${config.algorithm.name}`,
    });
  release();
  return result;
}
