/**
 * Elementwise kernels over f32 (pointers are byte addresses):
 *
 * - `bin_<op>_<kind>(ap, bp, op, rows, inner)` for op in add, sub, mul, div, rsub (b − a), rdiv (b / a):
 *   `a` and the output are dense [rows, inner]; `b` is dense too (kind `dense`), one row of `inner`
 *   repeated for every row (kind `row`: a bias along the last axis), or one value (kind `scalar`).
 * - `un_<op>(xp, op, n)` for the ops of UNARY_KERNEL_OPS.
 * - `adamw(pp, gp, mp, vp, n, β1, β2, 1 − β1, 1 − β2, 1 − lr·wd, lr / c1, c2, eps)`: one AdamW step in
 *   place (c1, c2: the bias corrections 1 − βᵏ).
 *
 * The binary and unary ops' arithmetic is the kernel IR's (kernel-ir/elementwise.ts), rendered by
 * kernel-ir/render-wasm.ts; the loops over rows and lanes are here.
 */
import { BINARY_FUNCTIONS, UNARY_FUNCTIONS } from '../../../kernel-ir/elementwise.js';
import { emitScalarFunction, wasmRenderLocals } from '../../../kernel-ir/render-wasm.js';
import { type Code, F32, I32, type ModuleBuilder, V128 } from '../builder.js';
import { rowLoop } from './common.js';

export const BINARY_KERNEL_OPS = ['add', 'sub', 'mul', 'div', 'rsub', 'rdiv'] as const;
export type BinaryKernelOp = (typeof BINARY_KERNEL_OPS)[number];
export const BINARY_KINDS = ['dense', 'row', 'scalar'] as const;
export type BinaryKind = (typeof BINARY_KINDS)[number];
export const binaryName = (op: BinaryKernelOp, kind: BinaryKind) => `bin_${op}_${kind}`;

/**
 * The exp family (within a few ulps of the TypeScript kernels: exp is a polynomial here), and the ops made
 * of one correctly rounded operation or a select, which give the TypeScript kernels' float32 bits exactly
 * (a float64 result of +, −, ×, ÷ or √ of float32 operands rounds to the float32 result).
 */
export const UNARY_KERNEL_OPS = [
  'exp',
  'sigmoid',
  'silu',
  'silu_grad',
  'gelu',
  'gelu_grad',
  'neg',
  'abs',
  'sqrt',
  'relu',
  'step',
  'square',
  'reciprocal',
  'logical_not',
] as const;
export type UnaryKernelOp = (typeof UNARY_KERNEL_OPS)[number];
export const unaryName = (op: UnaryKernelOp) => `un_${op}`;

function emitBinary(c: Code, op: BinaryKernelOp, kind: BinaryKind): void {
  const [ap, bp, opp, rows, inner] = [0, 1, 2, 3, 4];
  const [p, nb, r] = [c.local(I32), c.local(I32), c.local(I32)];
  const [va, vb] = [c.local(V128), c.local(V128)];
  const reversed = op === 'rsub' || op === 'rdiv';
  const f = BINARY_FUNCTIONS[(reversed ? op.slice(1) : op) as 'add' | 'sub' | 'mul' | 'div'];
  const locals = wasmRenderLocals(c, f);
  c.localGet(inner).i32Const(2).i32Shl().localSet(nb);
  if (kind === 'scalar') c.localGet(bp).v128Load32Splat().localSet(vb);
  // Operands in va (a) and vb (b); the result on the stack.
  const apply = () => emitScalarFunction(c, f, reversed ? [vb, va] : [va, vb], locals);
  const lane = (vector: boolean) => () => {
    c.localGet(opp).localGet(p).i32Add();
    c.localGet(ap).localGet(p).i32Add();
    if (vector) c.v128Load();
    else c.f32Load().f32x4Splat();
    c.localSet(va);
    if (kind !== 'scalar') {
      c.localGet(bp).localGet(p).i32Add();
      if (vector) c.v128Load();
      else c.f32Load().f32x4Splat();
      c.localSet(vb);
    }
    apply();
    if (vector) c.v128Store();
    else c.f32x4ExtractLane(0).f32Store();
  };
  c.i32Const(0).localSet(r);
  c.block().loop();
  c.localGet(r).localGet(rows).i32GeS().brIf(1);
  rowLoop(c, p, nb, lane(true), lane(false));
  c.localGet(ap).localGet(nb).i32Add().localSet(ap);
  c.localGet(opp).localGet(nb).i32Add().localSet(opp);
  if (kind === 'dense') c.localGet(bp).localGet(nb).i32Add().localSet(bp);
  c.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
  c.end().end();
}

function emitUnary(c: Code, op: UnaryKernelOp): void {
  const [xp, opp, n] = [0, 1, 2];
  const [p, nb] = [c.local(I32), c.local(I32)];
  const x = c.local(V128);
  const f = UNARY_FUNCTIONS[op];
  const locals = wasmRenderLocals(c, f);
  c.localGet(n).i32Const(2).i32Shl().localSet(nb);
  const lane = (vector: boolean) => () => {
    c.localGet(opp).localGet(p).i32Add();
    c.localGet(xp).localGet(p).i32Add();
    if (vector) c.v128Load();
    else c.f32Load().f32x4Splat();
    c.localSet(x);
    emitScalarFunction(c, f, [x], locals);
    if (vector) c.v128Store();
    else c.f32x4ExtractLane(0).f32Store();
  };
  rowLoop(c, p, nb, lane(true), lane(false));
}

function emitAdamw(c: Code): void {
  // Scalars derived from the hyper-parameters (1 − β, lr/c1, …) come in precomputed in float64 and
  // rounded once: forming 1 − β from a float32 β would lose five digits.
  const [pp, gp, mp, vp, n, b1, b2, a1, a2, decay, step, c2, eps] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
  ];
  const [p, nb] = [c.local(I32), c.local(I32)];
  const [g, m, v] = [c.local(V128), c.local(V128), c.local(V128)];
  const [vb1, vb2, va1, va2, vdecay, vstep, vc2, veps] = new Array(8).fill(0).map(() => c.local(V128));
  for (const [dst, src] of [
    [vb1, b1],
    [vb2, b2],
    [va1, a1],
    [va2, a2],
    [vdecay, decay],
    [vstep, step],
    [vc2, c2],
    [veps, eps],
  ])
    c.localGet(src).f32x4Splat().localSet(dst);
  c.localGet(n).i32Const(2).i32Shl().localSet(nb);
  const at = (base: number) => c.localGet(base).localGet(p).i32Add();
  const lane = (vector: boolean) => () => {
    const load = (base: number, dst: number) => {
      at(base);
      if (vector) c.v128Load();
      else c.f32Load().f32x4Splat();
      c.localSet(dst);
    };
    const store = (base: number, value: () => void) => {
      at(base);
      value();
      if (vector) c.v128Store();
      else c.f32x4ExtractLane(0).f32Store();
    };
    load(gp, g);
    load(mp, m);
    load(vp, v);
    // m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²
    c.localGet(vb1).localGet(m).f32x4Mul().localGet(va1).localGet(g).f32x4Mul().f32x4Add().localSet(m);
    c.localGet(vb2).localGet(v).f32x4Mul().localGet(va2).localGet(g).f32x4Mul().localGet(g).f32x4Mul();
    c.f32x4Add().localSet(v);
    store(mp, () => c.localGet(m));
    store(vp, () => c.localGet(v));
    // p = p·(1 − lr·wd) − (lr / c1)·m / (sqrt(v / c2) + eps)
    load(pp, g);
    store(pp, () => {
      c.localGet(g).localGet(vdecay).f32x4Mul();
      c.localGet(vstep).localGet(m).f32x4Mul();
      c.localGet(v).localGet(vc2).f32x4Div().f32x4Sqrt().localGet(veps).f32x4Add().f32x4Div();
      c.f32x4Sub();
    });
  };
  rowLoop(c, p, nb, lane(true), lane(false));
}

export function addElementwise(m: ModuleBuilder): void {
  for (const op of BINARY_KERNEL_OPS)
    for (const kind of BINARY_KINDS)
      m.func([I32, I32, I32, I32, I32], [], (c) => emitBinary(c, op, kind), binaryName(op, kind));
  for (const op of UNARY_KERNEL_OPS) m.func([I32, I32, I32], [], (c) => emitUnary(c, op), unaryName(op));
  m.func([I32, I32, I32, I32, I32, F32, F32, F32, F32, F32, F32, F32, F32], [], emitAdamw, 'adamw');
}
