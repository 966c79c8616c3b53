/** Resolving a config: defaults ← preset ← file ← overrides, merged and validated. */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_CONFIG, type PartialTrainConfig, type TrainConfig } from './config.js';
import { presets } from './config-presets.js';
import {
  ConfigError,
  allPaths,
  closest,
  fieldAt,
  isPlainObject,
  kindOf,
  show,
  unknownKey,
  validate,
  validateConfig,
  validatePartialConfig,
} from './config-schema.js';

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Deep-merges `over` into `base` (in place); `null` removes an optional key. */
function mergeInto(base: Record<string, unknown>, over: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    if (v === null) delete base[k];
    else if (isPlainObject(v) && isPlainObject(base[k])) mergeInto(base[k], v);
    else base[k] = clone(v);
  }
}

/** Deep-merges partial configs left to right over a copy of `base`. */
export function mergeConfig(base: TrainConfig, ...layers: (PartialTrainConfig | undefined)[]): TrainConfig {
  const out = clone(base) as unknown as Record<string, unknown>;
  for (const layer of layers) if (layer) mergeInto(out, layer as Record<string, unknown>);
  return out as unknown as TrainConfig;
}

/** Reads a JSON or YAML config file (by extension; anything else is read as YAML, a superset of JSON). */
export function loadConfigFile(path: string): PartialTrainConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read ${show(path)}: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    data = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0];
    throw new ConfigError(`cannot parse ${show(path)}: ${msg}`);
  }
  if (data === null || data === undefined) return {};
  if (!isPlainObject(data))
    throw new ConfigError(`${show(path)} must hold an object of settings, got ${kindOf(data)}`);
  try {
    return validatePartialConfig(data);
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${e.message.slice(8)} (in ${show(path)})`, e.key);
    throw e;
  }
}

/** Parses an override's value: JSON when it parses as JSON, else the text as a string. */
export function parseOverrideValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Parses `key.sub=value` overrides into a partial config. Values are JSON when they parse (`3e-4`, `true`,
 * `[1,2]`, `"4"`), else strings; for string-valued keys the text is kept as is (`checkpoint.dir=2024`),
 * and `null` removes an optional key.
 */
export function parseOverrides(overrides: readonly string[]): PartialTrainConfig {
  const out: Record<string, unknown> = {};
  for (const item of overrides) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq).trim();
    if (eq < 0 || key === '' || key.split('.').some((p) => p === ''))
      throw new ConfigError(`override ${show(item)} must look like key.sub=value`);
    const raw = item.slice(eq + 1);
    const field = fieldAt(key);
    if (!field) throw unknownKey(key);
    let value = parseOverrideValue(raw);
    if ((field.kind === 'string' || field.kind === 'enum') && typeof value !== 'string') value = raw;
    if (value === null && !(field.kind === 'number' && field.optional))
      throw new ConfigError(`${show(key)} cannot be null (only optional keys can be unset)`, key);
    if (value !== null) validate(field, value, key, true);
    const parts = key.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) {
      if (!isPlainObject(node[p])) node[p] = {};
      node = node[p] as Record<string, unknown>;
    }
    const last = parts[parts.length - 1];
    if (isPlainObject(value) && isPlainObject(node[last]))
      mergeInto(node[last] as Record<string, unknown>, value);
    else node[last] = value;
  }
  return out as PartialTrainConfig;
}

export interface ResolveConfigOptions {
  /** A name in `presets`. */
  preset?: string;
  /** A JSON or YAML file. */
  file?: string;
  /** `key.sub=value` strings, or a partial config; applied last. */
  overrides?: readonly string[] | PartialTrainConfig;
}

/** The config of a run: defaults ← preset ← file ← overrides, validated. */
export function resolveConfig(options: ResolveConfigOptions = {}): TrainConfig {
  let preset: PartialTrainConfig | undefined;
  if (options.preset !== undefined) {
    if (!Object.hasOwn(presets, options.preset)) {
      const names = Object.keys(presets);
      const near = closest(options.preset, names);
      throw new ConfigError(
        `unknown preset ${show(options.preset)}${near ? ` (did you mean ${show(near)}?)` : ''}; ` +
          `known: ${names.join(', ')}`,
      );
    }
    preset = validatePartialConfig(presets[options.preset]);
  }
  const file = options.file !== undefined ? loadConfigFile(options.file) : undefined;
  const o = options.overrides;
  const overrides =
    o === undefined ? undefined : Array.isArray(o) ? parseOverrides(o) : validatePartialConfig(o);
  return validateConfig(mergeConfig(DEFAULT_CONFIG, preset, file, overrides));
}

/** The leaf key paths of the config ('seed', 'model.dModel', ...), e.g. for help text. */
export function configKeys(): string[] {
  return allPaths().filter((p) => fieldAt(p)?.kind !== 'object');
}
