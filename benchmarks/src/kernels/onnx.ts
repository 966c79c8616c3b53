/**
 * Just enough of the ONNX protobuf format to build small models in memory for onnxruntime-node (which
 * accepts the model's bytes): a protobuf writer and builders for the graphs the kernel benchmark runs
 * (MatMul, Softmax, LogSoftmax + GatherElements, causal attention). Field numbers are those of onnx.proto3
 * (ModelProto, GraphProto, NodeProto, AttributeProto, ValueInfoProto, TypeProto, TensorProto).
 */

/** A protobuf message under construction: fields appended in order. */
class Message {
  readonly bytes: number[] = [];

  private varint(v: number | bigint): void {
    let x = BigInt.asUintN(64, BigInt(v));
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) b |= 0x80;
      this.bytes.push(b);
    } while (x !== 0n);
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, v: number): this {
    this.tag(field, 0);
    this.varint(v);
    return this;
  }

  float(field: number, v: number): this {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.bytes.push(...b);
    return this;
  }

  raw(field: number, data: Uint8Array): this {
    this.tag(field, 2);
    this.varint(data.length);
    for (const b of data) this.bytes.push(b);
    return this;
  }

  string(field: number, s: string): this {
    return this.raw(field, new TextEncoder().encode(s));
  }

  message(field: number, m: Message): this {
    return this.raw(field, Uint8Array.from(m.bytes));
  }
}

export const FLOAT = 1;
export const INT64 = 7;

export interface ValueInfo {
  name: string;
  type: number;
  shape: number[];
}

export interface Node {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: { name: string; int?: number; ints?: number[] }[];
}

export interface Initializer {
  name: string;
  shape: number[];
  data: Float32Array;
}

function valueInfo(v: ValueInfo): Message {
  const shape = new Message();
  for (const d of v.shape) shape.message(1, new Message().int(1, d));
  const tensorType = new Message().int(1, v.type).message(2, shape);
  return new Message().string(1, v.name).message(2, new Message().message(1, tensorType));
}

function node(n: Node, i: number): Message {
  const m = new Message();
  for (const x of n.inputs) m.string(1, x);
  for (const x of n.outputs) m.string(2, x);
  m.string(3, `n${i}`).string(4, n.op);
  for (const a of n.attributes ?? []) {
    const attr = new Message().string(1, a.name);
    if (a.int !== undefined) attr.int(3, a.int).int(20, 2);
    else {
      for (const x of a.ints ?? []) attr.int(8, x);
      attr.int(20, 7);
    }
    m.message(5, attr);
  }
  return m;
}

function initializer(t: Initializer): Message {
  const m = new Message();
  for (const d of t.shape) m.int(1, d);
  m.int(2, FLOAT).string(8, t.name);
  return m.raw(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

/** The bytes of a model (IR version 8, opset 17) with one graph. */
export function model(
  nodes: Node[],
  inputs: ValueInfo[],
  outputs: ValueInfo[],
  initializers: Initializer[] = [],
): Uint8Array {
  const graph = new Message();
  for (const [i, n] of nodes.entries()) graph.message(1, node(n, i));
  graph.string(2, 'g');
  for (const t of initializers) graph.message(5, initializer(t));
  for (const v of inputs) graph.message(11, valueInfo(v));
  for (const v of outputs) graph.message(12, valueInfo(v));
  const m = new Message().int(1, 8).string(2, 'agent-r1-bench').message(7, graph);
  m.message(8, new Message().string(1, '').int(2, 17));
  return Uint8Array.from(m.bytes);
}

const f = (name: string, shape: number[]): ValueInfo => ({ name, type: FLOAT, shape });

export function matmulModel(a: number[], b: number[], out: number[]): Uint8Array {
  return model([{ op: 'MatMul', inputs: ['a', 'b'], outputs: ['y'] }], [f('a', a), f('b', b)], [f('y', out)]);
}

export function softmaxModel(shape: number[]): Uint8Array {
  return model(
    [{ op: 'Softmax', inputs: ['x'], outputs: ['y'], attributes: [{ name: 'axis', int: -1 }] }],
    [f('x', shape)],
    [f('y', shape)],
  );
}

/** log_softmax(logits)[n, targets[n]]: LogSoftmax then GatherElements with [N, 1] int64 indices. */
export function logprobsModel(rows: number, vocab: number): Uint8Array {
  return model(
    [
      { op: 'LogSoftmax', inputs: ['x'], outputs: ['l'], attributes: [{ name: 'axis', int: 1 }] },
      { op: 'GatherElements', inputs: ['l', 't'], outputs: ['y'], attributes: [{ name: 'axis', int: 1 }] },
    ],
    [f('x', [rows, vocab]), { name: 't', type: INT64, shape: [rows, 1] }],
    [f('y', [rows, 1])],
  );
}

/** softmax(q kᵀ · scale + causal bias) v, the bias an initializer (as in the tfjs anchor). */
export function causalAttentionModel(B: number, H: number, S: number, D: number): Uint8Array {
  const bias = new Float32Array(S * S);
  for (let i = 0; i < S; i++) for (let j = i + 1; j < S; j++) bias[i * S + j] = -1e9;
  const shape = [B, H, S, D];
  return model(
    [
      { op: 'Transpose', inputs: ['k'], outputs: ['kt'], attributes: [{ name: 'perm', ints: [0, 1, 3, 2] }] },
      { op: 'MatMul', inputs: ['q', 'kt'], outputs: ['s'] },
      { op: 'Mul', inputs: ['s', 'scale'], outputs: ['s2'] },
      { op: 'Add', inputs: ['s2', 'bias'], outputs: ['s3'] },
      { op: 'Softmax', inputs: ['s3'], outputs: ['p'], attributes: [{ name: 'axis', int: -1 }] },
      { op: 'MatMul', inputs: ['p', 'v'], outputs: ['y'] },
    ],
    [f('q', shape), f('k', shape), f('v', shape)],
    [f('y', shape)],
    [
      { name: 'scale', shape: [], data: Float32Array.of(1 / Math.sqrt(D)) },
      { name: 'bias', shape: [S, S], data: bias },
    ],
  );
}
