/**
 * The training configuration: a typed tree with defaults, named presets, JSON or YAML files and
 * `key.sub=value` command-line overrides, merged as defaults ← preset ← file ← overrides and validated
 * against a small schema. Every error names the full key path, e.g.
 * `config: unknown key "train.lrr" (did you mean "train.lr"?)` or
 * `config: "rollout.n" must be an integer >= 1, got 0`.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';

export type Activation = 'swiglu' | 'gelu';
export type NormKind = 'rms' | 'layer';
export type AlgorithmName = 'grpo' | 'ppo' | 'reinforce++' | 'reinforce++-baseline' | 'rloo';
export type KlType = 'k1' | 'k3' | 'low_var_kl';
export type LossAggregation = 'token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-mean';
export type LrSchedule = 'constant' | 'cosine' | 'linear';
/** 'auto': a live bar on a TTY, periodic log lines otherwise; 'bar' / 'lines' force one; 'none' is silent. */
export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';

export interface ModelConfig {
  dModel: number;
  layers: number;
  heads: number;
  /** Key/value heads (grouped-query attention); must divide `heads`. */
  kvHeads: number;
  /** MLP hidden size; absent: the model's default for the activation. */
  ffnHidden?: number;
  maxLength: number;
  activation: Activation;
  norm: NormKind;
  tiedEmbeddings: boolean;
}

export interface CriticConfig {
  /** A value head on the policy's trunk (true) or a separate critic model (false). */
  shareTrunk: boolean;
}

export interface RolloutConfig {
  /** Samples (trajectories) per prompt: the group size of GRPO / RLOO. */
  n: number;
  maxTurns: number;
  maxTokensPerTurn: number;
  /** Most tokens in a whole trajectory (prompt + actions + observations); at most `model.maxLength`. */
  maxLength: number;
  maxObservationTokens: number;
  /** Sampling temperature; 0 samples greedily. */
  temperature: number;
  /** 0 turns top-k off. */
  topK: number;
  /** 1 turns nucleus sampling off. */
  topP: number;
}

export interface AlgorithmConfig {
  name: AlgorithmName;
  gamma: number;
  /** GAE λ. */
  lambda: number;
  /** Divide group-relative advantages by the group's standard deviation (GRPO). */
  normalizeStd: boolean;
  clipRatio: number;
  /** Upper clip ratio (clip-higher); equal to `clipRatio` for the symmetric PPO clip. */
  clipRatioHigh: number;
  /** Dual-clip constant c > 1 for negative advantages; 0 turns dual clipping off. */
  dualClip: number;
  klCoef: number;
  klType: KlType;
  /** Put the KL penalty into the reward (true) or into the loss (false). */
  klInReward: boolean;
  entropyCoef: number;
  /** Value-function clip range; 0 turns value clipping off. */
  valueClip: number;
  valueCoef: number;
  aggregation: LossAggregation;
  /** Train only on tokens the policy generated (mask out prompts and observations). */
  useActionMask: boolean;
  /** Per-turn (process) rewards in addition to the final outcome reward. */
  processRewards: boolean;
}

export interface TrainLoopConfig {
  steps: number;
  promptsPerStep: number;
  ppoEpochs: number;
  /** Trajectories per optimizer step. */
  miniBatchSize: number;
  /** Trajectories per forward/backward pass (gradient accumulation within a mini-batch). */
  microBatchSize: number;
  lr: number;
  criticLr: number;
  weightDecay: number;
  /** Global gradient-norm clip; 0 turns clipping off. */
  gradClip: number;
  warmupSteps: number;
  schedule: LrSchedule;
}

export interface SftConfig {
  /** Optimizer steps of the supervised warm start on scripted demonstrations; 0 skips it. */
  steps: number;
  /** Demonstrations (episodes of the scripted policy) to train on. */
  demonstrations: number;
  batchSize: number;
  lr: number;
}

export interface EvalConfig {
  /** Evaluate every this many steps; 0 turns periodic evaluation off. */
  every: number;
  examples: number;
}

export interface CheckpointConfig {
  dir: string;
  /** Save every this many steps; 0 saves only at the end. */
  every: number;
  /** Resume from the latest checkpoint in `dir` when there is one. */
  resume: boolean;
}

export interface LogConfig {
  /** Where metrics.jsonl and the plots go. */
  dir: string;
  progress: ProgressMode;
}

export interface TrainConfig {
  seed: number;
  /** A tensor backend name ('cpu', or one registered by the host). */
  backend: string;
  task: string;
  model: ModelConfig;
  critic: CriticConfig;
  rollout: RolloutConfig;
  algorithm: AlgorithmConfig;
  sft: SftConfig;
  train: TrainLoopConfig;
  eval: EvalConfig;
  checkpoint: CheckpointConfig;
  log: LogConfig;
}

/** A partial config: what presets, files and overrides contain. */
export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };
export type PartialTrainConfig = DeepPartial<TrainConfig>;

/** The defaults: a tiny model that trains on a CPU in minutes. */
export const DEFAULT_CONFIG: TrainConfig = {
  seed: 0,
  backend: 'cpu',
  task: 'reveal',
  model: {
    dModel: 64,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    maxLength: 512,
    activation: 'swiglu',
    norm: 'rms',
    tiedEmbeddings: true,
  },
  critic: { shareTrunk: true },
  rollout: {
    n: 4,
    maxTurns: 4,
    maxTokensPerTurn: 48,
    maxLength: 512,
    maxObservationTokens: 128,
    temperature: 1,
    topK: 0,
    topP: 1,
  },
  algorithm: {
    name: 'grpo',
    gamma: 1,
    lambda: 1,
    normalizeStd: true,
    clipRatio: 0.2,
    clipRatioHigh: 0.2,
    dualClip: 3,
    klCoef: 0.001,
    klType: 'low_var_kl',
    klInReward: false,
    entropyCoef: 0,
    valueClip: 0.2,
    valueCoef: 0.5,
    aggregation: 'token-mean',
    useActionMask: true,
    processRewards: false,
  },
  train: {
    steps: 200,
    promptsPerStep: 8,
    ppoEpochs: 1,
    miniBatchSize: 16,
    microBatchSize: 8,
    lr: 3e-4,
    criticLr: 1e-3,
    weightDecay: 0,
    gradClip: 1,
    warmupSteps: 10,
    schedule: 'constant',
  },
  sft: { steps: 0, demonstrations: 64, batchSize: 16, lr: 3e-3 },
  eval: { every: 25, examples: 64 },
  checkpoint: { dir: 'runs/agent-r1/checkpoints', every: 50, resume: false },
  log: { dir: 'runs/agent-r1', progress: 'auto' },
};

/** Named partial configs, applied over the defaults and under files and overrides. */
export const presets: Record<string, PartialTrainConfig> = {
  /** The defaults as they are. */
  default: {},
  /**
   * The quickstart (`npm run train`): a warm start that mostly guesses, then GRPO on the reveal task with a
   * 17-token vocabulary, where the policy learns to call the tool; under a minute on two cores.
   */
  reveal: {
    task: 'reveal',
    model: { dModel: 32, layers: 2, heads: 4, kvHeads: 2, maxLength: 16 },
    rollout: {
      n: 8,
      maxTurns: 3,
      maxTokensPerTurn: 4,
      maxLength: 16,
      maxObservationTokens: 4,
      temperature: 1,
    },
    algorithm: { name: 'grpo', klCoef: 0 },
    sft: { steps: 150, demonstrations: 128, batchSize: 64, lr: 0.003 },
    train: {
      steps: 40,
      promptsPerStep: 8,
      miniBatchSize: 64,
      microBatchSize: 64,
      lr: 0.0003,
      warmupSteps: 0,
    },
    eval: { every: 20, examples: 100 },
    checkpoint: { dir: 'runs/reveal/checkpoints', every: 20 },
    log: { dir: 'runs/reveal' },
  },
  /**
   * Multi-hop QA with the search tool (`agent-r1 train --preset multihop`): a warm start on scripted-searcher
   * demonstrations, then GRPO; about 15 minutes on two cores (measured: ~10 s per SFT step of 16
   * demonstrations, ~23 s per RL step of 16 trajectories; dModel 128 / 4 layers is about 4x slower).
   */
  multihop: {
    task: 'multihop-qa',
    model: { dModel: 64, layers: 2, heads: 4, kvHeads: 2, maxLength: 384 },
    rollout: {
      n: 4,
      maxTurns: 4,
      maxTokensPerTurn: 24,
      maxLength: 384,
      maxObservationTokens: 96,
      temperature: 1,
    },
    algorithm: { name: 'grpo', klCoef: 0 },
    sft: { steps: 40, demonstrations: 256, batchSize: 16, lr: 0.003 },
    train: {
      steps: 20,
      promptsPerStep: 4,
      miniBatchSize: 16,
      microBatchSize: 8,
      lr: 0.0001,
      warmupSteps: 0,
    },
    eval: { every: 10, examples: 32 },
    checkpoint: { dir: 'runs/multihop/checkpoints', every: 10 },
    log: { dir: 'runs/multihop' },
  },
  /** A run of seconds: checks that everything is wired, not that anything is learned. */
  smoke: {
    model: { dModel: 32, layers: 1, heads: 2, kvHeads: 1, maxLength: 256 },
    rollout: { n: 2, maxTurns: 2, maxTokensPerTurn: 16, maxLength: 256, maxObservationTokens: 48 },
    train: { steps: 2, promptsPerStep: 2, miniBatchSize: 4, microBatchSize: 2, warmupSteps: 0 },
    eval: { every: 0, examples: 4 },
    checkpoint: { dir: 'runs/smoke/checkpoints', every: 0 },
    log: { dir: 'runs/smoke' },
  },
};

// ---------------------------------------------------------------------------------------------------------
// Schema

type Field =
  | {
      kind: 'number';
      integer?: boolean;
      min?: number;
      /** `min` is exclusive. */
      above?: boolean;
      max?: number;
      optional?: boolean;
      /** A further rule: the requirement it states when it fails, else undefined. */
      check?: (v: number) => string | undefined;
    }
  | { kind: 'boolean' }
  | { kind: 'string'; nonEmpty?: boolean }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'object'; fields: Record<string, Field> };

type Shape<T> = { [K in keyof T]-?: Field };

const int = (min: number, extra: Partial<Extract<Field, { kind: 'number' }>> = {}): Field => ({
  kind: 'number',
  integer: true,
  min,
  ...extra,
});
const num = (extra: Partial<Extract<Field, { kind: 'number' }>> = {}): Field => ({
  kind: 'number',
  ...extra,
});
const bool: Field = { kind: 'boolean' };
const str: Field = { kind: 'string', nonEmpty: true };
const oneOf = (...values: string[]): Field => ({ kind: 'enum', values });
const obj = <T>(fields: Shape<T>): Field => ({ kind: 'object', fields });

const SCHEMA: Field = obj<TrainConfig>({
  seed: int(0),
  backend: str,
  task: str,
  model: obj<ModelConfig>({
    dModel: int(1),
    layers: int(1),
    heads: int(1),
    kvHeads: int(1),
    ffnHidden: int(1, { optional: true }),
    maxLength: int(1),
    activation: oneOf('swiglu', 'gelu'),
    norm: oneOf('rms', 'layer'),
    tiedEmbeddings: bool,
  }),
  critic: obj<CriticConfig>({ shareTrunk: bool }),
  rollout: obj<RolloutConfig>({
    n: int(1),
    maxTurns: int(1),
    maxTokensPerTurn: int(1),
    maxLength: int(1),
    maxObservationTokens: int(0),
    temperature: num({ min: 0 }),
    topK: int(0),
    topP: num({ min: 0, above: true, max: 1 }),
  }),
  algorithm: obj<AlgorithmConfig>({
    name: oneOf('grpo', 'ppo', 'reinforce++', 'reinforce++-baseline', 'rloo'),
    gamma: num({ min: 0, max: 1 }),
    lambda: num({ min: 0, max: 1 }),
    normalizeStd: bool,
    clipRatio: num({ min: 0, above: true }),
    clipRatioHigh: num({ min: 0, above: true }),
    dualClip: num({ check: (v) => (v === 0 || v > 1 ? undefined : 'must be 0 (off) or a number > 1') }),
    klCoef: num({ min: 0 }),
    klType: oneOf('k1', 'k3', 'low_var_kl'),
    klInReward: bool,
    entropyCoef: num({ min: 0 }),
    valueClip: num({ min: 0 }),
    valueCoef: num({ min: 0 }),
    aggregation: oneOf('token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'),
    useActionMask: bool,
    processRewards: bool,
  }),
  train: obj<TrainLoopConfig>({
    steps: int(0),
    promptsPerStep: int(1),
    ppoEpochs: int(1),
    miniBatchSize: int(1),
    microBatchSize: int(1),
    lr: num({ min: 0, above: true }),
    criticLr: num({ min: 0, above: true }),
    weightDecay: num({ min: 0 }),
    gradClip: num({ min: 0 }),
    warmupSteps: int(0),
    schedule: oneOf('constant', 'cosine', 'linear'),
  }),
  sft: obj<SftConfig>({
    steps: int(0),
    demonstrations: int(1),
    batchSize: int(1),
    lr: num({ min: 0, above: true }),
  }),
  eval: obj<EvalConfig>({ every: int(0), examples: int(0) }),
  checkpoint: obj<CheckpointConfig>({ dir: str, every: int(0), resume: bool }),
  log: obj<LogConfig>({ dir: str, progress: oneOf('auto', 'bar', 'lines', 'none') }),
});

/** A configuration error; `key` is the full dotted path it concerns, when it concerns one. */
export class ConfigError extends Error {
  readonly key: string | undefined;
  constructor(message: string, key?: string) {
    super(`config: ${message}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}

function show(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
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

/** Every key path of the schema ('model', 'model.dModel', ...). */
function allPaths(field: Field = SCHEMA, prefix = ''): string[] {
  if (field.kind !== 'object') return [];
  const out: string[] = [];
  for (const [k, f] of Object.entries(field.fields)) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.push(p, ...allPaths(f, p));
  }
  return out;
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

function suggestKey(path: string): string | undefined {
  const paths = allPaths();
  const depth = path.split('.').length;
  const sameDepth = paths.filter((p) => p.split('.').length === depth);
  const near = closest(path, sameDepth);
  if (near) return near;
  // A known leaf name in the wrong place: `lr` → `train.lr`.
  const leaf = path.split('.').pop()!;
  return (
    paths.find((p) => p.split('.').pop() === leaf) ??
    closest(
      leaf,
      paths.filter((p) => !p.includes('.')),
    )
  );
}

function unknownKey(path: string): ConfigError {
  const s = suggestKey(path);
  return new ConfigError(`unknown key ${show(path)}${s ? ` (did you mean ${show(s)}?)` : ''}`, path);
}

function fieldAt(path: string): Field | undefined {
  let field: Field | undefined = SCHEMA;
  for (const part of path.split('.')) {
    if (field?.kind !== 'object' || !Object.hasOwn(field.fields, part)) return undefined;
    field = field.fields[part];
  }
  return field;
}

function checkNumber(f: Extract<Field, { kind: 'number' }>, v: number, path: string): void {
  const what = f.integer ? 'an integer' : 'a number';
  const fail = (req: string) => new ConfigError(`${show(path)} ${req}, got ${show(v)}`, path);
  if (!Number.isFinite(v)) throw fail(`must be a finite number`);
  if (f.integer && !Number.isInteger(v)) throw fail(`must be an integer`);
  const lowOk = f.min === undefined || (f.above ? v > f.min : v >= f.min);
  const highOk = f.max === undefined || v <= f.max;
  if (!lowOk || !highOk) {
    if (f.min !== undefined && f.max !== undefined)
      throw fail(`must be ${what} in ${f.above ? '(' : '['}${f.min}, ${f.max}]`);
    if (f.min !== undefined) throw fail(`must be ${what} ${f.above ? '>' : '>='} ${f.min}`);
    throw fail(`must be ${what} <= ${f.max}`);
  }
  const extra = f.check?.(v);
  if (extra) throw fail(extra);
}

/**
 * Checks `value` against the schema at `path`. With `partial`, object keys may be missing (presets,
 * files, overrides); without, every required key must be there.
 */
function validate(field: Field, value: unknown, path: string, partial: boolean): void {
  const typeError = (what: string) =>
    new ConfigError(`${show(path)} must be ${what}, got ${kindOf(value)} ${show(value)}`, path);
  switch (field.kind) {
    case 'number':
      if (typeof value !== 'number') throw typeError('a number');
      checkNumber(field, value, path);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') throw typeError('a boolean (true or false)');
      return;
    case 'string':
      if (typeof value !== 'string') throw typeError('a string');
      if (field.nonEmpty && value.length === 0)
        throw new ConfigError(`${show(path)} must be a non-empty string`, path);
      return;
    case 'enum':
      if (typeof value !== 'string' || !field.values.includes(value)) {
        const near = typeof value === 'string' ? closest(value, field.values) : undefined;
        throw new ConfigError(
          `${show(path)} must be one of ${field.values.map((v) => show(v)).join(', ')}, got ${show(value)}` +
            (near ? ` (did you mean ${show(near)}?)` : ''),
          path,
        );
      }
      return;
    case 'object': {
      if (!isPlainObject(value)) {
        if (path === '') throw new ConfigError(`the config must be an object, got ${kindOf(value)}`);
        throw typeError('an object');
      }
      const join = (k: string) => (path ? `${path}.${k}` : k);
      for (const k of Object.keys(value)) {
        if (!Object.hasOwn(field.fields, k)) throw unknownKey(join(k));
      }
      for (const [k, f] of Object.entries(field.fields)) {
        const v = value[k];
        if (v === null && partial && f.kind === 'number' && f.optional) continue;
        if (v === undefined) {
          if (!partial && !(f.kind === 'number' && f.optional))
            throw new ConfigError(`${show(join(k))} is missing`, join(k));
          continue;
        }
        validate(f, v, join(k), partial);
      }
      return;
    }
  }
}

/** Relations between keys, checked on the merged config. */
function checkRelations(c: TrainConfig): void {
  const rel = (key: string, message: string) => new ConfigError(`${show(key)} ${message}`, key);
  if (c.model.dModel % c.model.heads !== 0)
    throw rel('model.dModel', `(${c.model.dModel}) must be a multiple of "model.heads" (${c.model.heads})`);
  if (c.model.heads % c.model.kvHeads !== 0)
    throw rel('model.heads', `(${c.model.heads}) must be a multiple of "model.kvHeads" (${c.model.kvHeads})`);
  if (c.rollout.maxLength > c.model.maxLength)
    throw rel(
      'rollout.maxLength',
      `(${c.rollout.maxLength}) must be <= "model.maxLength" (${c.model.maxLength})`,
    );
  if (c.rollout.maxTokensPerTurn > c.rollout.maxLength)
    throw rel(
      'rollout.maxTokensPerTurn',
      `(${c.rollout.maxTokensPerTurn}) must be <= "rollout.maxLength" (${c.rollout.maxLength})`,
    );
  if (c.train.microBatchSize > c.train.miniBatchSize)
    throw rel(
      'train.microBatchSize',
      `(${c.train.microBatchSize}) must be <= "train.miniBatchSize" (${c.train.miniBatchSize})`,
    );
}

/** Validates a complete config (types, ranges, enums, unknown keys, relations between keys). */
export function validateConfig(config: unknown): TrainConfig {
  validate(SCHEMA, config, '', false);
  checkRelations(config as TrainConfig);
  return config as TrainConfig;
}

/** Validates a partial config (a preset, a file's contents). */
export function validatePartialConfig(partial: unknown): PartialTrainConfig {
  validate(SCHEMA, partial, '', true);
  return partial as PartialTrainConfig;
}

// ---------------------------------------------------------------------------------------------------------
// Merging, files, overrides

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
