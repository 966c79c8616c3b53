/**
 * A model is data (named parameters, nested through sub-modules) plus a forward function. Parameter names
 * are dotted paths ("blocks.0.attn.qkv.weight"), as checkpoints store them.
 */
import { Tensor, keep } from '@agent-r1/tensor';

/** The move in progress: old parameter → its copy, and the modules visited (shared by nested `to` calls). */
let moving: { copies: Map<Tensor, Tensor>; modules: Module[] } | null = null;

export abstract class Module {
  private readonly ownParameters = new Map<string, Tensor>();
  private readonly children = new Map<string, Module>();
  training = true;

  /**
   * Registers a parameter (made a leaf that requires grad) under `name`, and returns it. Parameters live
   * until the module is disposed, even when it was built inside a tidy scope.
   */
  protected parameter(name: string, value: Tensor): Tensor {
    if (this.ownParameters.has(name) || this.children.has(name))
      throw new Error(`Module: '${name}' is already registered`);
    value.requiresGrad = true;
    this.ownParameters.set(name, keep(value));
    return value;
  }

  /** Registers a sub-module under `name`, and returns it. */
  protected module<M extends Module>(name: string, child: M): M {
    if (this.ownParameters.has(name) || this.children.has(name))
      throw new Error(`Module: '${name}' is already registered`);
    this.children.set(name, child);
    return child;
  }

  *namedParameters(prefix = ''): Generator<[string, Tensor]> {
    for (const [name, p] of this.ownParameters) yield [prefix + name, p];
    for (const [name, child] of this.children) yield* child.namedParameters(`${prefix}${name}.`);
  }

  parameters(): Tensor[] {
    return [...this.namedParameters()].map(([, p]) => p);
  }

  numParameters(): number {
    return this.parameters().reduce((n, p) => n + p.size, 0);
  }

  /** Sets training mode here and in every sub-module (dropout and the like read it). */
  train(mode = true): this {
    this.training = mode;
    for (const child of this.children.values()) child.train(mode);
    return this;
  }

  eval(): this {
    return this.train(false);
  }

  zeroGrad(): void {
    for (const p of this.parameters()) p.zeroGrad();
  }

  /**
   * Moves every parameter (here and in sub-modules) to a registered device: each becomes a kept leaf copy on
   * that device, with the old tensor's requiresGrad, replacing the old one in the registry and in any own
   * field of a module that held it; the old tensors (and their gradients) are then disposed. A tensor
   * registered or held in several places is copied once. The source must be readable synchronously.
   * Optimizers hold parameter tensors: build them after moving. Subclasses with buffers override this,
   * call super.to(device) and move their buffers.
   */
  to(device: string): this {
    const outer = moving === null;
    if (outer) moving = { copies: new Map(), modules: [] };
    const move = moving as NonNullable<typeof moving>;
    try {
      move.modules.push(this);
      for (const old of this.ownParameters.values()) {
        if (old.device === device || move.copies.has(old)) continue;
        const next = keep(old.to(device));
        next.requiresGrad = old.requiresGrad;
        move.copies.set(old, next);
      }
      for (const child of this.children.values()) child.to(device);
    } catch (err) {
      if (outer) {
        moving = null;
        for (const next of move.copies.values()) next.dispose();
      }
      throw err;
    }
    if (!outer) return this;
    moving = null;
    for (const m of move.modules) {
      for (const [name, t] of m.ownParameters) {
        const next = move.copies.get(t);
        if (next) m.ownParameters.set(name, next);
      }
      const fields = m as unknown as Record<string, unknown>;
      for (const key of Object.keys(fields)) {
        const value = fields[key];
        const next = value instanceof Tensor ? move.copies.get(value) : undefined;
        if (next) fields[key] = next;
      }
    }
    for (const old of move.copies.keys()) old.dispose();
    return this;
  }

  /** Frees every parameter's storage (and gradient). */
  dispose(): void {
    for (const p of this.parameters()) p.dispose();
  }
}
