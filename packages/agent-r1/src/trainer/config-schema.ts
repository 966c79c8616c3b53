/** The config schema and its validation: every error names the full key path. */
import type {
  AlgorithmConfig,
  CheckpointConfig,
  CriticConfig,
  EvalConfig,
  LogConfig,
  ModelConfig,
  PartialTrainConfig,
  PretrainConfig,
  RolloutConfig,
  SftConfig,
  TrainConfig,
  TrainLoopConfig,
} from './config.js';

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
  init: { kind: 'string' },
  backend: str,
  cpuKernels: oneOf('wasm', 'typescript'),
  threads: int(0),
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
    copyHead: bool,
    copyMatch: bool,
    copyMatchGate: bool,
    copySourceGate: bool,
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
    greedySamples: int(0),
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
    filterGroups: bool,
    maxSampleRounds: int(1),
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
    minLrRatio: num({ min: 0, max: 1 }),
    renameEntities: num({ min: 0, max: 1 }),
    groups: { kind: 'string' },
    balanceKinds: num({ min: 0, max: 1 }),
    kindBoost: { kind: 'string' },
  }),
  pretrain: obj<PretrainConfig>({
    steps: int(0),
    batchSize: int(1),
    length: int(2),
    lr: num({ min: 0, above: true }),
    warmupSteps: int(0),
    schedule: oneOf('constant', 'cosine', 'linear'),
    minLrRatio: num({ min: 0, max: 1 }),
  }),
  sft: obj<SftConfig>({
    steps: int(0),
    demonstrations: int(1),
    batchSize: int(1),
    lr: num({ min: 0, above: true }),
    warmupSteps: int(0),
    schedule: oneOf('constant', 'cosine', 'linear'),
    minLrRatio: num({ min: 0, max: 1 }),
    contextWeight: num({ min: 0 }),
    renameEntities: num({ min: 0, max: 1 }),
    balanceKinds: num({ min: 0, max: 1 }),
    kindBoost: { kind: 'string' },
    successfulOnly: bool,
    emaDecay: num({ min: 0, check: (v) => (v < 1 ? undefined : 'must be a number in [0, 1)') }),
  }),
  eval: obj<EvalConfig>({
    every: int(0),
    examples: int(0),
    table: bool,
    testExamples: int(0),
    questions: { kind: 'string' },
    corpus: { kind: 'string' },
  }),
  checkpoint: obj<CheckpointConfig>({ dir: str, every: int(0), resume: bool }),
  log: obj<LogConfig>({
    dir: str,
    progress: oneOf('auto', 'bar', 'lines', 'none'),
    traceKernels: { kind: 'string' },
    traceSteps: { kind: 'string' },
    traceStage: oneOf('rl', 'warm-start', 'pretrain'),
  }),
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

/** Every key path of the schema ('model', 'model.dModel', ...). */
export function allPaths(field: Field = SCHEMA, prefix = ''): string[] {
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

export function unknownKey(path: string): ConfigError {
  const s = suggestKey(path);
  return new ConfigError(`unknown key ${show(path)}${s ? ` (did you mean ${show(s)}?)` : ''}`, path);
}

export function fieldAt(path: string): Field | undefined {
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
export function validate(field: Field, value: unknown, path: string, partial: boolean): void {
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
  if (c.rollout.greedySamples > c.rollout.n)
    throw rel(
      'rollout.greedySamples',
      `(${c.rollout.greedySamples}) must be <= "rollout.n" (${c.rollout.n})`,
    );
  // Only a stage that runs: a short model needs no shorter windows while pretraining is off.
  if (c.pretrain.steps > 0 && c.pretrain.length > c.model.maxLength)
    throw rel(
      'pretrain.length',
      `(${c.pretrain.length}) must be <= "model.maxLength" (${c.model.maxLength})`,
    );
  if (c.train.microBatchSize > c.train.miniBatchSize)
    throw rel(
      'train.microBatchSize',
      `(${c.train.microBatchSize}) must be <= "train.miniBatchSize" (${c.train.miniBatchSize})`,
    );
  traceStepRange(c.log.traceSteps);
}

/** "first-last", "n" or '' (every step) → the inclusive range of steps. */
export function traceStepRange(spec: string): [number, number] {
  if (spec.trim() === '') return [1, Number.POSITIVE_INFINITY];
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(spec);
  const first = Number(match?.[1]);
  const last = match?.[2] === undefined ? first : Number(match[2]);
  if (!match || first < 1 || last < first)
    throw new ConfigError(
      `log.traceSteps must be "first-last" or one step (steps count from 1), got "${spec}"`,
      'log.traceSteps',
    );
  return [first, last];
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
