/// <reference lib="esnext.disposable" preserve="true" />
/**
 * The Tensor value: a view (shape, strides, offset) of reference-counted backend storage, plus its place in
 * the autograd graph. Methods are thin wrappers over the functions in ./ops, named as PyTorch users expect.
 */
import { type BackwardOptions, type Node, backward as runBackward } from './autograd.js';
import type { Backend, Storage, View } from './backend/backend.js';
import { type DType, type TypedArray, isFloat, isHalf } from './dtype.js';
import { decodeHalf } from './half.js';
import { StorageRef, countTensor, keep, track } from './memory.js';
import { creation, elementwise, indexing, linalg, movement, nn, reduce } from './ops/index.js';
import { type Shape, contiguousStrides, formatShape, isContiguous, sizeOf } from './shape.js';

export type Scalar = number | boolean;
export type TensorOrScalar = Tensor | number;
export type NestedArray = number | boolean | NestedArray[];
type Axes = number | readonly number[];

export class Tensor implements View {
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly dtype: DType;
  readonly backend: Backend;
  /** The autograd node that produced this tensor, or null for a leaf. */
  node: Node | null = null;
  private ref: StorageRef | null;
  private leafRequiresGrad = false;
  private gradTensor: Tensor | null = null;

  /** Low level: wraps a storage reference. Use `tensor()`, `zeros()` and the ops to make tensors. */
  constructor(ref: StorageRef, shape: Shape, dtype: DType, strides?: readonly number[], offset = 0) {
    this.ref = ref;
    this.backend = ref.backend;
    this.shape = shape;
    this.strides = strides ?? contiguousStrides(shape);
    this.offset = offset;
    this.dtype = dtype;
    countTensor(1);
    track(this);
  }

  /** A new contiguous tensor with uninitialised storage on `backend`. */
  static empty(backend: Backend, shape: Shape, dtype: DType): Tensor {
    if (isHalf(dtype) && !backend.halfKernels)
      throw new Error(
        `the ${backend.name} backend cannot store ${dtype} tensors (shape ${formatShape(shape)}); use float32 there`,
      );
    return new Tensor(new StorageRef(backend, backend.alloc(dtype, sizeOf(shape))), [...shape], dtype);
  }

  get storage(): Storage {
    if (!this.ref)
      throw new Error(
        `tensor of shape ${formatShape(this.shape)} (${this.dtype}) was disposed and can no longer be used`,
      );
    return this.ref.storage;
  }

  get device(): string {
    return this.backend.name;
  }

  get size(): number {
    return sizeOf(this.shape);
  }

  get rank(): number {
    return this.shape.length;
  }

  get isContiguous(): boolean {
    return isContiguous(this.shape, this.strides);
  }

  get isDisposed(): boolean {
    return this.ref === null;
  }

  // ---- views sharing this tensor's storage ----

  /** A tensor viewing the same storage with another layout (no copy, no graph). */
  view(shape: Shape, strides: readonly number[], offset: number): Tensor {
    const ref = this.liveRef();
    return new Tensor(ref.retain(), [...shape], this.dtype, [...strides], offset);
  }

  /** A detached view kept by the autograd graph: not owned by any tidy scope. */
  savedView(): Tensor {
    return keep(this.view(this.shape, this.strides, this.offset));
  }

  private liveRef(): StorageRef {
    if (!this.ref) this.storage;
    return this.ref!;
  }

  // ---- autograd ----

  get requiresGrad(): boolean {
    return this.leafRequiresGrad || this.node !== null;
  }

  set requiresGrad(value: boolean) {
    if (this.node)
      throw new Error('requiresGrad can only be set on a leaf tensor (this one was computed by an op)');
    if (value && !isFloat(this.dtype))
      throw new Error(`requiresGrad: only floating-point tensors can require grad, not ${this.dtype}`);
    this.leafRequiresGrad = value;
  }

  get isLeaf(): boolean {
    return this.node === null;
  }

  get grad(): Tensor | null {
    return this.gradTensor;
  }

  /** Replaces the gradient (disposing the previous one); null clears it. */
  setGrad(grad: Tensor | null): void {
    if (grad && !sameShape(grad.shape, this.shape)) {
      throw new Error(
        `setGrad: gradient shape ${formatShape(grad.shape)} does not match tensor shape ${formatShape(this.shape)}`,
      );
    }
    if (this.gradTensor && this.gradTensor !== grad) this.gradTensor.dispose();
    this.gradTensor = grad ? keep(grad) : null;
  }

  zeroGrad(): void {
    this.setGrad(null);
  }

  /** Back-propagates from this tensor; a non-scalar needs a seed gradient of its shape. */
  backward(seed?: Tensor, options?: BackwardOptions): void {
    if (!this.requiresGrad)
      throw new Error('backward: this tensor does not require grad (no input had requiresGrad = true)');
    if (!seed && this.size !== 1) {
      throw new Error(
        `backward: tensor of shape ${formatShape(this.shape)} is not a scalar; pass a seed gradient of the same shape`,
      );
    }
    if (seed && !sameShape(seed.shape, this.shape)) {
      throw new Error(
        `backward: seed shape ${formatShape(seed.shape)} does not match tensor shape ${formatShape(this.shape)}`,
      );
    }
    const s = seed ?? creation.onesLike(this);
    try {
      runBackward(this, s, options);
    } finally {
      if (!seed) s.dispose();
    }
  }

  /** A tensor sharing this storage, cut from the graph. */
  detach(): Tensor {
    return this.view(this.shape, this.strides, this.offset);
  }

  // ---- memory ----

  dispose(): void {
    if (!this.ref) return;
    this.ref.release();
    this.ref = null;
    countTensor(-1);
    this.node?.release();
    this.node = null;
    this.gradTensor?.dispose();
    this.gradTensor = null;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  // ---- reading values ----

  /** This tensor if it is its whole storage in row-major order, else a contiguous copy for the caller to dispose. */
  private dense(): Tensor {
    return this.isContiguous && this.offset === 0 && this.size === this.storage.size
      ? this
      : this.contiguous();
  }

  /** The elements in row-major order; those of a float16 or bfloat16 tensor as float32 values. */
  async data(): Promise<TypedArray> {
    return this.values(await this.rawData());
  }

  /** Synchronous read, on backends that can do it honestly (CPU); elsewhere use `await data()`. */
  dataSync(): TypedArray {
    return this.values(this.readStoredSync('dataSync', 'data'));
  }

  /**
   * The elements in row-major order as stored: a float16 or bfloat16 tensor's as their bits (Uint16Array,
   * every bit kept, NaN payloads too), the others as `data()` gives them. For writers of half formats.
   */
  async rawData(): Promise<TypedArray> {
    const t = this.dense();
    try {
      const all = await this.backend.read(t.storage);
      return all.length === this.size ? all : all.subarray(t.offset, t.offset + this.size);
    } finally {
      if (t !== this) t.dispose();
    }
  }

  /** `rawData()`, synchronously, on backends that can read synchronously (CPU). */
  rawDataSync(): TypedArray {
    return this.readStoredSync('rawDataSync', 'rawData');
  }

  /** The stored elements, read synchronously; `method` and `asyncMethod` name the caller in the error. */
  private readStoredSync(method: string, asyncMethod: string): TypedArray {
    const readSync = this.backend.readSync;
    if (!readSync)
      throw new Error(
        `${method}: the ${this.device} backend cannot read synchronously; use await tensor.${asyncMethod}()`,
      );
    const t = this.dense();
    try {
      return readSync.call(this.backend, t.storage).subarray(t.offset, t.offset + this.size);
    } finally {
      if (t !== this) t.dispose();
    }
  }

  /** Stored elements as values: half bits decoded, other arrays as they are. */
  private values(stored: TypedArray): TypedArray {
    return isHalf(this.dtype) ? decodeHalf(this.dtype, stored as Uint16Array) : stored;
  }

  async toArray(): Promise<NestedArray> {
    return nest(await this.data(), this.shape, this.dtype);
  }

  toArraySync(): NestedArray {
    return nest(this.dataSync(), this.shape, this.dtype);
  }

  async item(): Promise<number> {
    this.checkItem();
    return (await this.data())[0];
  }

  itemSync(): number {
    this.checkItem();
    return this.dataSync()[0];
  }

  private checkItem(): void {
    if (this.size !== 1)
      throw new Error(`item: tensor of shape ${formatShape(this.shape)} has ${this.size} elements, not 1`);
  }

  toString(): string {
    return `Tensor(${formatShape(this.shape)}, ${this.dtype}, ${this.device}${this.requiresGrad ? ', requiresGrad' : ''})`;
  }

  /** Copies to another device (synchronously where the source can be read synchronously). */
  to(device: string): Tensor {
    return creation.toDevice(this, device);
  }

  async toAsync(device: string): Promise<Tensor> {
    return creation.toDeviceAsync(this, device);
  }

  cast(dtype: DType): Tensor {
    return elementwise.cast(this, dtype);
  }

  clone(): Tensor {
    return movement.clone(this);
  }

  contiguous(): Tensor {
    return movement.contiguous(this);
  }

  /** Writes src into this tensor (a view of a buffer, e.g. a KV cache) in place; returns this. */
  copy_(src: Tensor): Tensor {
    return movement.copyInto(this, src);
  }

  // ---- elementwise ----
  add(b: TensorOrScalar): Tensor {
    return elementwise.add(this, b);
  }
  sub(b: TensorOrScalar): Tensor {
    return elementwise.sub(this, b);
  }
  mul(b: TensorOrScalar): Tensor {
    return elementwise.mul(this, b);
  }
  div(b: TensorOrScalar): Tensor {
    return elementwise.div(this, b);
  }
  pow(b: TensorOrScalar): Tensor {
    return elementwise.pow(this, b);
  }
  maximum(b: TensorOrScalar): Tensor {
    return elementwise.maximum(this, b);
  }
  minimum(b: TensorOrScalar): Tensor {
    return elementwise.minimum(this, b);
  }
  neg(): Tensor {
    return elementwise.neg(this);
  }
  abs(): Tensor {
    return elementwise.abs(this);
  }
  exp(): Tensor {
    return elementwise.exp(this);
  }
  log(): Tensor {
    return elementwise.log(this);
  }
  sqrt(): Tensor {
    return elementwise.sqrt(this);
  }
  rsqrt(): Tensor {
    return elementwise.rsqrt(this);
  }
  square(): Tensor {
    return elementwise.square(this);
  }
  tanh(): Tensor {
    return elementwise.tanh(this);
  }
  sigmoid(): Tensor {
    return elementwise.sigmoid(this);
  }
  relu(): Tensor {
    return elementwise.relu(this);
  }
  gelu(): Tensor {
    return elementwise.gelu(this);
  }
  silu(): Tensor {
    return elementwise.silu(this);
  }
  /** log(1 + eˣ), a smooth ReLU; its gradient is sigmoid(x). */
  softplus(): Tensor {
    return elementwise.softplus(this);
  }
  sin(): Tensor {
    return elementwise.sin(this);
  }
  cos(): Tensor {
    return elementwise.cos(this);
  }
  clamp(min?: number, max?: number): Tensor {
    return elementwise.clamp(this, min, max);
  }
  eq(b: TensorOrScalar): Tensor {
    return elementwise.eq(this, b);
  }
  ne(b: TensorOrScalar): Tensor {
    return elementwise.ne(this, b);
  }
  lt(b: TensorOrScalar): Tensor {
    return elementwise.lt(this, b);
  }
  le(b: TensorOrScalar): Tensor {
    return elementwise.le(this, b);
  }
  gt(b: TensorOrScalar): Tensor {
    return elementwise.gt(this, b);
  }
  ge(b: TensorOrScalar): Tensor {
    return elementwise.ge(this, b);
  }
  logicalNot(): Tensor {
    return elementwise.logicalNot(this);
  }

  // ---- reductions ----
  sum(axes?: Axes, keepdim = false): Tensor {
    return reduce.sum(this, axes, keepdim);
  }
  mean(axes?: Axes, keepdim = false): Tensor {
    return reduce.mean(this, axes, keepdim);
  }
  max(axes?: Axes, keepdim = false): Tensor {
    return reduce.max(this, axes, keepdim);
  }
  min(axes?: Axes, keepdim = false): Tensor {
    return reduce.min(this, axes, keepdim);
  }
  argmax(axis?: number, keepdim = false): Tensor {
    return reduce.argmax(this, axis, keepdim);
  }
  argmin(axis?: number, keepdim = false): Tensor {
    return reduce.argmin(this, axis, keepdim);
  }
  var(axes?: Axes, options?: reduce.VarOptions): Tensor {
    return reduce.variance(this, axes, options);
  }
  logsumexp(axis = -1, keepdim = false): Tensor {
    return nn.logsumexp(this, axis, keepdim);
  }

  // ---- linear algebra ----
  matmul(b: Tensor): Tensor {
    return linalg.matmul(this, b);
  }

  // ---- movement ----
  reshape(shape: Shape): Tensor {
    return movement.reshape(this, shape);
  }
  flatten(startDim = 0, endDim = -1): Tensor {
    return movement.flatten(this, startDim, endDim);
  }
  permute(dims: readonly number[]): Tensor {
    return movement.permute(this, dims);
  }
  transpose(dim0 = -2, dim1 = -1): Tensor {
    return movement.transpose(this, dim0, dim1);
  }
  get T(): Tensor {
    return movement.transpose(this, -2, -1);
  }
  slice(dim: number, start: number, end?: number, step = 1): Tensor {
    return movement.slice(this, dim, start, end, step);
  }
  narrow(dim: number, start: number, length: number): Tensor {
    return movement.narrow(this, dim, start, length);
  }
  select(dim: number, index: number): Tensor {
    return movement.select(this, dim, index);
  }
  expand(shape: Shape): Tensor {
    return movement.expand(this, shape);
  }
  squeeze(dim?: number): Tensor {
    return movement.squeeze(this, dim);
  }
  unsqueeze(dim: number): Tensor {
    return movement.unsqueeze(this, dim);
  }
  split(sizeOrSizes: number | readonly number[], dim = 0): Tensor[] {
    return movement.split(this, sizeOrSizes, dim);
  }

  // ---- indexing ----
  gather(dim: number, index: Tensor): Tensor {
    return indexing.gather(this, dim, index);
  }
  indexSelect(dim: number, index: Tensor): Tensor {
    return indexing.indexSelect(this, dim, index);
  }

  // ---- neural-network functions ----
  softmax(axis = -1): Tensor {
    return nn.softmax(this, axis);
  }
  logSoftmax(axis = -1): Tensor {
    return nn.logSoftmax(this, axis);
  }
}

function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function nest(data: TypedArray, shape: Shape, dtype: DType): NestedArray {
  const convert = (x: number): number | boolean => (dtype === 'bool' ? x !== 0 : x);
  if (shape.length === 0) return convert(data[0]);
  const build = (dim: number, start: number): NestedArray[] => {
    const n = shape[dim];
    const stride = sizeOf(shape.slice(dim + 1));
    const out: NestedArray[] = [];
    for (let i = 0; i < n; i++) {
      out.push(dim === shape.length - 1 ? convert(data[start + i]) : build(dim + 1, start + i * stride));
    }
    return out;
  };
  return build(0, 0);
}
