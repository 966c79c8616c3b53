/**
 * The subset of Jinja that chat templates use, rendered as transformers renders them (jinja2's sandboxed
 * environment with trim_blocks and lstrip_blocks, the loop controls, a `tojson` filter that writes Python's
 * json.dumps, `raise_exception` and `namespace`):
 *
 *   {{ expr }}, {% if / elif / else / endif %}, {% for x in xs [if cond] %} … {% else %} … {% endfor %} with
 *   `loop` (index, index0, revindex, revindex0, first, last, length, previtem, nextitem), {% break %},
 *   {% continue %}, {% set x = … %} and {% set ns.attr = … %}, {# comments #}, and the whitespace controls
 *   {%- -%} {{- -}} {%+.
 *   Expressions: literals (strings, numbers, true/false/none, lists, dicts, tuples), names, `.attr`,
 *   `[index]` and `[a:b:c]` slices, calls, `a if c else b`, or/and/not, comparisons, in / not in, is [not]
 *   tests, + - * / // % ~, filters; Python's string and dict methods (startswith, split, strip, items, get, …).
 *
 * Anything else ({% macro %}, {% call %}, {% filter %}, {% include %}, an unknown filter, test or method) is an
 * error that names it and its line, so a template we cannot render is never rendered wrongly. Values are
 * JSON-like: JS strings, numbers, booleans, null (None), arrays and plain objects; a missing attribute or key
 * is Undefined, which prints as '' and is falsy, as in jinja2.
 */
import { TemplateError, lex } from './jinja-lex.js';
import { type Expr, type Node, parse } from './jinja-parse.js';
import {
  FILTERS,
  type Fn,
  Namespace,
  TESTS,
  Tuple,
  Undefined,
  binary,
  getAttr,
  getItem,
  isDict,
  isFn,
  num,
  pyStr,
  slice,
  toList,
  truthy,
} from './jinja-python.js';

export { TemplateError } from './jinja-lex.js';

class Scope {
  private readonly vars = new Map<string, unknown>();
  constructor(private readonly parent: Scope | null) {}
  get(name: string): unknown {
    if (this.vars.has(name)) return this.vars.get(name);
    return this.parent ? this.parent.get(name) : new Undefined(`'${name}' is undefined`);
  }
  set(name: string, v: unknown): void {
    this.vars.set(name, v);
  }
}

class LoopSignal {
  constructor(readonly kind: 'break' | 'continue') {}
}

function evaluate(e: Expr, scope: Scope): unknown {
  switch (e.e) {
    case 'lit':
      return e.v;
    case 'name':
      return scope.get(e.v);
    case 'list': {
      const items = e.items.map((x) => evaluate(x, scope));
      return e.tuple ? Tuple.from(items) : items;
    }
    case 'dict': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of e.items) out[pyStr(evaluate(k, scope))] = evaluate(v, scope);
      return out;
    }
    case 'attr':
      return getAttr(evaluate(e.obj, scope), e.name);
    case 'item':
      return getItem(evaluate(e.obj, scope), evaluate(e.index, scope));
    case 'slice': {
      const [a, b, c] = e.parts.map((p) => (p === null ? null : evaluate(p, scope)));
      return slice(evaluate(e.obj, scope), a, b, c);
    }
    case 'call': {
      const fn = evaluate(e.fn, scope);
      if (!isFn(fn)) {
        const what = e.fn.e === 'attr' ? `.${e.fn.name}()` : e.fn.e === 'name' ? `${e.fn.v}()` : 'this call';
        throw new TemplateError(`chat template: ${what} is not a function this renderer supports`);
      }
      const kwargs = Object.fromEntries(e.kwargs.map(([k, v]) => [k, evaluate(v, scope)]));
      return fn(
        e.args.map((a) => evaluate(a, scope)),
        kwargs,
      );
    }
    case 'filter': {
      const f = FILTERS[e.name];
      if (!f) throw new TemplateError(`chat template: the filter '${e.name}' is not supported`);
      const kwargs = Object.fromEntries(e.kwargs.map(([k, v]) => [k, evaluate(v, scope)]));
      return f(
        evaluate(e.v, scope),
        e.args.map((a) => evaluate(a, scope)),
        kwargs,
      );
    }
    case 'test': {
      const t = TESTS[e.name];
      if (!t) throw new TemplateError(`chat template: the test '${e.name}' is not supported`);
      const r = t(
        evaluate(e.v, scope),
        e.args.map((a) => evaluate(a, scope)),
      );
      return e.negate ? !r : r;
    }
    case 'unary': {
      const v = evaluate(e.v, scope);
      if (e.op === 'not') return !truthy(v);
      return e.op === '-' ? -num(v, '-') : num(v, '+');
    }
    case 'bin': {
      const a = evaluate(e.a, scope);
      if (e.op === 'and') return truthy(a) ? evaluate(e.b, scope) : a;
      if (e.op === 'or') return truthy(a) ? a : evaluate(e.b, scope);
      return binary(e.op, a, evaluate(e.b, scope));
    }
    case 'cond':
      return truthy(evaluate(e.test, scope))
        ? evaluate(e.then, scope)
        : e.else
          ? evaluate(e.else, scope)
          : new Undefined('the conditional expression had no else');
  }
}

function assign(target: Expr, value: unknown, scope: Scope, line: number): void {
  if (target.e === 'name') {
    scope.set(target.v, value);
    return;
  }
  if (target.e === 'attr') {
    const ns = evaluate(target.obj, scope);
    if (!(ns instanceof Namespace))
      throw new TemplateError(`chat template, line ${line}: only a namespace() takes {% set x.attr = … %}`);
    ns.attrs[target.name] = value;
    return;
  }
  if (target.e === 'list') {
    const values = toList(value, 'unpacking');
    if (values.length !== target.items.length)
      throw new TemplateError(
        `chat template, line ${line}: cannot unpack ${values.length} values into ${target.items.length}`,
      );
    for (const [i, t] of target.items.entries()) assign(t, values[i], scope, line);
    return;
  }
  throw new TemplateError(`chat template, line ${line}: cannot assign to this target`);
}

function run(nodes: Node[], scope: Scope, out: string[]): void {
  for (const node of nodes) {
    switch (node.n) {
      case 'text':
        out.push(node.v);
        break;
      case 'print':
        out.push(pyStr(evaluate(node.v, scope)));
        break;
      case 'if':
        for (const [test, body] of node.branches) {
          if (test === null || truthy(evaluate(test, scope))) {
            run(body, scope, out);
            break;
          }
        }
        break;
      case 'set':
        assign(node.target, evaluate(node.value, scope), scope, node.line);
        break;
      case 'break':
      case 'continue':
        throw new LoopSignal(node.n);
      case 'for': {
        const all = toList(evaluate(node.iter, scope), 'for');
        const bind = (s: Scope, item: unknown) => {
          if (node.target.length === 1) s.set(node.target[0], item);
          else {
            const values = toList(item, 'for');
            if (values.length !== node.target.length)
              throw new TemplateError(
                `chat template, line ${node.line}: cannot unpack ${values.length} values into ${node.target.length}`,
              );
            for (const [i, name] of node.target.entries()) s.set(name, values[i]);
          }
        };
        const items = node.filter
          ? all.filter((item) => {
              const s = new Scope(scope);
              bind(s, item);
              return truthy(evaluate(node.filter!, s));
            })
          : all;
        if (items.length === 0) run(node.otherwise, scope, out);
        for (const [i, item] of items.entries()) {
          const s = new Scope(scope);
          bind(s, item);
          s.set('loop', {
            index: i + 1,
            index0: i,
            revindex: items.length - i,
            revindex0: items.length - i - 1,
            first: i === 0,
            last: i === items.length - 1,
            length: items.length,
            previtem: i > 0 ? items[i - 1] : new Undefined('there is no previous item'),
            nextitem: i + 1 < items.length ? items[i + 1] : new Undefined('there is no next item'),
          });
          try {
            run(node.body, s, out);
          } catch (err) {
            if (!(err instanceof LoopSignal)) throw err;
            if (err.kind === 'break') break;
          }
        }
        break;
      }
    }
  }
}

const GLOBALS: Record<string, unknown> = {
  namespace: ((args, kwargs) => {
    const init = isDict(args[0]) ? args[0] : {};
    return new Namespace({ ...init, ...kwargs });
  }) as Fn,
  raise_exception: (([message]) => {
    throw new TemplateError(`chat template: ${pyStr(message)}`);
  }) as Fn,
  range: (([a, b, c]) => {
    const [start, stop, step] =
      b === undefined
        ? [0, num(a, 'range'), 1]
        : [num(a, 'range'), num(b, 'range'), c === undefined ? 1 : num(c, 'range')];
    const out: number[] = [];
    if (step > 0) for (let i = start; i < stop; i += step) out.push(i);
    else if (step < 0) for (let i = start; i > stop; i += step) out.push(i);
    return out;
  }) as Fn,
  dict: ((args, kwargs) => ({ ...(isDict(args[0]) ? args[0] : {}), ...kwargs })) as Fn,
};

/** A compiled chat template. */
export class Template {
  private readonly nodes: Node[];

  /** Parses `source`; a construct outside the subset is a TemplateError naming it and its line. */
  constructor(source: string) {
    this.nodes = parse(lex(source));
  }

  /** Renders with `context` (JSON-like values); errors are TemplateErrors. */
  render(context: Record<string, unknown>): string {
    const globals = new Scope(null);
    for (const [k, v] of Object.entries(GLOBALS)) globals.set(k, v);
    const scope = new Scope(globals);
    for (const [k, v] of Object.entries(context)) if (v !== undefined) scope.set(k, v);
    const out: string[] = [];
    try {
      run(this.nodes, scope, out);
    } catch (err) {
      if (err instanceof LoopSignal)
        throw new TemplateError(`chat template: {% ${err.kind} %} outside a loop`);
      throw err;
    }
    return out.join('');
  }
}
