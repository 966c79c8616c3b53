import { type Tensor, adamwUpdate, keep, zerosLike } from '@agent-r1/tensor';

export interface AdamWOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

/** AdamW (decoupled weight decay) over a list of parameters, through the fused adamw primitive. */
export class AdamW {
  readonly lr: number;
  private readonly options: Required<Omit<AdamWOptions, 'lr'>>;
  private readonly moments = new Map<Tensor, { m: Tensor; v: Tensor }>();
  private stepCount = 0;

  constructor(
    readonly params: Tensor[],
    options: AdamWOptions = {},
  ) {
    this.lr = options.lr ?? 1e-3;
    this.options = {
      betas: options.betas ?? [0.9, 0.999],
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 0.01,
    };
  }

  get steps(): number {
    return this.stepCount;
  }

  /** Updates every parameter that has a gradient; `lr` overrides the configured rate (for schedules). */
  step(lr = this.lr): void {
    this.stepCount++;
    for (const p of this.params) {
      if (!p.grad) continue;
      let state = this.moments.get(p);
      if (!state) {
        // Optimizer state outlives any tidy scope the step runs in.
        state = { m: keep(zerosLike(p)), v: keep(zerosLike(p)) };
        this.moments.set(p, state);
      }
      adamwUpdate(p, p.grad, state.m, state.v, {
        lr,
        beta1: this.options.betas[0],
        beta2: this.options.betas[1],
        eps: this.options.eps,
        weightDecay: this.options.weightDecay,
        step: this.stepCount,
      });
    }
  }

  zeroGrad(): void {
    for (const p of this.params) p.zeroGrad();
  }

  dispose(): void {
    for (const { m, v } of this.moments.values()) {
      m.dispose();
      v.dispose();
    }
    this.moments.clear();
  }
}
