/**
 * Option trees defined once: each key is a TypeBox schema carrying its type, default, rule and doc, so the
 * TypeScript type (`Static`), the defaults, the validation (JSON Schema, checked by ajv) and the reference
 * docs all come from the one definition. The trainer's config and every task's options are built with these.
 */
import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';

export type { Static, TObject, TProperties, TSchema };

/** Bounds of a number: `min`/`max` inclusive, `above`/`below` exclusive. */
export interface NumberRule {
  min?: number;
  above?: number;
  max?: number;
  below?: number;
}

function bounds(rule: NumberRule) {
  return {
    ...(rule.min !== undefined ? { minimum: rule.min } : {}),
    ...(rule.above !== undefined ? { exclusiveMinimum: rule.above } : {}),
    ...(rule.max !== undefined ? { maximum: rule.max } : {}),
    ...(rule.below !== undefined ? { exclusiveMaximum: rule.below } : {}),
  };
}

/** An integer key with its default and doc. */
export const int = (value: number, doc: string, rule: NumberRule = {}) =>
  Type.Integer({ default: value, description: doc, ...bounds(rule) });

/** A number key (finite) with its default and doc. */
export const num = (value: number, doc: string, rule: NumberRule = {}) =>
  Type.Number({ default: value, description: doc, ...bounds(rule) });

/** An integer key that may be left unset (no default: the consumer picks one). */
export const optionalInt = (doc: string, rule: NumberRule = {}) =>
  Type.Optional(Type.Integer({ description: doc, ...bounds(rule) }));

export const bool = (value: boolean, doc: string) => Type.Boolean({ default: value, description: doc });

/** A string key; `nonEmpty` refuses ''. */
export const str = (value: string, doc: string, rule: { nonEmpty?: boolean } = {}) =>
  Type.String({ default: value, description: doc, ...(rule.nonEmpty ? { minLength: 1 } : {}) });

/** A key whose value is one of `values`. */
export const oneOf = <const V extends readonly string[]>(values: V, value: V[number], doc: string) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], default: value, description: doc });

/** A group of keys; no other key is allowed in it. */
export const section = <P extends TProperties>(doc: string, properties: P) =>
  Type.Object(properties, { description: doc, additionalProperties: false });

/** A free-form object (checked elsewhere, e.g. a task's options against the task's own schema). */
export const freeObject = (doc: string) =>
  Type.Optional(Type.Record(Type.String(), Type.Unknown(), { default: {}, description: doc }));

/** A schema as plain JSON Schema data (what ajv and the docs read). */
export interface SchemaNode {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  properties?: Record<string, SchemaNode>;
  required?: readonly string[];
  additionalProperties?: boolean | SchemaNode;
  patternProperties?: Record<string, SchemaNode>;
}

export const node = (schema: TSchema): SchemaNode => schema as unknown as SchemaNode;

/** Whether a node is a section of named keys (not a leaf, not a free-form record). */
export const isSection = (n: SchemaNode): boolean => n.type === 'object' && n.properties !== undefined;

/** The defaults of every key that has one, as a tree. */
export function defaultsOf<T extends TSchema>(schema: T): Static<T> {
  const walk = (n: SchemaNode): unknown => {
    if (!isSection(n)) return structuredClone(n.default);
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(n.properties ?? {})) {
      const v = walk(child);
      if (v !== undefined) out[k] = v;
    }
    return out;
  };
  return walk(node(schema)) as Static<T>;
}

/** The node at a dotted key path, or undefined. */
export function nodeAt(schema: TSchema | SchemaNode, path: string): SchemaNode | undefined {
  let n: SchemaNode | undefined = schema as SchemaNode;
  if (path === '') return n;
  for (const part of path.split('.')) {
    if (!n || !isSection(n) || !Object.hasOwn(n.properties!, part)) return undefined;
    n = n.properties![part];
  }
  return n;
}

/** Every key path ('model', 'model.dModel', ...), sections included, in definition order. */
export function keyPaths(schema: TSchema | SchemaNode, prefix = ''): string[] {
  const n = schema as SchemaNode;
  if (!isSection(n)) return [];
  const out: string[] = [];
  for (const [k, child] of Object.entries(n.properties!)) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.push(p, ...keyPaths(child, p));
  }
  return out;
}

/** Whether a key may be left unset. */
export function isOptionalKey(schema: TSchema | SchemaNode, path: string): boolean {
  const parts = path.split('.');
  const parent = nodeAt(schema, parts.slice(0, -1).join('.'));
  return parent !== undefined && !(parent.required ?? []).includes(parts.at(-1)!);
}
