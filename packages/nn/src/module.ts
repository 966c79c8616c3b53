/**
 * A model is data (named parameters, nested through sub-modules) plus a forward function. Parameter names
 * are dotted paths ("blocks.0.attn.qkv.weight"), as checkpoints store them.
 */
import { type Tensor, keep } from '@agent-r1/tensor';

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

  /** Frees every parameter's storage (and gradient). */
  dispose(): void {
    for (const p of this.parameters()) p.dispose();
  }
}
