/**
 * An exponential moving average of parameters (Polyak averaging; torch's `AveragedModel` with an EMA
 * function). After each optimizer step, `update()` folds the parameters into the average:
 *
 *   sum ← decay · sum + (1 − decay) · param,   average = sum / (1 − decay^updates)
 *
 * The sum starts at zero and the division corrects its bias towards zero (as Adam's moments), so the
 * initial weights never count in the average: with a plain copy of them as the start, a decay of 0.998
 * would still weigh them at 13.5% after 1,000 updates. Evaluating the average instead of the last iterate
 * smooths out the noise of the last small-batch steps.
 */
import { type Tensor, keep, noGrad, tidy, zerosLike } from '@agent-r1/tensor';
import type { ParamNames } from './optimizer.js';

/** What a checkpoint holds of an average: the sums by "<param name>", the decay and the update count. */
export interface WeightAverageState {
  decay: number;
  updates: number;
  tensors: Record<string, Tensor>;
}

export class WeightAverage {
  readonly decay: number;
  private readonly params: readonly Tensor[];
  private readonly sums: Tensor[];
  private count = 0;

  constructor(params: Iterable<Tensor>, options: { decay: number }) {
    const { decay } = options;
    if (!(Number.isFinite(decay) && decay >= 0 && decay < 1))
      throw new Error(`WeightAverage: decay must be in [0, 1), got ${decay}`);
    this.decay = decay;
    this.params = [...params];
    this.sums = this.params.map((p) => keep(zerosLike(p)));
  }

  /** How many times `update()` ran. */
  get updates(): number {
    return this.count;
  }

  /** Folds the current parameters into the average (call after each optimizer step). */
  update(): void {
    const d = this.decay;
    noGrad(() => {
      for (const [i, p] of this.params.entries())
        tidy(() => {
          this.sums[i].copy_(this.sums[i].mul(d).add(p.mul(1 - d)));
        });
    });
    this.count++;
  }

  /** Writes the average into the parameters (the parameters themselves unchanged before any update). */
  copyToParams(): void {
    if (this.count === 0) return;
    const correction = 1 / (1 - this.decay ** this.count);
    noGrad(() => {
      for (const [i, p] of this.params.entries())
        tidy(() => {
          p.copy_(this.sums[i].mul(correction));
        });
    });
  }

  /** Parameter i's name in `names`; a parameter the names leave out cannot be saved or matched. */
  private nameOf(names: ParamNames, i: number, call: string): string {
    const name = names.get(this.params[i]);
    if (name === undefined) throw new Error(`WeightAverage.${call}: parameter ${i} has no name`);
    return name;
  }

  /** The live sums by parameter name (serialize before the next update; never dispose them). */
  state(names: ParamNames): WeightAverageState {
    const tensors: Record<string, Tensor> = {};
    for (let i = 0; i < this.params.length; i++) tensors[this.nameOf(names, i, 'state')] = this.sums[i];
    return { decay: this.decay, updates: this.count, tensors };
  }

  /** Throws, naming the culprit, when `state` does not fit this average (checks everything, changes nothing). */
  checkState(state: WeightAverageState, names: ParamNames): void {
    if (state.decay !== this.decay)
      throw new Error(`WeightAverage.loadState: the saved decay is ${state.decay}, this one's ${this.decay}`);
    if (!(Number.isInteger(state.updates) && state.updates >= 0))
      throw new Error(`WeightAverage.loadState: bad update count ${state.updates}`);
    this.params.forEach((p, i) => {
      const name = this.nameOf(names, i, 'loadState');
      const t = state.tensors[name];
      if (!t) throw new Error(`WeightAverage.loadState: no saved average for parameter '${name}'`);
      if (t.shape.length !== p.shape.length || t.shape.some((d, k) => d !== p.shape[k]))
        throw new Error(
          `WeightAverage.loadState: parameter '${name}' is [${p.shape.join(', ')}] but its saved average is [${t.shape.join(', ')}]`,
        );
    });
  }

  /** Restores a state from `state()` (or a checkpoint). The caller still owns `state.tensors`. */
  loadState(state: WeightAverageState, names: ParamNames): void {
    this.checkState(state, names);
    noGrad(() =>
      this.params.forEach((p, i) => {
        const t = state.tensors[this.nameOf(names, i, 'loadState')];
        const onDevice = t.device === p.device ? t : t.to(p.device);
        this.sums[i].copy_(onDevice);
        if (onDevice !== t) onDevice.dispose();
      }),
    );
    this.count = state.updates;
  }

  dispose(): void {
    for (const s of this.sums) s.dispose();
  }
}
