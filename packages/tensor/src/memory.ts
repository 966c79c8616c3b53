/**
 * Ownership. A storage is shared by every tensor that views it and freed when the last one is disposed.
 * `tidy(fn)` disposes every tensor created inside fn except what fn returns and what is `keep()`-ed; the
 * autograd graph holds its own references to the tensors it saved, so backward still works after a tidy.
 */
import type { Backend, Storage } from './backend/backend.js';
import { bytesPerElement } from './dtype.js';

interface Disposable {
  dispose(): void;
  readonly isDisposed: boolean;
}

interface Counts {
  storages: number;
  bytes: number;
}

const perBackend = new Map<string, Counts>();
let liveTensors = 0;

export class StorageRef {
  private refs = 1;
  readonly bytes: number;

  constructor(
    readonly backend: Backend,
    readonly storage: Storage,
  ) {
    this.bytes = storage.size * bytesPerElement(storage.dtype);
    const c = countsOf(backend.name);
    c.storages++;
    c.bytes += this.bytes;
  }

  retain(): this {
    this.refs++;
    return this;
  }

  release(): void {
    if (--this.refs > 0) return;
    this.backend.free(this.storage);
    const c = countsOf(this.backend.name);
    c.storages--;
    c.bytes -= this.bytes;
  }
}

function countsOf(name: string): Counts {
  let c = perBackend.get(name);
  if (!c) {
    c = { storages: 0, bytes: 0 };
    perBackend.set(name, c);
  }
  return c;
}

export function countTensor(delta: 1 | -1): void {
  liveTensors += delta;
}

export interface MemoryReport {
  /** Tensor handles not yet disposed (views count separately from the storage they share). */
  tensors: number;
  /** Live storages and their bytes, all backends together and per backend. */
  storages: number;
  bytes: number;
  backends: Record<string, Counts>;
}

export function memory(): MemoryReport {
  const backends: Record<string, Counts> = {};
  let storages = 0;
  let bytes = 0;
  for (const [name, c] of perBackend) {
    backends[name] = { ...c };
    storages += c.storages;
    bytes += c.bytes;
  }
  return { tensors: liveTensors, storages, bytes, backends };
}

const scopes: Set<Disposable>[] = [];

/** Called for every new tensor: the innermost tidy scope will dispose it unless it escapes. */
export function track(t: Disposable): void {
  scopes[scopes.length - 1]?.add(t);
}

/** Exempts a tensor from every enclosing tidy scope. */
export function keep<T extends Disposable>(t: T): T {
  for (const scope of scopes) scope.delete(t);
  return t;
}

/** Runs fn and disposes every tensor it created, except those reachable from its result. */
export function tidy<T>(fn: () => T): T {
  const scope = new Set<Disposable>();
  scopes.push(scope);
  let result: T;
  try {
    result = fn();
    if (result instanceof Promise) {
      throw new Error(
        'tidy: fn returned a Promise; tidy only scopes synchronous code (dispose tensors by hand across awaits)',
      );
    }
  } catch (err) {
    scopes.pop();
    for (const t of scope) t.dispose();
    throw err;
  }
  scopes.pop();
  const escaping = new Set<Disposable>();
  collect(result, escaping);
  for (const t of scope) if (!escaping.has(t)) t.dispose();
  const parent = scopes[scopes.length - 1];
  if (parent) for (const t of escaping) if (scope.has(t)) parent.add(t);
  return result;
}

/** Finds the tensors in a result: a tensor, or arrays and plain objects holding them. */
function collect(value: unknown, into: Set<Disposable>): void {
  if (value === null || typeof value !== 'object') return;
  if ('dispose' in value && 'isDisposed' in value) {
    into.add(value as Disposable);
    return;
  }
  if (Array.isArray(value)) for (const v of value) collect(v, into);
  else if (value instanceof Map) for (const v of value.values()) collect(v, into);
  else {
    // Plain records, null-prototype ones included (safetensors' parsers return those, so that no tensor
    // name can reach a prototype).
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) for (const v of Object.values(value)) collect(v, into);
  }
}

/** Disposes every tensor in a value (a tensor, array or object of tensors). */
export function dispose(value: unknown): void {
  const found = new Set<Disposable>();
  collect(value, found);
  for (const t of found) t.dispose();
}
