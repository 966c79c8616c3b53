/**
 * Python's semantics for the values chat templates compute with (see jinja.ts): truthiness, str() and repr(),
 * json.dumps as transformers' tojson, the operators, str and dict methods, jinja2's Undefined, its filters and
 * tests.
 */
import { TemplateError } from './jinja-lex.js';

/** jinja2's Undefined: falsy, prints as '', iterates as nothing; reading from it is an error. */
export class Undefined {
  constructor(readonly hint: string) {}
}

/** A Python tuple (dict items, `(a, b)` literals): a list that prints with parentheses. */
export class Tuple extends Array<unknown> {}

export class Namespace {
  constructor(readonly attrs: Record<string, unknown>) {}
}

export type Fn = (args: unknown[], kwargs: Record<string, unknown>) => unknown;
export const isFn = (v: unknown): v is Fn => typeof v === 'function';
export const isDict = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  !(v instanceof Undefined) &&
  !(v instanceof Namespace);

/** Python's whitespace (str.isspace), for strip and split. */
const PY_SPACE =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING_SPACE = new RegExp(`^[${PY_SPACE}]+`);
const TRAILING_SPACE = new RegExp(`[${PY_SPACE}]+$`);
const SPACE_RUN = new RegExp(`[${PY_SPACE}]+`);

function typeName(v: unknown): string {
  if (v instanceof Undefined) return 'Undefined';
  if (v === null) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Namespace) return 'Namespace';
  if (isDict(v)) return 'dict';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'string' ? 'str' : typeof v;
}

export function truthy(v: unknown): boolean {
  if (v instanceof Undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isDict(v)) return Object.keys(v).length > 0;
  return true;
}

/** Python's repr of a float (1.5, 1e-07, 1e+16, 3.0). */
function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const [mantissa, e] = x.toExponential().split('e');
  const exp = Number(e);
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = x < 0 ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}.${frac || '0'}`;
}

const pyNumber = (n: number) => (Number.isInteger(n) && Math.abs(n) < 1e16 ? String(n) : pyFloat(n));

export function pyRepr(v: unknown): string {
  if (typeof v === 'string') {
    const quote = v.includes("'") && !v.includes('"') ? '"' : "'";
    const body = v
      .replace(/\\/g, '\\\\')
      .replace(/\n/g, '\\n')
      .replace(/\r/g, '\\r')
      .replace(/\t/g, '\\t')
      .replaceAll(quote, `\\${quote}`);
    return `${quote}${body}${quote}`;
  }
  return pyStr(v);
}

/** Python's str() of a value, as {{ }} prints it. */
export function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Undefined) return '';
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return pyNumber(v);
  if (v instanceof Tuple) return v.length === 1 ? `(${pyRepr(v[0])},)` : `(${v.map(pyRepr).join(', ')})`;
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (v instanceof Namespace) return '<Namespace>';
  if (isDict(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  throw new TemplateError(`chat template: cannot print a ${typeName(v)}`);
}

/** Python's json.dumps(x, ensure_ascii=False, indent, separators, sort_keys): transformers' tojson. */
function toJson(
  v: unknown,
  indent: number | null,
  sortKeys: boolean,
  separators: [string, string] | null,
  depth = 0,
): string {
  const [itemSep, keySep] = separators ?? (indent === null ? [', ', ': '] : [',', ': ']);
  const nl = indent === null ? '' : `\n${' '.repeat(indent * (depth + 1))}`;
  const close = indent === null ? '' : `\n${' '.repeat(indent * depth)}`;
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number')
    return Number.isNaN(v) ? 'NaN' : Number.isFinite(v) ? pyNumber(v) : v > 0 ? 'Infinity' : '-Infinity';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[${nl}${v.map((x) => toJson(x, indent, sortKeys, separators, depth + 1)).join(itemSep + nl)}${close}]`;
  }
  if (isDict(v)) {
    const entries = Object.entries(v);
    if (entries.length === 0) return '{}';
    if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const body = entries.map(
      ([k, x]) => `${JSON.stringify(k)}${keySep}${toJson(x, indent, sortKeys, separators, depth + 1)}`,
    );
    return `{${nl}${body.join(itemSep + nl)}${close}}`;
  }
  throw new TemplateError(`chat template: tojson cannot write a ${typeName(v)}`);
}

function equal(a: unknown, b: unknown): boolean {
  if (typeof a === 'boolean' && typeof b === 'number') return Number(a) === b;
  if (typeof b === 'boolean' && typeof a === 'number') return a === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isDict(a) && isDict(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equal(a[k], b[k]));
  }
  if (a instanceof Undefined && b instanceof Undefined) return true;
  return a === b;
}

function pyStrip(s: string, chars: unknown, side: 'both' | 'left' | 'right'): string {
  if (chars === undefined || chars === null) {
    let out = s;
    if (side !== 'right') out = out.replace(LEADING_SPACE, '');
    if (side !== 'left') out = out.replace(TRAILING_SPACE, '');
    return out;
  }
  if (typeof chars !== 'string') throw new TemplateError('chat template: strip takes a string of characters');
  const set = new Set(chars);
  const cs = [...s];
  let a = 0;
  let b = cs.length;
  if (side !== 'right') while (a < b && set.has(cs[a])) a++;
  if (side !== 'left') while (b > a && set.has(cs[b - 1])) b--;
  return cs.slice(a, b).join('');
}

function pySplit(s: string, sep: unknown, maxsplit: unknown): string[] {
  const max = typeof maxsplit === 'number' && maxsplit >= 0 ? maxsplit : Number.POSITIVE_INFINITY;
  if (sep === undefined || sep === null) {
    const out: string[] = [];
    let rest = s.replace(LEADING_SPACE, '');
    while (rest.length > 0) {
      if (out.length >= max) {
        out.push(rest.replace(TRAILING_SPACE, ''));
        break;
      }
      const m = SPACE_RUN.exec(rest);
      if (!m) {
        out.push(rest);
        break;
      }
      out.push(rest.slice(0, m.index));
      rest = rest.slice(m.index + m[0].length);
    }
    return out;
  }
  if (typeof sep !== 'string' || sep === '')
    throw new TemplateError('chat template: split needs a non-empty separator');
  const parts = s.split(sep);
  return parts.length - 1 <= max ? parts : [...parts.slice(0, max), parts.slice(max).join(sep)];
}

const title = (s: string) => s.replace(/\p{L}+/gu, (w) => w[0].toUpperCase() + w.slice(1).toLowerCase());

/** Python's methods on strings and dicts that templates call. */
function method(obj: unknown, name: string): Fn | undefined {
  if (typeof obj === 'string') {
    const s = obj;
    const affix = (test: (p: string) => boolean) => (args: unknown[]) => {
      const p = args[0];
      if (Array.isArray(p)) return p.some((x) => typeof x === 'string' && test(x));
      if (typeof p !== 'string') throw new TemplateError(`chat template: ${name} takes a string`);
      return test(p);
    };
    const table: Record<string, Fn> = {
      startswith: affix((p) => s.startsWith(p)),
      endswith: affix((p) => s.endsWith(p)),
      strip: ([c]) => pyStrip(s, c, 'both'),
      lstrip: ([c]) => pyStrip(s, c, 'left'),
      rstrip: ([c]) => pyStrip(s, c, 'right'),
      split: ([sep, max], kw) => pySplit(s, sep ?? kw.sep, max ?? kw.maxsplit),
      lower: () => s.toLowerCase(),
      upper: () => s.toUpperCase(),
      title: () => title(s),
      capitalize: () => (s ? s[0].toUpperCase() + s.slice(1).toLowerCase() : s),
      replace: ([a, b, n]) => {
        if (typeof a !== 'string' || typeof b !== 'string')
          throw new TemplateError('chat template: replace takes two strings');
        const parts = s.split(a);
        const count = typeof n === 'number' && n >= 0 ? n : parts.length;
        return (
          parts.slice(0, count + 1).join(b) +
          (parts.length > count + 1 ? a + parts.slice(count + 1).join(a) : '')
        );
      },
      find: ([sub]) => s.indexOf(String(sub)),
      count: ([sub]) => (String(sub) === '' ? s.length + 1 : s.split(String(sub)).length - 1),
      join: ([items]) => toList(items, 'join').map(pyStr).join(s),
      isdigit: () => /^\p{Nd}+$/u.test(s),
    };
    return table[name];
  }
  if (isDict(obj)) {
    const d = obj;
    const table: Record<string, Fn> = {
      items: () => Object.entries(d).map((kv) => Tuple.from(kv)),
      keys: () => Object.keys(d),
      values: () => Object.values(d),
      get: ([k, fallback]) => (typeof k === 'string' && Object.hasOwn(d, k) ? d[k] : (fallback ?? null)),
    };
    return table[name];
  }
  return undefined;
}

export function toList(v: unknown, what: string): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return [...v];
  if (isDict(v)) return Object.keys(v);
  if (v instanceof Undefined) return [];
  throw new TemplateError(`chat template: ${what} needs a list, got a ${typeName(v)}`);
}

export function getAttr(obj: unknown, name: string): unknown {
  if (obj instanceof Undefined)
    throw new TemplateError(`chat template: ${obj.hint}, so it has no attribute '${name}'`);
  if (obj === null) throw new TemplateError(`chat template: None has no attribute '${name}'`);
  if (obj instanceof Namespace)
    return Object.hasOwn(obj.attrs, name) ? obj.attrs[name] : new Undefined(`the namespace has no '${name}'`);
  const m = method(obj, name);
  if (m) return m;
  if (isDict(obj) && Object.hasOwn(obj, name)) return obj[name];
  if (obj !== null && typeof obj === 'object' && !Array.isArray(obj) && Object.hasOwn(obj, name))
    return (obj as Record<string, unknown>)[name];
  return new Undefined(`'${typeName(obj)} object' has no attribute '${name}'`);
}

export function getItem(obj: unknown, key: unknown): unknown {
  if (obj instanceof Undefined)
    throw new TemplateError(`chat template: ${obj.hint}, so it has no item ${pyRepr(key)}`);
  if ((Array.isArray(obj) || typeof obj === 'string') && typeof key === 'number') {
    const i = key < 0 ? obj.length + key : key;
    return i >= 0 && i < obj.length ? obj[i] : new Undefined(`${typeName(obj)} index ${key} out of range`);
  }
  if (isDict(obj) && typeof key === 'string')
    return Object.hasOwn(obj, key) ? obj[key] : new Undefined(`'dict object' has no item ${pyRepr(key)}`);
  if (typeof key === 'string') return getAttr(obj, key);
  return new Undefined(`'${typeName(obj)} object' has no item ${pyRepr(key)}`);
}

export function slice(obj: unknown, start: unknown, stop: unknown, step: unknown): unknown {
  const seq = typeof obj === 'string' ? [...obj] : obj;
  if (!Array.isArray(seq)) throw new TemplateError(`chat template: cannot slice a ${typeName(obj)}`);
  const n = seq.length;
  const st = step === null || step === undefined ? 1 : Number(step);
  if (st === 0) throw new TemplateError('chat template: slice step cannot be zero');
  const norm = (v: unknown, dflt: number, lo: number, hi: number) => {
    if (v === null || v === undefined) return dflt;
    const x = Number(v) < 0 ? Number(v) + n : Number(v);
    return Math.min(Math.max(x, lo), hi);
  };
  const out: unknown[] = [];
  if (st > 0) for (let i = norm(start, 0, 0, n); i < norm(stop, n, 0, n); i += st) out.push(seq[i]);
  else for (let i = norm(start, n - 1, -1, n - 1); i > norm(stop, -1, -1, n - 1); i += st) out.push(seq[i]);
  return typeof obj === 'string' ? out.join('') : out;
}

export function num(v: unknown, op: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return Number(v);
  throw new TemplateError(`chat template: '${op}' needs numbers, got a ${typeName(v)}`);
}

export function binary(op: string, a: unknown, b: unknown): unknown {
  switch (op) {
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case '<':
    case '>':
    case '<=':
    case '>=': {
      const both = typeof a === 'string' && typeof b === 'string';
      const x = both ? a : num(a, op);
      const y = both ? b : num(b, op);
      return op === '<' ? x < y : op === '>' ? x > y : op === '<=' ? x <= y : x >= y;
    }
    case 'in':
    case 'not in': {
      let found: boolean;
      if (typeof b === 'string') {
        if (typeof a !== 'string')
          throw new TemplateError(`chat template: 'in <string>' needs a string, got a ${typeName(a)}`);
        found = b.includes(a);
      } else if (Array.isArray(b)) found = b.some((x) => equal(x, a));
      else if (isDict(b)) found = typeof a === 'string' && Object.hasOwn(b, a);
      else throw new TemplateError(`chat template: cannot look for a value in a ${typeName(b)}`);
      return op === 'in' ? found : !found;
    }
    case '~':
      return pyStr(a) + pyStr(b);
    case '+':
      if (typeof a === 'string' && typeof b === 'string') return a + b;
      if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
      if (typeof a === 'string' || typeof b === 'string' || Array.isArray(a) || Array.isArray(b))
        throw new TemplateError(`chat template: cannot add a ${typeName(a)} and a ${typeName(b)}`);
      return num(a, op) + num(b, op);
    case '*':
      if (typeof a === 'string' && typeof b === 'number') return a.repeat(Math.max(0, b));
      if (Array.isArray(a) && typeof b === 'number')
        return Array.from({ length: Math.max(0, b) }, () => a).flat();
      return num(a, op) * num(b, op);
    case '-':
      return num(a, op) - num(b, op);
    case '/':
      return num(a, op) / num(b, op);
    case '//':
      return Math.floor(num(a, op) / num(b, op));
    case '%': {
      const x = num(a, op);
      const y = num(b, op);
      return ((x % y) + y) % y;
    }
    case '**':
      return num(a, op) ** num(b, op);
  }
  throw new TemplateError(`chat template: unknown operator ${op}`);
}

export const TESTS: Record<string, (v: unknown, args: unknown[]) => boolean> = {
  defined: (v) => !(v instanceof Undefined),
  undefined: (v) => v instanceof Undefined,
  none: (v) => v === null,
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' || typeof v === 'boolean',
  integer: (v) => typeof v === 'number' && Number.isInteger(v),
  float: (v) => typeof v === 'number' && !Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  true: (v) => v === true,
  false: (v) => v === false,
  mapping: (v) => isDict(v),
  iterable: (v) => Array.isArray(v) || typeof v === 'string' || isDict(v) || v instanceof Undefined,
  sequence: (v) => Array.isArray(v) || typeof v === 'string' || isDict(v),
  callable: (v) => isFn(v),
  odd: (v) => num(v, 'odd') % 2 === 1,
  even: (v) => num(v, 'even') % 2 === 0,
  divisibleby: (v, [n]) => num(v, 'divisibleby') % num(n, 'divisibleby') === 0,
  lower: (v) => typeof v === 'string' && v === v.toLowerCase(),
  upper: (v) => typeof v === 'string' && v === v.toUpperCase(),
  equalto: (v, [x]) => equal(v, x),
  eq: (v, [x]) => equal(v, x),
  '==': (v, [x]) => equal(v, x),
  ne: (v, [x]) => !equal(v, x),
  '!=': (v, [x]) => !equal(v, x),
  lt: (v, [x]) => binary('<', v, x) as boolean,
  '<': (v, [x]) => binary('<', v, x) as boolean,
  gt: (v, [x]) => binary('>', v, x) as boolean,
  '>': (v, [x]) => binary('>', v, x) as boolean,
  le: (v, [x]) => binary('<=', v, x) as boolean,
  '<=': (v, [x]) => binary('<=', v, x) as boolean,
  ge: (v, [x]) => binary('>=', v, x) as boolean,
  '>=': (v, [x]) => binary('>=', v, x) as boolean,
  in: (v, [x]) => binary('in', v, x) as boolean,
};

function attrPath(item: unknown, path: unknown): unknown {
  let v = item;
  for (const part of String(path).split('.'))
    v = /^\d+$/.test(part) ? getItem(v, Number(part)) : getItem(v, part);
  return v;
}

export const FILTERS: Record<string, (v: unknown, args: unknown[], kw: Record<string, unknown>) => unknown> =
  {
    tojson: (v, [indent], kw) =>
      toJson(
        v,
        (kw.indent ?? indent ?? null) as number | null,
        kw.sort_keys === true,
        (kw.separators as [string, string] | undefined) ?? null,
      ),
    length: (v) => (typeof v === 'string' ? [...v].length : toList(v, 'length').length),
    count: (v) => (typeof v === 'string' ? [...v].length : toList(v, 'count').length),
    string: (v) => pyStr(v),
    trim: (v, [chars]) => pyStrip(pyStr(v), chars, 'both'),
    lower: (v) => pyStr(v).toLowerCase(),
    upper: (v) => pyStr(v).toUpperCase(),
    title: (v) => title(pyStr(v)),
    capitalize: (v) => {
      const s = pyStr(v);
      return s ? s[0].toUpperCase() + s.slice(1).toLowerCase() : s;
    },
    replace: (v, [a, b, n]) => method(pyStr(v), 'replace')!([a, b, n], {}),
    first: (v) => toList(v, 'first')[0] ?? new Undefined('the list is empty'),
    last: (v) => toList(v, 'last').at(-1) ?? new Undefined('the list is empty'),
    join: (v, [sep, attribute], kw) =>
      toList(v, 'join')
        .map((x) =>
          pyStr((kw.attribute ?? attribute) === undefined ? x : attrPath(x, kw.attribute ?? attribute)),
        )
        .join(sep === undefined ? '' : pyStr(sep)),
    default: (v, [dflt, boolean]) =>
      (boolean === true ? !truthy(v) : v instanceof Undefined) ? (dflt ?? '') : v,
    list: (v) => [...toList(v, 'list')],
    items: (v) => {
      if (v instanceof Undefined) return [];
      if (!isDict(v)) throw new TemplateError(`chat template: items needs a dict, got a ${typeName(v)}`);
      return Object.entries(v).map((kv) => Tuple.from(kv));
    },
    reverse: (v) => (typeof v === 'string' ? [...v].reverse().join('') : [...toList(v, 'reverse')].reverse()),
    abs: (v) => Math.abs(num(v, 'abs')),
    int: (v) => {
      const x = typeof v === 'string' ? Number.parseInt(v, 10) : num(v, 'int');
      return Number.isNaN(x) ? 0 : Math.trunc(x);
    },
    float: (v) => {
      const x = typeof v === 'string' ? Number.parseFloat(v) : num(v, 'float');
      return Number.isNaN(x) ? 0 : x;
    },
    map: (v, [name], kw) => {
      if (kw.attribute !== undefined) return toList(v, 'map').map((x) => attrPath(x, kw.attribute));
      const f = typeof name === 'string' ? FILTERS[name] : undefined;
      if (!f)
        throw new TemplateError(`chat template: map needs attribute= or a known filter, got ${pyRepr(name)}`);
      return toList(v, 'map').map((x) => f(x, [], {}));
    },
    selectattr: (v, [attr, test, ...rest]) =>
      toList(v, 'selectattr').filter((x) => passes(attrPath(x, attr), test, rest)),
    rejectattr: (v, [attr, test, ...rest]) =>
      toList(v, 'rejectattr').filter((x) => !passes(attrPath(x, attr), test, rest)),
    select: (v, [test, ...rest]) => toList(v, 'select').filter((x) => passes(x, test, rest)),
    reject: (v, [test, ...rest]) => toList(v, 'reject').filter((x) => !passes(x, test, rest)),
  };
FILTERS.d = FILTERS.default;
FILTERS.e = (v) => v;

function passes(v: unknown, test: unknown, args: unknown[]): boolean {
  if (test === undefined) return truthy(v);
  const t = typeof test === 'string' ? TESTS[test] : undefined;
  if (!t) throw new TemplateError(`chat template: the test '${String(test)}' is not supported`);
  return t(v, args);
}
