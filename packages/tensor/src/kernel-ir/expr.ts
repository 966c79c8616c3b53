/**
 * A small typed scalar IR: an elementwise op's arithmetic written once (./elementwise.ts) and rendered for
 * each backend (./render-js.ts for the CPU reference, ./render-wasm.ts, ./render-wgsl.ts, ./render-c.ts).
 *
 * A function is a list of let-bound values and a result, each an expression over the function's arguments,
 * constants, earlier lets and primitives. The primitives mean what they mean in JavaScript on numbers (the
 * CPU reference computes in float64 and stores into the output's typed array); each renderer gives them
 * that meaning in its own types — a float primitive in float32 on a GPU, an int32 one with wrap-around — or
 * says it cannot render them (the wasm kernels have no log or tanh), and the backend then keeps such an op
 * on its fallback path.
 */

/** Primitives giving a number. */
export const NUMBER_PRIMS = [
  'neg',
  'abs',
  'sign',
  'exp',
  'log',
  'sqrt',
  'tanh',
  'sin',
  'cos',
  'add',
  'sub',
  'mul',
  'div',
  'pow',
  'select',
] as const;
/** Primitives giving a bool: comparisons, `isnan`, `truthy` (JavaScript's: neither 0 nor NaN), `or`. */
export const BOOL_PRIMS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'isnan', 'truthy', 'or'] as const;
export type Prim = (typeof NUMBER_PRIMS)[number] | (typeof BOOL_PRIMS)[number];

export type Expr =
  | { kind: 'arg'; index: number }
  | { kind: 'const'; value: number }
  | { kind: 'let'; slot: number }
  | { kind: 'call'; prim: Prim; args: Expr[] };

export interface ScalarFunction {
  /** The op's name, as backends know it (`gelu`, `maximum`). */
  name: string;
  arity: number;
  /** Values computed once, in order; `{ kind: 'let', slot }` reads the slot-th. */
  lets: Expr[];
  result: Expr;
}

export type Operand = Expr | number;

const BOOL_SET = new Set<Prim>(BOOL_PRIMS);

/** Whether `e` is a bool (a comparison, isnan, truthy or or), else a number. */
export function isBool(e: Expr, lets: readonly Expr[]): boolean {
  if (e.kind === 'call') return BOOL_SET.has(e.prim);
  if (e.kind === 'let') return isBool(lets[e.slot], lets);
  return false;
}

const lift = (x: Operand): Expr => (typeof x === 'number' ? { kind: 'const', value: x } : x);
const call =
  (prim: Prim) =>
  (...args: Operand[]): Expr => ({ kind: 'call', prim, args: args.map(lift) });

export const neg = call('neg');
export const abs = call('abs');
export const sign = call('sign');
export const exp = call('exp');
export const log = call('log');
export const sqrt = call('sqrt');
export const tanh = call('tanh');
export const sin = call('sin');
export const cos = call('cos');
export const add = call('add');
export const sub = call('sub');
export const mul = call('mul');
export const div = call('div');
export const pow = call('pow');
export const eq = call('eq');
export const ne = call('ne');
export const lt = call('lt');
export const le = call('le');
export const gt = call('gt');
export const ge = call('ge');
export const isnan = call('isnan');
export const truthy = call('truthy');
export const or = call('or');
/** `cond ? a : b`, cond a bool. */
export const select = call('select');

/**
 * Defines a function of `arity` arguments: `body` gets `bind` (a let: the value is computed once) and the
 * arguments, and returns the result.
 */
export function scalarFunction(
  name: string,
  arity: number,
  body: (bind: (value: Expr) => Expr, ...args: Expr[]) => Operand,
): ScalarFunction {
  const lets: Expr[] = [];
  const bind = (value: Expr): Expr => {
    lets.push(value);
    return { kind: 'let', slot: lets.length - 1 };
  };
  const args = Array.from({ length: arity }, (_, index): Expr => ({ kind: 'arg', index }));
  const result = lift(body(bind, ...args));
  return { name, arity, lets, result };
}

/** Every primitive `f` uses. */
export function primsOf(f: ScalarFunction): Set<Prim> {
  const found = new Set<Prim>();
  const walk = (e: Expr) => {
    if (e.kind !== 'call') return;
    found.add(e.prim);
    e.args.forEach(walk);
  };
  f.lets.forEach(walk);
  walk(f.result);
  return found;
}

/**
 * Renders `e` as source text, as the text renderers (JavaScript, WGSL, C) share it: argument k is `a<k>`,
 * let k is `t<k>`; `constant` writes a number and `call` a primitive applied to its rendered arguments.
 */
export function renderText(
  e: Expr,
  constant: (value: number) => string,
  call: (prim: Prim, args: string[]) => string,
): string {
  switch (e.kind) {
    case 'arg':
      return `a${e.index}`;
    case 'let':
      return `t${e.slot}`;
    case 'const':
      return constant(e.value);
    case 'call':
      return call(
        e.prim,
        e.args.map((a) => renderText(a, constant, call)),
      );
  }
}

/**
 * `render` remembered per function and arguments: backends render at every kernel launch (before their
 * pipeline or module cache is consulted), so a function's text is built once, not per launch.
 */
export function memoized<A extends string[]>(
  render: (f: ScalarFunction, ...args: A) => string,
): (f: ScalarFunction, ...args: A) => string {
  const cache = new WeakMap<ScalarFunction, Map<string, string>>();
  return (f, ...args) => {
    let byArgs = cache.get(f);
    if (!byArgs) {
      byArgs = new Map();
      cache.set(f, byArgs);
    }
    const key = args.join('|');
    let text = byArgs.get(key);
    if (text === undefined) {
      text = render(f, ...args);
      byArgs.set(key, text);
    }
    return text;
  };
}
