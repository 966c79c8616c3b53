/** Resolving a config: defaults ← preset ← file ← overrides, merged and validated, the task's options too. */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { mergeTrees } from '../options/merge.js';
import { type TSchema, isOptionalKey, keyPaths, nodeAt } from '../options/schema.js';
import {
  ConfigError,
  closest,
  isPlainObject,
  kindOf,
  setAt,
  show,
  unknownKey,
  validateKey,
} from '../options/validate.js';
import { resolveTaskOptions, taskDefinition } from '../tasks/registry.js';
import {
  DEFAULT_CONFIG,
  type PartialTrainConfig,
  type TrainConfig,
  TrainConfigSchema,
} from './config-definition.js';
import { presets } from './config-presets.js';
import { validateConfig, validatePartialConfig } from './config-schema.js';

/** Deep-merges partial configs left to right over a copy of `base`; `null` removes an optional key. */
export function mergeConfig(base: TrainConfig, ...layers: (PartialTrainConfig | undefined)[]): TrainConfig {
  return mergeTrees(base, ...layers) as TrainConfig;
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

const TASK_OPTIONS = 'taskOptions';

/**
 * Parses `key.sub=value` overrides into a partial config. Values are JSON when they parse (`3e-4`, `true`,
 * `[1,2]`, `"4"`), else strings; for string-valued keys the text is kept as is (`checkpoint.dir=2024`),
 * and `null` removes an optional key. `taskOptions.*` keys are checked against `taskOptions` (a task's
 * options schema) when one is given, and left to the task's resolution otherwise.
 */
export function parseOverrides(
  overrides: readonly string[],
  task?: { name: string; options?: TSchema },
): PartialTrainConfig {
  const out: Record<string, unknown> = {};
  for (const item of overrides) {
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq).trim();
    if (eq < 0 || key === '' || key.split('.').some((p) => p === ''))
      throw new ConfigError(`override ${show(item)} must look like key.sub=value`);
    const raw = item.slice(eq + 1);
    const inTask = key === TASK_OPTIONS || key.startsWith(`${TASK_OPTIONS}.`);
    // A key inside a free record (`model.chatVariables.enable_thinking`) is the user's; the whole config's
    // validation checks the record.
    const schema = inTask ? task?.options : underFreeRecord(key) ? undefined : TrainConfigSchema;
    const sub = inTask ? key.slice(TASK_OPTIONS.length + 1) : key;
    const place = inTask ? { prefix: TASK_OPTIONS, owner: task && `task ${show(task.name)}` } : {};
    const field = schema && sub !== '' ? nodeAt(schema, sub) : undefined;
    if (schema && sub !== '' && !field) throw unknownKey(schema, sub, place);
    let value = parseOverrideValue(raw);
    if ((field?.type === 'string' || field?.enum) && typeof value !== 'string') value = raw;
    const optional = field !== undefined && schema !== undefined && isOptionalKey(schema, sub);
    if (value === null && !optional)
      throw new ConfigError(`${show(key)} cannot be null (only optional keys can be unset)`, key);
    if (value !== null && schema && sub !== '') validateKey(schema, sub, value, place);
    const current = valueAt(out, key);
    if (isPlainObject(value) && isPlainObject(current)) mergeInto(current, value);
    else setAt(out, key, value);
  }
  return out as PartialTrainConfig;
}

/** Whether `path` lies below a free record of the trainer's schema (one with no keys of its own). */
function underFreeRecord(path: string): boolean {
  const parts = path.split('.');
  for (let i = 1; i < parts.length; i++) {
    const node = nodeAt(TrainConfigSchema, parts.slice(0, i).join('.'));
    if (node?.type === 'object' && node.properties === undefined) return true;
  }
  return false;
}

function valueAt(tree: Record<string, unknown>, path: string): unknown {
  let v: unknown = tree;
  for (const p of path.split('.')) v = isPlainObject(v) ? v[p] : undefined;
  return v;
}

function mergeInto(base: Record<string, unknown>, over: Record<string, unknown>): void {
  Object.assign(base, mergeTrees(base, over));
}

export interface ResolveConfigOptions {
  /** A config to start from instead of the defaults (e.g. a checkpoint's, from its agent.json). */
  base?: PartialTrainConfig;
  /** A name in `presets`. */
  preset?: string;
  /** A JSON or YAML file. */
  file?: string;
  /** `key.sub=value` strings, or a partial config; applied last. */
  overrides?: readonly string[] | PartialTrainConfig;
}

function presetLayer(name: string | undefined): PartialTrainConfig | undefined {
  if (name === undefined) return undefined;
  if (!Object.hasOwn(presets, name)) {
    const names = Object.keys(presets);
    const near = closest(name, names);
    throw new ConfigError(
      `unknown preset ${show(name)}${near ? ` (did you mean ${show(near)}?)` : ''}; known: ${names.join(', ')}`,
    );
  }
  return validatePartialConfig(presets[name]);
}

/** The task an override list names (`task=…`), if any. */
function taskOverride(overrides: readonly string[]): string | undefined {
  const last = overrides.filter((o) => /^\s*task\s*=/.test(o)).at(-1);
  return last === undefined ? undefined : last.slice(last.indexOf('=') + 1);
}

/**
 * The config of a run: defaults ← base ← preset ← file ← overrides, validated; `taskOptions` becomes the named
 * task's complete options (its defaults ← what was given), checked against the task's schema.
 */
export function resolveConfig(options: ResolveConfigOptions = {}): TrainConfig {
  const preset = presetLayer(options.preset);
  const file = options.file !== undefined ? loadConfigFile(options.file) : undefined;
  const o = options.overrides;
  let overrides: PartialTrainConfig | undefined;
  if (Array.isArray(o)) {
    const task = taskOverride(o) ?? file?.task ?? preset?.task ?? options.base?.task ?? DEFAULT_CONFIG.task;
    overrides = parseOverrides(o, taskDefinition(task));
  } else if (o !== undefined) overrides = validatePartialConfig(o);
  const base = options.base === undefined ? undefined : validatePartialConfig(options.base);
  const config = validateConfig(mergeConfig(DEFAULT_CONFIG, base, preset, file, overrides));
  config.taskOptions = resolveTaskOptions(config);
  return config;
}

/** The leaf key paths of the config ('seed', 'model.dModel', ...), e.g. for help text. */
export function configKeys(): string[] {
  return keyPaths(TrainConfigSchema).filter((p) => nodeAt(TrainConfigSchema, p)?.properties === undefined);
}
