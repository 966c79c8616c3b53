/**
 * Checking an option tree against its schema. ajv finds the first key that breaks a rule; the message is
 * then written from that key's schema, so it states the whole rule and names the full key path:
 * `config: "rollout.n" must be an integer >= 1, got 0`, `config: unknown key "train.lrr" (did you mean
 * "train.lr"?)`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { mergeTrees } from './merge.js';
import { type SchemaNode, type TSchema, defaultsOf, isSection, keyPaths, nodeAt } from './schema.js';

/** A configuration error; `key` is the full dotted path it concerns, when it concerns one. */
export class ConfigError extends Error {
  readonly key: string | undefined;
  constructor(message: string, key?: string) {
    super(`config: ${message}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}

export function show(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** The closest known name, if one is close enough to be a likely typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    const d = levenshtein(lower, c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(name.length / 3)) ? best : undefined;
}

/** A typo of a key at the same depth, or a known leaf name in the wrong place (`lr` → `train.lr`). */
function suggestKey(path: string, paths: readonly string[]): string | undefined {
  const depth = path.split('.').length;
  const near = closest(
    path,
    paths.filter((p) => p.split('.').length === depth),
  );
  if (near) return near;
  const leaf = path.split('.').pop()!;
  return (
    paths.find((p) => p.split('.').pop() === leaf) ??
    closest(
      leaf,
      paths.filter((p) => !p.includes('.')),
    )
  );
}

/** Where an option tree sits: `prefix` is prepended to its key paths in messages (e.g. 'taskOptions'). */
export interface OptionsPlace {
  prefix?: string;
  /** Said after the message, e.g. 'task "multihop-qa"'. */
  owner?: string;
}

const fullPath = (place: OptionsPlace, path: string) =>
  place.prefix ? (path ? `${place.prefix}.${path}` : place.prefix) : path;

export function unknownKey(
  schema: TSchema | SchemaNode,
  path: string,
  place: OptionsPlace = {},
): ConfigError {
  const s = suggestKey(path, keyPaths(schema));
  const full = fullPath(place, path);
  const hint = s ? ` (did you mean ${show(fullPath(place, s))}?)` : '';
  const owner = place.owner ? ` of ${place.owner}` : '';
  return new ConfigError(`unknown key ${show(full)}${owner}${hint}`, full);
}

/** The rule a number breaks, in words ('must be an integer >= 1'), or undefined when it keeps them. */
function numberRule(n: SchemaNode, v: number): string | undefined {
  const what = n.type === 'integer' ? 'an integer' : 'a number';
  if (!Number.isFinite(v)) return 'must be a finite number';
  if (n.type === 'integer' && !Number.isInteger(v)) return 'must be an integer';
  const low = n.minimum ?? n.exclusiveMinimum;
  const high = n.maximum ?? n.exclusiveMaximum;
  const lowOk =
    (n.minimum === undefined || v >= n.minimum) &&
    (n.exclusiveMinimum === undefined || v > n.exclusiveMinimum);
  const highOk =
    (n.maximum === undefined || v <= n.maximum) &&
    (n.exclusiveMaximum === undefined || v < n.exclusiveMaximum);
  if (lowOk && highOk) return undefined;
  const open = n.exclusiveMinimum !== undefined;
  const close = n.exclusiveMaximum !== undefined;
  if (low !== undefined && high !== undefined)
    return `must be ${what} in ${open ? '(' : '['}${low}, ${high}${close ? ')' : ']'}`;
  if (low !== undefined) return `must be ${what} ${open ? '>' : '>='} ${low}`;
  return `must be ${what} ${close ? '<' : '<='} ${high}`;
}

/** The message for `value` at `path`, which breaks a rule of its leaf schema `n`. */
function leafError(n: SchemaNode, value: unknown, path: string): ConfigError {
  const typeError = (what: string) =>
    new ConfigError(`${show(path)} must be ${what}, got ${kindOf(value)} ${show(value)}`, path);
  if (n.enum) {
    const near = typeof value === 'string' ? closest(value, n.enum) : undefined;
    return new ConfigError(
      `${show(path)} must be one of ${n.enum.map((v) => show(v)).join(', ')}, got ${show(value)}` +
        (near ? ` (did you mean ${show(near)}?)` : ''),
      path,
    );
  }
  switch (n.type) {
    case 'number':
    case 'integer': {
      if (typeof value !== 'number') return typeError('a number');
      const broken = numberRule(n, value) ?? 'breaks its rule';
      return new ConfigError(`${show(path)} ${broken}, got ${show(value)}`, path);
    }
    case 'boolean':
      return typeError('a boolean (true or false)');
    case 'string':
      if (typeof value !== 'string') return typeError('a string');
      return new ConfigError(`${show(path)} must be a non-empty string`, path);
    default:
      return typeError('an object');
  }
}

/** JSON Schema without `required` anywhere: what a partial tree (a preset, a file, overrides) must meet. */
function partialOf(n: SchemaNode): SchemaNode {
  if (!isSection(n)) return n;
  const { required: _, properties, ...rest } = n;
  return {
    ...rest,
    properties: Object.fromEntries(Object.entries(properties!).map(([k, c]) => [k, partialOf(c)])),
  };
}

const ajv = new Ajv({ allErrors: false, strict: false });
const compiled = new WeakMap<object, { full: ValidateFunction; partial: ValidateFunction }>();

function validators(schema: TSchema) {
  let v = compiled.get(schema);
  if (!v) {
    const plain = JSON.parse(JSON.stringify(schema)) as SchemaNode;
    v = { full: ajv.compile(plain), partial: ajv.compile(partialOf(plain)) };
    compiled.set(schema, v);
  }
  return v;
}

/** '/train/lr' → 'train.lr' (JSON Pointer escapes undone). */
const pointerToPath = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

function valueAt(tree: unknown, path: string): unknown {
  let v = tree;
  for (const part of path === '' ? [] : path.split('.')) v = (v as Record<string, unknown>)?.[part];
  return v;
}

function errorFor(schema: TSchema, tree: unknown, e: ErrorObject, place: OptionsPlace): ConfigError {
  const at = pointerToPath(e.instancePath);
  const join = (k: string) => (at ? `${at}.${k}` : k);
  if (e.keyword === 'additionalProperties')
    return unknownKey(schema, join((e.params as { additionalProperty: string }).additionalProperty), place);
  if (e.keyword === 'required') {
    const key = fullPath(place, join((e.params as { missingProperty: string }).missingProperty));
    return new ConfigError(`${show(key)} is missing`, key);
  }
  const n = nodeAt(schema, at) ?? {};
  const value = valueAt(tree, at);
  if (at === '' && !place.prefix)
    return new ConfigError(`the config must be an object, got ${kindOf(value)}`);
  return leafError(n, value, fullPath(place, at));
}

/**
 * Checks `tree` against `schema`; throws a ConfigError naming the first key that breaks a rule. With
 * `partial`, keys may be missing (a preset, a file, overrides); without, every key without a default
 * must be there.
 */
export function validateOptions<T>(
  schema: TSchema,
  tree: unknown,
  options: OptionsPlace & { partial?: boolean } = {},
): T {
  const v = validators(schema);
  const check = options.partial ? v.partial : v.full;
  if (!check(tree)) throw errorFor(schema, tree, check.errors![0], options);
  return tree as T;
}

/** Checks one key's value (e.g. a command-line override) against its schema node. */
export function validateKey(schema: TSchema, path: string, value: unknown, place: OptionsPlace = {}): void {
  const n = nodeAt(schema, path);
  if (!n) throw unknownKey(schema, path, place);
  const check = validators(n as unknown as TSchema).partial;
  if (!check(value)) {
    const e = check.errors![0];
    const inner = pointerToPath(e.instancePath);
    const sub = inner ? `${path}.${inner}` : path;
    const pointer = `/${sub.split('.').join('/')}`;
    throw errorFor(schema, setAt({}, sub, valueAt(value, inner)), { ...e, instancePath: pointer }, place);
  }
}

/** Sets `tree[path] = value`, creating sections on the way; returns `tree`. */
export function setAt(tree: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const parts = path.split('.');
  let n = tree;
  for (const p of parts.slice(0, -1)) {
    if (!isPlainObject(n[p])) n[p] = {};
    n = n[p] as Record<string, unknown>;
  }
  n[parts.at(-1)!] = value;
  return tree;
}

/** `given` options completed with the schema's defaults, both checked (a partial tree, then the whole). */
export function completeOptions<T>(schema: TSchema, given: unknown, place: OptionsPlace = {}): T {
  validateOptions(schema, given, { ...place, partial: true });
  return validateOptions<T>(schema, mergeTrees(defaultsOf(schema) as object, given as object), place);
}
