/**
 * Checks a call's arguments against its tool's JSON schema (ajv), before the tool runs. Bad arguments come
 * back as a readable message for the policy's observation, never as an exception.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { JsonSchema, Tool } from './tool.js';

export type ValidationResult = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };

// allErrors: report every problem at once; strict: false lets tools carry extra keywords; useDefaults
// fills in declared defaults (on a copy of the arguments).
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
const compiled = new WeakMap<JsonSchema, ValidateFunction | Error>();

function compile(schema: JsonSchema): ValidateFunction | Error {
  let v = compiled.get(schema);
  if (!v) {
    try {
      v = ajv.compile(schema);
    } catch (e) {
      v = e instanceof Error ? e : new Error(String(e));
    }
    compiled.set(schema, v);
  }
  return v;
}

function where(path: string): string {
  if (path === '') return 'arguments';
  const parts = path
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.reduce((s, p) => (/^\d+$/.test(p) ? `${s}[${p}]` : s ? `${s}.${p}` : p), '');
}

function describe(e: ErrorObject): string {
  const at = where(e.instancePath);
  const inside = e.instancePath === '' ? '' : ` in ${at}`;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `missing required property ${JSON.stringify(p.missingProperty)}${inside}`;
    case 'additionalProperties':
      return `unexpected property ${JSON.stringify(p.additionalProperty)}${inside}`;
    case 'enum':
      return `${at} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${at} ${e.message ?? 'is invalid'}`;
  }
}

/** Validates the arguments of a call; on success returns them (a copy, with schema defaults filled in). */
export function validateArgs(tool: Pick<Tool, 'name' | 'parameters'>, args: unknown): ValidationResult {
  const validate = compile(tool.parameters);
  if (validate instanceof Error)
    return {
      ok: false,
      error: `tool ${JSON.stringify(tool.name)} has an invalid schema: ${validate.message}`,
    };
  let copy: unknown;
  try {
    copy = structuredClone(args);
  } catch {
    return { ok: false, error: `invalid arguments for tool ${JSON.stringify(tool.name)}: not plain data` };
  }
  if (validate(copy)) {
    if (copy === null || typeof copy !== 'object' || Array.isArray(copy))
      return {
        ok: false,
        error: `invalid arguments for tool ${JSON.stringify(tool.name)}: arguments must be an object`,
      };
    return { ok: true, args: copy as Record<string, unknown> };
  }
  const messages = [...new Set((validate.errors ?? []).map(describe))];
  return {
    ok: false,
    error: `invalid arguments for tool ${JSON.stringify(tool.name)}: ${messages.join('; ') || 'rejected by its schema'}`,
  };
}
