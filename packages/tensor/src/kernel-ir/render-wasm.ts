/**
 * Renders a scalar function as WebAssembly SIMD: four float32 lanes at a time, through the module builder.
 * Bools are lane masks (all ones or zeros); a bool result becomes 1 or 0. exp is the kernels' polynomial
 * (`emitExp`, general form: ±Infinity and NaN as Math.exp gives them, about 1 ulp). sign, log, tanh, sin,
 * cos and pow have no form here: `wasmRenders` says whether a function can be rendered.
 */
import { type Code, V128 } from '../backend/wasm/builder.js';
import { type ExpTemps, emitExp, expTemps } from '../backend/wasm/emit/common.js';
import { type Expr, type Prim, type ScalarFunction, isBool, primsOf } from './expr.js';

const LANEWISE: Partial<Record<Prim, (c: Code) => Code>> = {
  // −x as x·(−1): the same value (a NaN's sign aside), and faster in V8 than f32x4.neg (a sign-mask xor).
  neg: (c) => c.f32x4SplatConst(-1).f32x4Mul(),
  abs: (c) => c.f32x4Abs(),
  sqrt: (c) => c.f32x4Sqrt(),
  add: (c) => c.f32x4Add(),
  sub: (c) => c.f32x4Sub(),
  mul: (c) => c.f32x4Mul(),
  div: (c) => c.f32x4Div(),
  eq: (c) => c.f32x4Eq(),
  ne: (c) => c.f32x4Ne(),
  lt: (c) => c.f32x4Lt(),
  le: (c) => c.f32x4Le(),
  gt: (c) => c.f32x4Gt(),
  ge: (c) => c.f32x4Ge(),
  or: (c) => c.v128Or(),
};

const RENDERED = new Set<Prim>([...(Object.keys(LANEWISE) as Prim[]), 'exp', 'select', 'isnan', 'truthy']);

/** Whether every primitive of `f` has a wasm form. */
export function wasmRenders(f: ScalarFunction): boolean {
  return [...primsOf(f)].every((p) => RENDERED.has(p));
}

/** Scratch a rendering needs: the exp temporaries (when f has an exp) and one v128 local per let. */
export interface WasmRenderLocals {
  exp: ExpTemps | null;
  lets: number[];
  /** A v128 local for a primitive's argument read more than once. */
  scratch: number;
}

/**
 * Allocates the locals to render `f`; exp's constants are set here, so call it in the function's prologue
 * (not inside a loop).
 */
export function wasmRenderLocals(c: Code, f: ScalarFunction): WasmRenderLocals {
  const exp = primsOf(f).has('exp') ? expTemps(c) : null;
  return { exp, lets: f.lets.map(() => c.local(V128)), scratch: c.local(V128) };
}

/**
 * Pushes f(args) for the v128 locals `args` (one per argument): the lets are computed into their locals
 * first, then the result is left on the stack.
 */
export function emitScalarFunction(
  c: Code,
  f: ScalarFunction,
  args: readonly number[],
  locals: WasmRenderLocals,
): void {
  const emit = (e: Expr): void => {
    switch (e.kind) {
      case 'arg':
        c.localGet(args[e.index]);
        return;
      case 'let':
        c.localGet(locals.lets[e.slot]);
        return;
      case 'const':
        c.f32x4SplatConst(e.value);
        return;
      case 'call':
        emitCall(e.prim, e.args);
    }
  };
  const emitCall = (prim: Prim, operands: Expr[]): void => {
    const lanewise = LANEWISE[prim];
    if (lanewise) {
      operands.forEach(emit);
      lanewise(c);
      return;
    }
    switch (prim) {
      case 'exp':
        emit(operands[0]);
        c.localSet(locals.scratch);
        emitExp(c, locals.scratch, locals.exp!, true);
        return;
      case 'select':
        emit(operands[1]);
        emit(operands[2]);
        emit(operands[0]);
        c.v128Bitselect();
        return;
      case 'isnan':
        emit(operands[0]);
        c.localSet(locals.scratch).localGet(locals.scratch).localGet(locals.scratch).f32x4Ne();
        return;
      case 'truthy':
        // Neither 0 nor NaN: x ≠ 0 (true for NaN) and x = x (false for NaN).
        emit(operands[0]);
        c.localSet(locals.scratch).localGet(locals.scratch).f32x4SplatConst(0).f32x4Ne();
        c.localGet(locals.scratch).localGet(locals.scratch).f32x4Eq().v128And();
        return;
      default:
        throw new Error(`kernel IR: no wasm form for '${prim}' (see wasmRenders)`);
    }
  };
  f.lets.forEach((e, slot) => {
    emit(e);
    c.localSet(locals.lets[slot]);
  });
  emit(f.result);
  if (isBool(f.result, f.lets)) {
    c.localSet(locals.scratch);
    c.f32x4SplatConst(1).f32x4SplatConst(0).localGet(locals.scratch).v128Bitselect();
  }
}
