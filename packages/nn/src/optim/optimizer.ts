/**
 * The optimizer base class: parameter groups with their own hyper-parameters (as in PyTorch), a global step
 * count, per-parameter buffers (AdamW's moments, SGD's momentum) kept out of every tidy scope, and a state
 * that a checkpoint saves and restores exactly.
 *
 * A float16 or bfloat16 parameter is updated through a float32 master copy (buffer "master"): the update
 * runs on it with a float32 gradient and float32 buffers, and the parameter gets its rounding. Without it,
 * an update smaller than half a unit in the last place of a half weight would round away, step after step.
 */
import { type DType, type Tensor, isHalf, keep, noGrad, zerosLike } from '@agent-r1/tensor';

/** Hyper-parameters every optimizer has; subclasses add theirs. */
export interface BaseHyper {
  lr: number;
  weightDecay: number;
}

/** A group as passed to a constructor: its parameters plus any hyper-parameters that differ from the defaults. */
export type ParamGroupSpec<H extends BaseHyper> = { params: Iterable<Tensor> } & Partial<H>;

/** A live group: `lr` is the rate used now (schedules change it), `initialLr` the one it started with. */
export type ParamGroup<H extends BaseHyper> = H & {
  readonly params: readonly Tensor[];
  initialLr: number;
};

/** A group in a saved state: its hyper-parameters and the names of its parameters, in order. */
export type GroupState = Record<string, unknown> & { lr: number; initialLr: number; params: string[] };

/**
 * Everything needed to resume an optimizer exactly. `tensors` holds the buffers named "<param name>.<buffer>"
 * (e.g. "fc.weight.m"); those `state()` returns are the optimizer's own, live tensors: read or serialize
 * them before the next step, and never dispose them.
 */
export interface OptimizerState {
  kind: string;
  step: number;
  groups: GroupState[];
  tensors: Record<string, Tensor>;
}

/** Names parameters in a state; parameters it does not name are called "<group>.<index>". */
export type ParamNames = ReadonlyMap<Tensor, string>;

export abstract class Optimizer<H extends BaseHyper> {
  readonly paramGroups: ParamGroup<H>[];
  readonly defaults: Readonly<H>;
  protected stepCount = 0;
  /** Per-parameter buffers by buffer name, created on a parameter's first update. */
  protected readonly buffers = new Map<Tensor, Record<string, Tensor>>();
  /** "AdamW", "SGD": a state is only loaded into an optimizer of its own kind. (Getters, not fields, so
   * that the base constructor can read them.) */
  abstract get kind(): string;
  /**
   * The buffers each updated parameter has (all of them, or none before its first update or where the
   * settings need none, as SGD without momentum).
   */
  protected abstract get bufferNames(): readonly string[];

  constructor(params: Iterable<Tensor> | readonly ParamGroupSpec<H>[], defaults: H) {
    this.defaults = { ...defaults };
    const list = [...(params as Iterable<Tensor | ParamGroupSpec<H>>)];
    const specs: ParamGroupSpec<H>[] =
      list.length > 0 && list.every(isGroupSpec)
        ? (list as ParamGroupSpec<H>[])
        : [{ params: list as Tensor[] } as unknown as ParamGroupSpec<H>];
    if (list.some(isGroupSpec) && !list.every(isGroupSpec))
      throw new Error(
        `${this.constructor.name}: pass either a list of tensors or a list of groups, not both`,
      );
    const seen = new Set<Tensor>();
    this.paramGroups = specs.map((spec, g) => {
      const { params: groupParams, ...overrides } = spec;
      const tensors = [...groupParams];
      for (const [i, p] of tensors.entries()) {
        if (seen.has(p))
          throw new Error(
            `${this.constructor.name}: parameter ${i} of group ${g} appears in more than one place`,
          );
        seen.add(p);
      }
      const hyper = { ...this.defaults, ...stripUndefined(overrides) } as H;
      this.checkHyper(hyper, `group ${g}`);
      return { ...hyper, params: tensors, initialLr: hyper.lr };
    });
  }

  /** Every parameter, group after group. */
  get params(): Tensor[] {
    return this.paramGroups.flatMap((g) => [...g.params]);
  }

  /** The default learning rate (each group's current rate is `paramGroups[i].lr`). */
  get lr(): number {
    return this.defaults.lr;
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.stepCount;
  }

  /** Sets every group's rate to its initial rate times `multiplier` (what a schedule returns). */
  setLrScale(multiplier: number): void {
    if (!Number.isFinite(multiplier) || multiplier < 0)
      throw new Error(`${this.kind}: lr multiplier must be a finite number >= 0, got ${multiplier}`);
    for (const group of this.paramGroups) group.lr = group.initialLr * multiplier;
  }

  /**
   * Updates every parameter that has a gradient, with each group's current rate; `lr`, when given, replaces
   * the rate of every group for this step (the single-group form: with groups, use setLrScale instead).
   */
  step(lr?: number): void {
    if (lr !== undefined && (!Number.isFinite(lr) || lr < 0))
      throw new Error(`${this.kind}.step: lr must be a finite number >= 0, got ${lr}`);
    this.stepCount++;
    noGrad(() => {
      for (const group of this.paramGroups) {
        for (const p of group.params) {
          const grad = p.grad;
          if (!grad) continue;
          let buffers = this.buffers.get(p);
          if (!buffers) {
            buffers = {};
            this.buffers.set(p, buffers);
          }
          if (!isHalf(p.dtype)) {
            this.update(p, grad, group, lr ?? group.lr, buffers);
            continue;
          }
          buffers.master ??= keep(p.cast('float32'));
          const wideGrad = grad.cast('float32');
          this.update(buffers.master, wideGrad, group, lr ?? group.lr, buffers);
          wideGrad.dispose();
          p.copy_(buffers.master);
        }
      }
    });
  }

  /** The buffers parameter `p` has once updated: a half parameter's master copy first. */
  private buffersOf(p: Tensor): readonly string[] {
    return isHalf(p.dtype) ? ['master', ...this.bufferNames] : this.bufferNames;
  }

  /** The dtype of `p`'s buffers: float32 for a half parameter (see the top of the file). */
  private bufferDtype(p: Tensor): DType {
    return isHalf(p.dtype) ? 'float32' : p.dtype;
  }

  /** One parameter's update, run under noGrad; new buffers must be `keep()`-ed into `buffers`. */
  protected abstract update(
    param: Tensor,
    grad: Tensor,
    group: ParamGroup<H>,
    lr: number,
    buffers: Record<string, Tensor>,
  ): void;

  /** Throws if a hyper-parameter is out of range; `where` names the group. */
  protected checkHyper(hyper: H, where: string): void {
    checkNumber(this.kind, where, 'lr', hyper.lr, 0);
    checkNumber(this.kind, where, 'weightDecay', hyper.weightDecay, 0);
  }

  zeroGrad(): void {
    for (const p of this.params) p.zeroGrad();
  }

  /** The state to save: step, groups (hyper-parameters and parameter names) and buffers by name. */
  state(names?: ParamNames): OptimizerState {
    const tensors: Record<string, Tensor> = {};
    const groups = this.paramGroups.map((group, g) => {
      const { params, ...hyper } = group;
      const paramNames = params.map((p, i) => names?.get(p) ?? `${g}.${i}`);
      params.forEach((p, i) => {
        const buffers = this.buffers.get(p);
        if (!buffers) return;
        for (const b of this.buffersOf(p)) if (buffers[b]) tensors[`${paramNames[i]}.${b}`] = buffers[b];
      });
      return { ...(hyper as unknown as Record<string, unknown>), params: paramNames } as GroupState;
    });
    return { kind: this.kind, step: this.stepCount, groups, tensors };
  }

  /**
   * Throws, naming what is wrong, unless `state` fits this optimizer: same kind, same groups of the same
   * parameters (by name), valid hyper-parameters, and for each parameter all its buffers or none, each of the
   * parameter's shape and dtype, with no other tensors.
   */
  checkState(state: OptimizerState, names?: ParamNames): void {
    const fail = (why: string): never => {
      throw new Error(`${this.kind}.loadState: ${why}`);
    };
    if (typeof state.tensors !== 'object' || state.tensors === null) fail('the state has no tensors record');
    if (state.kind !== this.kind) fail(`the state is for ${state.kind}, not ${this.kind}`);
    if (!Number.isSafeInteger(state.step) || state.step < 0)
      fail(`step must be an integer >= 0, got ${state.step}`);
    if (!Array.isArray(state.groups) || state.groups.length !== this.paramGroups.length)
      fail(
        `the state has ${state.groups?.length} parameter groups, this optimizer ${this.paramGroups.length}`,
      );
    const expected = new Map<string, Tensor>();
    this.paramGroups.forEach((group, g) => {
      const saved = state.groups[g];
      const mine = group.params.map((p, i) => names?.get(p) ?? `${g}.${i}`);
      const theirs = saved.params;
      if (!Array.isArray(theirs) || theirs.length !== mine.length || theirs.some((n, i) => n !== mine[i])) {
        const missing = mine.filter((n) => !theirs?.includes(n));
        const extra = (theirs ?? []).filter((n) => !mine.includes(n));
        fail(
          `group ${g} holds other parameters than the saved one` +
            (missing.length ? `; not in the state: ${missing.join(', ')}` : '') +
            (extra.length ? `; only in the state: ${extra.join(', ')}` : '') +
            (!missing.length && !extra.length ? ' (same names in another order)' : ''),
        );
      }
      const { params: _, ...hyper } = saved;
      this.checkHyper({ ...this.defaults, ...(hyper as unknown as Partial<H>) } as H, `saved group ${g}`);
      checkNumber(this.kind, `saved group ${g}`, 'initialLr', saved.initialLr, 0);
      for (const [i, p] of group.params.entries()) expected.set(mine[i], p);
    });
    const problems: string[] = [];
    const known = new Set<string>();
    for (const [name, p] of expected) {
      const present = this.buffersOf(p).filter((b) => `${name}.${b}` in state.tensors);
      for (const b of present) known.add(`${name}.${b}`);
      // The optimizer's own buffers come all or none (SGD without momentum has none); a half parameter
      // with any of them also has its master copy.
      const own = this.bufferNames.filter((b) => present.includes(b));
      const absent = own.length > 0 ? this.bufferNames.filter((b) => !present.includes(b)) : [];
      if (own.length > 0 && isHalf(p.dtype) && !present.includes('master')) absent.unshift('master');
      if (absent.length) problems.push(`missing ${absent.map((b) => `${name}.${b}`).join(', ')}`);
      for (const b of present) {
        const t = state.tensors[`${name}.${b}`];
        if (!sameShape(t.shape, p.shape) || t.dtype !== this.bufferDtype(p))
          problems.push(
            `${name}.${b} is [${t.shape}] ${t.dtype} but should be [${p.shape}] ${this.bufferDtype(p)}` +
              ` (the parameter is ${p.dtype})`,
          );
      }
    }
    const unexpected = Object.keys(state.tensors).filter((k) => !known.has(k));
    if (unexpected.length) problems.push(`unexpected tensors ${unexpected.join(', ')}`);
    if (problems.length) fail(problems.join('; '));
  }

  /**
   * Restores a state from `state()` (or a checkpoint): step, every group's hyper-parameters and rates, and
   * the buffers (copied: the caller still owns `state.tensors`). Nothing changes if the state does not fit.
   */
  loadState(state: OptimizerState, names?: ParamNames): void {
    this.checkState(state, names);
    this.disposeBuffers();
    this.stepCount = state.step;
    this.paramGroups.forEach((group, g) => {
      const saved = state.groups[g];
      const paramNames = saved.params;
      for (const key of [...Object.keys(this.defaults), 'initialLr'])
        if (saved[key] !== undefined)
          (group as unknown as Record<string, unknown>)[key] = structuredClone(saved[key]);
      group.params.forEach((p, i) => {
        const name = paramNames[i];
        const names = this.buffersOf(p).filter((b) => `${name}.${b}` in state.tensors);
        if (names.length === 0) return;
        const buffers: Record<string, Tensor> = {};
        noGrad(() => {
          for (const b of names) {
            const src = state.tensors[`${name}.${b}`];
            const onDevice = src.device === p.device ? src : src.to(p.device);
            buffers[b] = keep(zerosLike(p, { dtype: this.bufferDtype(p) })).copy_(onDevice);
            if (onDevice !== src) onDevice.dispose();
          }
        });
        this.buffers.set(p, buffers);
      });
    });
  }

  private disposeBuffers(): void {
    for (const buffers of this.buffers.values()) for (const t of Object.values(buffers)) t.dispose();
    this.buffers.clear();
  }

  /** Frees the optimizer's buffers (not the parameters). */
  dispose(): void {
    this.disposeBuffers();
  }
}

function isGroupSpec(x: unknown): boolean {
  return typeof x === 'object' && x !== null && 'params' in x && !('dtype' in x);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Throws unless `value` is a finite number in [min, max). */
export function checkNumber(
  kind: string,
  where: string,
  name: string,
  value: unknown,
  min: number,
  max = Number.POSITIVE_INFINITY,
): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value >= max) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `in [${min}, ${max})`;
    throw new Error(`${kind}: ${where}: ${name} must be a finite number ${range}, got ${String(value)}`);
  }
}
