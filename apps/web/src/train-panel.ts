/**
 * The Train panel: the reveal toy trained in the tab with the trainer's own steps (the `reveal` preset,
 * as `npm run train:quick` runs it): a warm start on scripted demonstrations that call the tool in 3 of
 * 10, then GRPO, which teaches the policy that the tool pays. The warm start's loss and each RL step's
 * reward and tool calls are drawn as they come, with greedy validation EM every `eval.every` steps; Stop
 * ends the run after the step in progress.
 */
import {
  type StepMetrics,
  type TrainConfig,
  buildPolicy,
  evaluate,
  presetConfig,
  revealTask,
  rlRun,
  warmStartData,
  warmStartOptimizers,
  warmStartStep,
} from '@agent-r1/agent/browser';
import type { PageBackend } from './backend.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const SVG = 'http://www.w3.org/2000/svg';

/** Lets the page paint and hear the Stop button between steps. */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

interface Series {
  name: string;
  className: string;
  /** Points as [x, y]; y in [0, max]. */
  points: [number, number][];
  dots?: boolean;
}

/** A small line chart: x from 0 to `xMax`, y from 0 to `yMax`, one polyline (or dots) per series. */
function drawChart(svg: SVGSVGElement, title: string, xMax: number, yMax: number, series: Series[]): void {
  const [w, h, left, bottom, top] = [640, 220, 40, 28, 24];
  const x = (v: number) => left + ((w - left - 10) * v) / Math.max(xMax, 1);
  const y = (v: number) => h - bottom - ((h - bottom - top) * Math.min(v, yMax)) / yMax;
  const node = (tag: string, attrs: Record<string, string | number>, text?: string) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  };
  svg.replaceChildren(
    node('text', { x: left, y: 16, class: 'chart-title' }, title),
    node('line', { x1: left, y1: y(0), x2: w - 10, y2: y(0), class: 'axis' }),
    node('line', { x1: left, y1: y(0), x2: left, y2: y(yMax), class: 'axis' }),
    node('text', { x: left - 6, y: y(yMax) + 4, class: 'tick', 'text-anchor': 'end' }, String(yMax)),
    node('text', { x: left - 6, y: y(0) + 4, class: 'tick', 'text-anchor': 'end' }, '0'),
    node('text', { x: w - 10, y: h - 8, class: 'tick', 'text-anchor': 'end' }, `step ${xMax}`),
  );
  for (const s of series) {
    const values = s.points.map(([, v]) => v).join(',');
    if (s.dots) {
      const g = node('g', { class: s.className, 'data-values': values });
      for (const [px, py] of s.points) g.append(node('circle', { cx: x(px), cy: y(py), r: 4 }));
      svg.append(g);
    } else
      svg.append(
        node('polyline', {
          class: s.className,
          'data-values': values,
          points: s.points.map(([px, py]) => `${x(px)},${y(py)}`).join(' '),
        }),
      );
  }
}

export class TrainPanel {
  readonly #backend: PageBackend;
  #stop = false;
  #running = false;

  constructor(backend: PageBackend) {
    this.#backend = backend;
    $('train-start').addEventListener('click', () => void this.train());
    $('train-stop').addEventListener('click', () => {
      this.#stop = true;
      $<HTMLButtonElement>('train-stop').disabled = true;
    });
  }

  #status(state: string, text: string): void {
    const status = $('train-status');
    status.dataset.state = state;
    status.textContent = text;
  }

  /** The run's config from the form: the reveal preset with its seed and RL steps, on the page's backend. */
  #config(): TrainConfig {
    const seed = Number($<HTMLInputElement>('train-seed').value);
    const steps = Number($<HTMLInputElement>('train-steps').value);
    return presetConfig('reveal', {
      seed,
      backend: this.#backend.device,
      train: { steps },
      log: { progress: 'none' },
    });
  }

  async train(): Promise<void> {
    if (this.#running) return;
    let config: TrainConfig;
    try {
      config = this.#config();
    } catch (e) {
      this.#status('error', (e as Error).message);
      return;
    }
    this.#running = true;
    this.#stop = false;
    $<HTMLButtonElement>('train-start').disabled = true;
    $<HTMLButtonElement>('train-stop').disabled = false;
    const started = performance.now();
    const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
    const task = revealTask(config);
    const policy = buildPolicy(config, task.vocabSize);
    const losses: [number, number][] = [];
    const rewards: [number, number][] = [];
    const tools: [number, number][] = [];
    const valEm: [number, number][] = [];
    const drawLoss = () =>
      drawChart($('warm-start-curve') as unknown as SVGSVGElement, 'warm start: loss', config.sft.steps, 3, [
        { name: 'loss', className: 'loss', points: losses },
      ]);
    const drawRl = () =>
      drawChart(
        $('rl-curve') as unknown as SVGSVGElement,
        'GRPO: reward and tool calls per episode (sampled), greedy validation EM (dots)',
        config.train.steps,
        1,
        [
          { name: 'reward', className: 'reward', points: rewards },
          { name: 'tool calls', className: 'tools', points: tools },
          { name: 'validation EM', className: 'val-em', points: valEm, dots: true },
        ],
      );
    drawLoss();
    drawRl();
    const validation = task.validation.slice(0, config.eval.examples);
    const validate = async (step: number) => {
      const { scores } = await evaluate(policy, task, validation, config.rollout);
      valEm.push([step, scores.em]);
    };
    let stage = 'warm start';
    let done = 0;
    try {
      this.#status('warm-start', `warm start: playing ${config.sft.demonstrations} scripted demonstrations…`);
      await nextTask();
      const data = await warmStartData(config, task);
      const optimizers = warmStartOptimizers(config, policy);
      try {
        for (let step = 1; step <= config.sft.steps && !this.#stop; step++) {
          const { loss } = await warmStartStep(config, policy, optimizers, data.nextBatch(), step);
          losses.push([step, loss]);
          done = step;
          if (step % 5 === 0 || step === config.sft.steps) {
            drawLoss();
            this.#status(
              'warm-start',
              `warm start: step ${step} of ${config.sft.steps}, loss ${loss.toFixed(3)} (${seconds()} s)`,
            );
          }
          await nextTask();
        }
        optimizers.average?.copyToParams();
      } finally {
        optimizers.dispose();
      }
      if (!this.#stop) {
        stage = 'GRPO';
        done = 0;
        const run = rlRun(config, task, policy);
        try {
          run.startReference();
          await validate(0);
          drawRl();
          for (let step = 1; step <= config.train.steps && !this.#stop; step++) {
            const metrics: StepMetrics = await run.step(step);
            rewards.push([step, metrics.reward]);
            tools.push([step, metrics.toolCalls]);
            if (config.eval.every > 0 && step % config.eval.every === 0) await validate(step);
            done = step;
            drawRl();
            this.#status(
              'rl',
              `GRPO: step ${step} of ${config.train.steps}, reward ${metrics.reward.toFixed(2)}, tool calls ${metrics.toolCalls.toFixed(2)} per episode (${seconds()} s)`,
            );
            await nextTask();
          }
          run.average?.copyToParams();
        } finally {
          run.dispose();
        }
      }
      const em = valEm.map(([, v]) => v.toFixed(2)).join(' → ');
      if (this.#stop) this.#status('stopped', `Stopped after ${stage} step ${done} (${seconds()} s).`);
      else
        this.#status(
          'done',
          `Done in ${seconds()} s: greedy validation EM ${em} over ${config.train.steps} GRPO steps, on ${this.#backend.line}.`,
        );
    } catch (e) {
      this.#status('error', `Training stopped: ${(e as Error).message}`);
    } finally {
      policy.dispose();
      this.#running = false;
      $<HTMLButtonElement>('train-start').disabled = false;
      $<HTMLButtonElement>('train-stop').disabled = true;
    }
  }
}
