/**
 * Checkpoints: a folder holding
 *
 *   model.safetensors      the model's parameters by dotted name ("blocks.0.attn.qkv.weight")
 *   optimizer.safetensors  the optimizer's buffers by "<param name>.<buffer>" ("fc.weight.m", "fc.weight.v"),
 *                          its step and groups as JSON in the metadata entry "optimizer"
 *   average.safetensors    (optional) a WeightAverage's sums by parameter name, its decay and update count
 *                          as JSON in the metadata entry "average"
 *   state.json             {format, version, step, generators: {name: {key, counter}}, state: <the trainer's>}
 *   <name>.model.safetensors, <name>.optimizer.safetensors
 *                          (optional) companion models saved with the main one, e.g. a frozen reference and
 *                          a critic with its optimizer: one folder, so they are always of the same step
 *   ...                    (optional) further files of the caller's, e.g. a description of what the model is
 *
 * saveCheckpoint writes everything into a temporary folder next to the target, flushed to disk, and renames
 * it into place, so a checkpoint folder is always complete: a crash leaves the previous checkpoint (or none)
 * plus a hidden temporary folder, never a half-written one.
 */
import { readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { type Generator, type Tensor, dispose, isFloat, noGrad } from '@agent-r1/tensor';
import type { Module } from '../module.js';
import type { Optimizer, OptimizerState, ParamNames } from '../optim/optimizer.js';
import type { WeightAverage, WeightAverageState } from '../optim/weight-average.js';
import { pathExists, replaceFolderAtomically, writeFileAtomic } from './atomic.js';
import { parseSafetensors, serializeSafetensorsAsync } from './safetensors.js';

export const MODEL_FILE = 'model.safetensors';
export const OPTIMIZER_FILE = 'optimizer.safetensors';
export const STATE_FILE = 'state.json';
export const AVERAGE_FILE = 'average.safetensors';
const CHECKPOINT_FILES = new Set([MODEL_FILE, OPTIMIZER_FILE, AVERAGE_FILE, STATE_FILE]);
const FORMAT = 'agent-r1-checkpoint';
const VERSION = 1;
const OPTIMIZER_METADATA_KEY = 'optimizer';
const AVERAGE_METADATA_KEY = 'average';

// biome-ignore lint/suspicious/noExplicitAny: any optimizer, whatever its hyper-parameters
type AnyOptimizer = Optimizer<any>;

export interface GeneratorState {
  key: [number, number];
  counter: number;
}

export interface SaveCheckpointOptions {
  model: Module;
  optimizer?: AnyOptimizer;
  /** A moving average of the model's weights, saved beside them. */
  average?: WeightAverage;
  /** Random generators whose positions to save (data order, dropout …), by a name of your choosing. */
  generators?: Record<string, Generator>;
  /** Anything else the trainer needs to resume (must survive JSON.stringify / JSON.parse). */
  state?: unknown;
  /**
   * Further files written into the folder with the rest, by plain file name (e.g. a description of the
   * model, its tokenizer), so that they appear and are replaced with the checkpoint, never apart from it.
   */
  files?: Record<string, string | Uint8Array>;
  /**
   * Further models saved in the same folder, each with its optimizer if given, by a name of your choosing
   * (lower-case letters, digits and '-'), e.g. `{ reference: { model }, critic: { model, optimizer } }`.
   */
  companions?: Record<string, Companion>;
}

/** A model saved or loaded beside the checkpoint's main model, with its optimizer if it has one. */
export interface Companion {
  model: Module;
  optimizer?: AnyOptimizer;
}

const COMPANION_NAME = /^[a-z][a-z0-9-]*$/;
const COMPANION_FILE = /^[a-z][a-z0-9-]*\.(model|optimizer)\.safetensors$/;
const companionFiles = (name: string) => ({
  model: `${name}.model.safetensors`,
  optimizer: `${name}.optimizer.safetensors`,
});

export interface LoadCheckpointOptions {
  model: Module;
  optimizer?: AnyOptimizer;
  /** A moving average of the model's weights to restore (the checkpoint must hold one). */
  average?: WeightAverage;
  /** Generators to move to their saved positions; each must be seeded as the saved one was. */
  generators?: Record<string, Generator>;
  /** Refuse missing, unexpected or mis-shaped model tensors (default true); see loadStateDict. */
  strict?: boolean;
  /** Companion models to restore (each must have been saved, with its optimizer where one is given). */
  companions?: Record<string, Companion>;
}

interface StateFile {
  format: string;
  version: number;
  step: number | null;
  generators: Record<string, GeneratorState>;
  state: unknown;
}

/** The model's parameters by name (the live tensors, not copies). */
export function stateDict(model: Module): Record<string, Tensor> {
  return Object.fromEntries(model.namedParameters());
}

/** Maps each of the model's parameters to its name, as optimizer states name them. */
export function parameterNames(model: Module): ParamNames {
  return new Map([...model.namedParameters()].map(([name, p]) => [p, name]));
}

export interface LoadStateDictResult {
  /** Parameters of the model with no tensor of that name. */
  missing: string[];
  /** Tensors that name no parameter of the model. */
  unexpected: string[];
  /** Tensors whose shape (or kind of dtype) does not match their parameter's. */
  mismatched: { name: string; expected: string; got: string }[];
}

const describe = (t: Tensor) => `[${t.shape.join(', ')}] ${t.dtype}`;
const isFloatTensor = (t: Tensor) => isFloat(t.dtype);

/** What loadStateDict would report, without copying anything. */
export function compareStateDict(model: Module, tensors: Record<string, Tensor>): LoadStateDictResult {
  const params = new Map(model.namedParameters());
  const result: LoadStateDictResult = { missing: [], unexpected: [], mismatched: [] };
  for (const [name, p] of params) {
    const t = tensors[name];
    if (!t) result.missing.push(name);
    else if (
      t.shape.length !== p.shape.length ||
      t.shape.some((d, i) => d !== p.shape[i]) ||
      (t.dtype !== p.dtype && !(isFloatTensor(t) && isFloatTensor(p)))
    )
      result.mismatched.push({ name, expected: describe(p), got: describe(t) });
  }
  for (const name of Object.keys(tensors)) if (!params.has(name)) result.unexpected.push(name);
  return result;
}

function isClean(r: LoadStateDictResult): boolean {
  return !r.missing.length && !r.unexpected.length && !r.mismatched.length;
}

function formatProblems(r: LoadStateDictResult): string {
  const parts: string[] = [];
  if (r.missing.length) parts.push(`missing: ${r.missing.join(', ')}`);
  if (r.unexpected.length) parts.push(`unexpected: ${r.unexpected.join(', ')}`);
  if (r.mismatched.length)
    parts.push(
      `mis-shaped: ${r.mismatched.map((m) => `${m.name} (model ${m.expected}, got ${m.got})`).join(', ')}`,
    );
  return parts.join('; ');
}

/**
 * Copies tensors into the model's parameters of the same names (in place, under noGrad; float dtypes
 * convert, e.g. a bfloat16 file into float32 parameters). With `strict` (the default) any missing,
 * unexpected or mis-shaped tensor throws one error naming them all, before anything is copied; otherwise the
 * tensors that fit are copied and the rest are returned. The caller still owns `tensors`.
 */
export function loadStateDict(
  model: Module,
  tensors: Record<string, Tensor>,
  options: { strict?: boolean; source?: string } = {},
): LoadStateDictResult {
  const result = compareStateDict(model, tensors);
  if ((options.strict ?? true) && !isClean(result))
    throw new Error(
      `loadStateDict${options.source ? ` (${options.source})` : ''}: ${formatProblems(result)}`,
    );
  const skip = new Set(result.mismatched.map((m) => m.name));
  noGrad(() => {
    for (const [name, p] of model.namedParameters()) {
      const src = tensors[name];
      if (!src || skip.has(name)) continue;
      const onDevice = src.device === p.device ? src : src.to(p.device);
      p.copy_(onDevice);
      if (onDevice !== src) onDevice.dispose();
    }
  });
  return result;
}

function generatorState(g: Generator): GeneratorState {
  const { key, counter } = g.state;
  return { key: [key[0], key[1]], counter };
}

/** A safetensors file of `tensors` whose metadata entry `key` holds `meta` as JSON. */
function encodeWithMetadata(
  tensors: Record<string, Tensor>,
  key: string,
  meta: unknown,
): Promise<Uint8Array> {
  return serializeSafetensorsAsync(tensors, { format: FORMAT, [key]: JSON.stringify(meta) });
}

/** Serializes everything first, so that a failure (a disposed tensor, state that is not JSON) writes nothing. */
async function encodeCheckpoint(contents: SaveCheckpointOptions): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  files.set(MODEL_FILE, await serializeSafetensorsAsync(stateDict(contents.model), { format: FORMAT }));
  if (contents.optimizer) {
    const { tensors, ...meta } = contents.optimizer.state(parameterNames(contents.model));
    files.set(OPTIMIZER_FILE, await encodeWithMetadata(tensors, OPTIMIZER_METADATA_KEY, meta));
  }
  if (contents.average) {
    const { tensors, ...meta } = contents.average.state(parameterNames(contents.model));
    files.set(AVERAGE_FILE, await encodeWithMetadata(tensors, AVERAGE_METADATA_KEY, meta));
  }
  const generators = Object.fromEntries(
    Object.entries(contents.generators ?? {}).map(([name, g]) => [name, generatorState(g)]),
  );
  const state: StateFile = {
    format: FORMAT,
    version: VERSION,
    step: contents.optimizer?.steps ?? null,
    generators,
    state: contents.state ?? null,
  };
  let json: string;
  try {
    json = JSON.stringify(state, null, 2);
  } catch (err) {
    throw new Error(`saveCheckpoint: the state cannot be written as JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  files.set(STATE_FILE, new TextEncoder().encode(`${json}\n`));
  for (const [name, c] of Object.entries(contents.companions ?? {})) {
    if (!COMPANION_NAME.test(name))
      throw new Error(
        `saveCheckpoint: companion '${name}' needs a name of lower-case letters, digits and '-'`,
      );
    const names = companionFiles(name);
    files.set(names.model, await serializeSafetensorsAsync(stateDict(c.model), { format: FORMAT }));
    if (c.optimizer) {
      const { tensors, ...meta } = c.optimizer.state(parameterNames(c.model));
      files.set(names.optimizer, await encodeWithMetadata(tensors, OPTIMIZER_METADATA_KEY, meta));
    }
  }
  for (const [name, data] of Object.entries(contents.files ?? {})) {
    if (CHECKPOINT_FILES.has(name) || name === '' || /[\\/]/.test(name) || name.startsWith('.'))
      throw new Error(`saveCheckpoint: files: '${name}' is not a plain file name of the caller's own`);
    files.set(name, typeof data === 'string' ? new TextEncoder().encode(data) : data);
  }
  return files;
}

/**
 * Saves model parameters, optimizer state, generator positions and the trainer's JSON state into the folder
 * `dir`, replacing the checkpoint there (a folder holding anything but checkpoint files is refused, not
 * replaced). The folder appears complete or not at all.
 */
export async function saveCheckpoint(dir: string, contents: SaveCheckpointOptions): Promise<void> {
  const files = await encodeCheckpoint(contents);
  if (await pathExists(dir)) {
    const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`saveCheckpoint: ${dir} exists and is not a checkpoint folder (${err.code})`, {
        cause: err,
      });
    });
    // The caller's own files of this save may replace those of the last one.
    const foreign = entries.filter(
      (e) => !CHECKPOINT_FILES.has(e) && !files.has(e) && !COMPANION_FILE.test(e),
    );
    if (foreign.length)
      throw new Error(
        `saveCheckpoint: ${dir} holds files that are not part of a checkpoint (${foreign.join(', ')}); refusing to replace it`,
      );
  }
  await replaceFolderAtomically(dir, async (tmp) => {
    for (const [name, bytes] of files) await writeFileAtomic(join(tmp, name), bytes);
  });
}

async function readCheckpointFile(dir: string, name: string): Promise<Uint8Array> {
  try {
    return await readFile(join(dir, name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(`loadCheckpoint: ${dir} has no ${name}`, { cause: err });
    throw err;
  }
}

type OptimizerMeta = Omit<OptimizerState, 'tensors'>;
type AverageMeta = Omit<WeightAverageState, 'tensors'>;

/**
 * The tensors of `dir/name` and the JSON of its metadata entry `key`. Errors name the file and the entry;
 * a failed read leaves no tensor alive.
 */
async function readWithMetadata<M>(
  dir: string,
  name: string,
  key: string,
): Promise<{ tensors: Record<string, Tensor>; meta: M }> {
  const path = join(dir, name);
  const parsed = parseSafetensors(await readCheckpointFile(dir, name), { source: path });
  try {
    const meta = parsed.metadata[key];
    if (meta === undefined) throw new Error(`loadCheckpoint: ${path} has no '${key}' metadata`);
    let json: unknown;
    try {
      json = JSON.parse(meta);
    } catch (err) {
      throw new Error(
        `loadCheckpoint: ${path}: its '${key}' metadata is not valid JSON (${(err as Error).message})`,
      );
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw new Error(`loadCheckpoint: ${path}: its '${key}' metadata must be a JSON object`);
    return { tensors: parsed.tensors, meta: json as M };
  } catch (err) {
    dispose(parsed.tensors);
    throw err;
  }
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isKeyWord = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 2 ** 32;

/** Checks every field of a state file; an error names the file and the field. */
function checkStateFile(state: unknown, path: string): StateFile {
  const bad = (field: string, rule: string) =>
    new Error(`loadCheckpoint: ${path}: "${field}" must be ${rule}`);
  if (typeof state !== 'object' || state === null || Array.isArray(state))
    throw new Error(`loadCheckpoint: ${path} must hold a JSON object`);
  const s = state as Record<string, unknown>;
  if (s.format !== FORMAT || s.version !== VERSION)
    throw new Error(`loadCheckpoint: ${path} is not a version-${VERSION} ${FORMAT} state file`);
  if (s.step !== null && !isCount(s.step)) throw bad('step', 'null or a whole number >= 0');
  if (typeof s.generators !== 'object' || s.generators === null || Array.isArray(s.generators))
    throw bad('generators', 'an object');
  for (const [name, g] of Object.entries(s.generators as Record<string, unknown>)) {
    const saved = g as Partial<GeneratorState> | null;
    if (!Array.isArray(saved?.key) || saved.key.length !== 2 || !saved.key.every(isKeyWord))
      throw bad(`generators.${name}.key`, 'two 32-bit whole numbers');
    if (!isCount(saved.counter)) throw bad(`generators.${name}.counter`, 'a whole number >= 0');
  }
  if (!('state' in s)) throw bad('state', 'present (null for none)');
  return s as unknown as StateFile;
}

function parseStateFile(bytes: Uint8Array, path: string): StateFile {
  let state: unknown;
  try {
    state = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw new Error(`loadCheckpoint: ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  return checkStateFile(state, path);
}

/** The trainer's JSON state of a checkpoint (state.json alone: no tensors are read). */
export async function readCheckpointState<S = unknown>(dir: string): Promise<S> {
  return parseStateFile(await readCheckpointFile(dir, STATE_FILE), join(dir, STATE_FILE)).state as S;
}

/** One model of a checkpoint read and checked, not yet loaded. */
interface ReadPart {
  model: Module;
  tensors: Record<string, Tensor>;
  source: string;
  optimizer?: { target: AnyOptimizer; state: OptimizerState };
}

/** Reads `modelFile` (and `optimizerFile` when an optimizer is given) for `c`, checking they fit it. */
async function readPart(
  dir: string,
  c: Companion,
  files: { model: string; optimizer: string },
  strict: boolean,
  held: Record<string, Tensor>[],
): Promise<ReadPart> {
  const source = join(dir, files.model);
  const tensors = parseSafetensors(await readCheckpointFile(dir, files.model), { source }).tensors;
  held.push(tensors);
  const part: ReadPart = { model: c.model, tensors, source };
  if (c.optimizer) {
    const read = await readWithMetadata<OptimizerMeta>(dir, files.optimizer, OPTIMIZER_METADATA_KEY);
    held.push(read.tensors);
    const state = { ...read.meta, tensors: read.tensors } as OptimizerState;
    try {
      c.optimizer.checkState(state, parameterNames(c.model));
    } catch (err) {
      throw new Error(`loadCheckpoint: ${join(dir, files.optimizer)}: ${(err as Error).message}`);
    }
    part.optimizer = { target: c.optimizer, state };
  }
  const problems = compareStateDict(c.model, tensors);
  if (strict && !isClean(problems)) throw new Error(`loadStateDict (${source}): ${formatProblems(problems)}`);
  return part;
}

/**
 * Loads a checkpoint written by saveCheckpoint into an existing model (and optimizer, average, generators
 * and companion models), checking everything before changing anything, and returns the trainer's JSON
 * state. A failed load changes nothing and leaves no tensor alive.
 */
export async function loadCheckpoint<S = unknown>(dir: string, options: LoadCheckpointOptions): Promise<S> {
  const statePath = join(dir, STATE_FILE);
  const state = parseStateFile(await readCheckpointFile(dir, STATE_FILE), statePath);
  const strict = options.strict ?? true;
  const held: Record<string, Tensor>[] = [];
  try {
    const main = { model: options.model, optimizer: options.optimizer };
    const parts = [await readPart(dir, main, { model: MODEL_FILE, optimizer: OPTIMIZER_FILE }, strict, held)];
    for (const [name, c] of Object.entries(options.companions ?? {}))
      parts.push(await readPart(dir, c, companionFiles(name), strict, held));
    let averageState: WeightAverageState | null = null;
    if (options.average) {
      const read = await readWithMetadata<AverageMeta>(dir, AVERAGE_FILE, AVERAGE_METADATA_KEY);
      held.push(read.tensors);
      averageState = { ...read.meta, tensors: read.tensors } as WeightAverageState;
      options.average.checkState(averageState, parameterNames(options.model));
    }
    const positions: [Generator, number][] = [];
    for (const [name, g] of Object.entries(options.generators ?? {})) {
      const saved = state.generators[name];
      if (!saved) throw new Error(`loadCheckpoint: ${statePath} saved no generator '${name}'`);
      const key = g.state.key;
      if (saved.key[0] !== key[0] || saved.key[1] !== key[1])
        throw new Error(
          `loadCheckpoint: generator '${name}' has key [${key}] but the saved one had [${saved.key}]; seed it as it was seeded`,
        );
      positions.push([g, saved.counter]);
    }
    // Everything checked: now change things.
    for (const part of parts) {
      loadStateDict(part.model, part.tensors, { strict: false, source: part.source });
      part.optimizer?.target.loadState(part.optimizer.state, parameterNames(part.model));
    }
    if (options.average && averageState)
      options.average.loadState(averageState, parameterNames(options.model));
    for (const [g, counter] of positions) g.position = counter;
    return state.state as S;
  } finally {
    for (const tensors of held) dispose(tensors);
  }
}

/**
 * Puts a checkpoint folder right after a save was interrupted: saveCheckpoint moves the old folder aside
 * (`.<name>.old-*`) just before it renames the new one (`.<name>.tmp-*`) into place, so a kill between the
 * two leaves no folder but a complete old one, which is moved back; unfinished new folders and old ones
 * whose replacement is in place are removed. Returns what it did, for a log line.
 */
export async function recoverCheckpoint(dir: string): Promise<string[]> {
  const parent = dirname(dir);
  const name = basename(dir);
  const entries = await readdir(parent).catch(() => [] as string[]);
  const mine = (tag: string) =>
    entries.filter((e) => e.startsWith(`.${name}.${tag}-`)).map((e) => join(parent, e));
  const done: string[] = [];
  // The newest old folder first: that is the checkpoint the interrupted save was replacing.
  const mtimes = new Map(
    await Promise.all(mine('old').map(async (p) => [p, (await stat(p)).mtimeMs] as const)),
  );
  const olds = [...mtimes.keys()].sort((a, b) => mtimes.get(b)! - mtimes.get(a)!);
  if (!(await pathExists(dir)) && olds.length > 0) {
    await rename(olds[0], dir);
    done.push(`restored ${dir} from an interrupted save`);
    olds.shift();
  }
  for (const leftover of [...mine('tmp'), ...olds]) {
    await rm(leftover, { recursive: true, force: true });
    done.push(`removed ${leftover}`);
  }
  return done;
}
