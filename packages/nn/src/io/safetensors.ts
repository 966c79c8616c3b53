/**
 * The safetensors format (https://github.com/huggingface/safetensors), read and written exactly:
 *
 *   8 bytes   N, the header length, a little-endian unsigned 64-bit integer
 *   N bytes   a UTF-8 JSON object {"__metadata__": {string: string}, "<name>": {"dtype": "F32",
 *             "shape": [2, 3], "data_offsets": [begin, end]}, …}, padded with spaces to a multiple of 8
 *   the rest  the tensors' bytes, little-endian, row-major; offsets count from the end of the header, and the
 *             tensors cover it exactly (no gap, no overlap, nothing after the last one)
 *
 * Written like the reference implementation: tensors ordered by dtype (widest first) then name, so that every
 * tensor is aligned to its element size; `__metadata__` first, omitted when not given. F32, F64, F16, BF16,
 * I32 and BOOL (one byte, 0 or 1) map to our dtypes (F16 and BF16 become float32 on a device that cannot
 * store half dtypes); reading also accepts I8, U8, I16, U16, U32, I64, U64 (as int32, when every value fits).
 */
import { type FileHandle, open, readFile } from 'node:fs/promises';
import {
  type DType,
  type Tensor,
  type TypedArray,
  decodeHalf,
  getBackend,
  getDefaultDevice,
  isHalf,
  tensor,
} from '@agent-r1/tensor';
import { writeFileAtomicStreaming } from './atomic.js';

export type SafetensorsMetadata = Record<string, string>;

export interface ParsedSafetensors {
  tensors: Record<string, Tensor>;
  metadata: SafetensorsMetadata;
}

export interface ParseOptions {
  /** What to call the bytes in error messages (loadSafetensors passes the path). */
  source?: string;
  /** Where to put the tensors (default: the default device). */
  device?: string;
}

/** The reference implementation refuses headers over 100 MB. */
const MAX_HEADER_BYTES = 100_000_000;
const METADATA_KEY = '__metadata__';

const WRITE_DTYPE: Record<DType, string> = {
  float64: 'F64',
  float32: 'F32',
  int32: 'I32',
  bfloat16: 'BF16',
  float16: 'F16',
  bool: 'BOOL',
};
/** The reference sorts by its dtype enum, last first; among ours that is F64, F32, I32, BF16, F16, BOOL. */
const WRITE_RANK: Record<DType, number> = {
  float64: 0,
  float32: 1,
  int32: 2,
  bfloat16: 3,
  float16: 4,
  bool: 5,
};

interface ReadDtype {
  bytes: number;
  dtype: DType;
  /** Decodes `n` elements from little-endian bytes, or returns the reason it cannot. */
  decode(bytes: Uint8Array, n: number): TypedArray | string;
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A fresh, aligned copy of the bytes with each `width`-byte element in host order. */
function hostOrder(bytes: Uint8Array, width: number): ArrayBuffer {
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  if (!LITTLE_ENDIAN_HOST && width > 1) {
    for (let i = 0; i < out.length; i += width) out.subarray(i, i + width).reverse();
  }
  return out.buffer;
}

function direct(dtype: DType, width: number, make: (b: ArrayBuffer) => TypedArray): ReadDtype {
  return { bytes: width, dtype, decode: (bytes) => make(hostOrder(bytes, width)) };
}

function toInt32(width: number, read: (v: DataView, i: number) => number | bigint): ReadDtype {
  return {
    bytes: width,
    dtype: 'int32',
    decode(bytes, n) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const v = Number(read(view, i * width));
        if (v < -2147483648 || v > 2147483647)
          return `element ${i} is ${read(view, i * width)}, outside the int32 range it is read into`;
        out[i] = v;
      }
      return out;
    },
  };
}

const READ_DTYPES: Record<string, ReadDtype> = {
  F64: direct('float64', 8, (b) => new Float64Array(b)),
  F32: direct('float32', 4, (b) => new Float32Array(b)),
  I32: direct('int32', 4, (b) => new Int32Array(b)),
  BOOL: {
    bytes: 1,
    dtype: 'bool',
    decode(bytes) {
      const bad = bytes.findIndex((b) => b > 1);
      return bad >= 0 ? `element ${bad} is the byte ${bytes[bad]}, not 0 or 1` : new Uint8Array(bytes);
    },
  },
  F16: direct('float16', 2, (b) => new Uint16Array(b)),
  BF16: direct('bfloat16', 2, (b) => new Uint16Array(b)),
  I8: toInt32(1, (v, o) => v.getInt8(o)),
  U8: toInt32(1, (v, o) => v.getUint8(o)),
  I16: toInt32(2, (v, o) => v.getInt16(o, true)),
  U16: toInt32(2, (v, o) => v.getUint16(o, true)),
  U32: toInt32(4, (v, o) => v.getUint32(o, true)),
  I64: toInt32(8, (v, o) => v.getBigInt64(o, true)),
  U64: toInt32(8, (v, o) => v.getBigUint64(o, true)),
};

// ---- writing ----

interface Entry {
  name: string;
  dtype: DType;
  shape: readonly number[];
  data: TypedArray;
}

/**
 * A name that, used as a key of an ordinary object, would set its prototype instead of an entry: a
 * checkpoint's `tensors['__proto__'] = t` would hide the tensor from every `Object.keys` check.
 */
const FORBIDDEN_NAME = '__proto__';

function checkMetadata(metadata: SafetensorsMetadata | undefined, where: string): void {
  if (metadata === undefined) return;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    throw new Error(`safetensors: ${where}: metadata must be an object of strings`);
  for (const [k, v] of Object.entries(metadata)) {
    if (k === FORBIDDEN_NAME)
      throw new Error(`safetensors: ${where}: '${FORBIDDEN_NAME}' cannot name a metadata entry`);
    if (typeof v !== 'string')
      throw new Error(
        `safetensors: ${where}: metadata '${k}' is ${typeof v}; metadata values must be strings`,
      );
  }
}

function entriesOf(tensors: Record<string, Tensor>, where: string): [string, Tensor][] {
  const list = Object.entries(tensors);
  for (const [name, t] of list) {
    if (name === METADATA_KEY)
      throw new Error(`safetensors: ${where}: '${METADATA_KEY}' cannot name a tensor`);
    if (name === FORBIDDEN_NAME)
      throw new Error(`safetensors: ${where}: '${FORBIDDEN_NAME}' cannot name a tensor`);
    if (t.isDisposed) throw new Error(`safetensors: ${where}: tensor '${name}' was disposed`);
    if (!(t.dtype in WRITE_DTYPE))
      throw new Error(
        `safetensors: ${where}: tensor '${name}' has dtype ${t.dtype}, which cannot be written`,
      );
  }
  return list;
}

interface Layout {
  /** The entries in file order (widest dtype first, then by name), as the reference writes them. */
  sorted: { name: string; dtype: DType; bytes: number }[];
  /** The 8-byte length and the padded JSON header. */
  head: Uint8Array;
  /** Bytes of tensor data after the header. */
  dataLength: number;
}

function layout(
  entries: { name: string; dtype: DType; shape: readonly number[]; bytes: number }[],
  metadata: SafetensorsMetadata | undefined,
): Layout {
  const sorted = [...entries].sort(
    (a, b) => WRITE_RANK[a.dtype] - WRITE_RANK[b.dtype] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const parts: string[] = [];
  if (metadata !== undefined) parts.push(`${JSON.stringify(METADATA_KEY)}:${JSON.stringify(metadata)}`);
  let offset = 0;
  for (const e of sorted) {
    const end = offset + e.bytes;
    const info = { dtype: WRITE_DTYPE[e.dtype], shape: [...e.shape], data_offsets: [offset, end] };
    parts.push(`${JSON.stringify(e.name)}:${JSON.stringify(info)}`);
    offset = end;
  }
  const json = new TextEncoder().encode(`{${parts.join(',')}}`);
  const headerLength = json.length + ((8 - (json.length % 8)) % 8);
  const head = new Uint8Array(8 + headerLength);
  new DataView(head.buffer).setBigUint64(0, BigInt(headerLength), true);
  head.set(json, 8);
  head.fill(0x20, 8 + json.length);
  return { sorted, head, dataLength: offset };
}

/** The little-endian bytes of a tensor's data (a view on little-endian hosts). */
function littleEndianBytes(data: TypedArray): Uint8Array {
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const width = data.BYTES_PER_ELEMENT;
  if (LITTLE_ENDIAN_HOST || width === 1) return raw;
  const out = raw.slice();
  for (let i = 0; i < out.length; i += width) out.subarray(i, i + width).reverse();
  return out;
}

const sizeOfEntry = (t: { shape: readonly number[]; dtype: DType }) =>
  t.shape.reduce((a, b) => a * b, 1) * BYTES_PER[t.dtype];

const BYTES_PER: Record<DType, number> = {
  float64: 8,
  float32: 4,
  int32: 4,
  bfloat16: 2,
  float16: 2,
  bool: 1,
};

/** The file's bytes, from tensors whose data was already read. */
function encode(entries: Entry[], metadata: SafetensorsMetadata | undefined): Uint8Array {
  const plan = layout(
    entries.map((e) => ({ ...e, bytes: e.data.byteLength })),
    metadata,
  );
  const byName = new Map(entries.map((e) => [e.name, e]));
  const out = new Uint8Array(plan.head.length + plan.dataLength);
  out.set(plan.head);
  let at = plan.head.length;
  for (const { name } of plan.sorted) {
    const raw = littleEndianBytes(byName.get(name)!.data);
    out.set(raw, at);
    at += raw.length;
  }
  return out;
}

/** The safetensors bytes of `tensors` (read synchronously: CPU tensors; saveSafetensors reads any device). */
export function serializeSafetensors(
  tensors: Record<string, Tensor>,
  metadata?: SafetensorsMetadata,
): Uint8Array {
  checkMetadata(metadata, 'serialize');
  const entries = entriesOf(tensors, 'serialize').map(([name, t]) => ({
    name,
    dtype: t.dtype,
    shape: t.shape,
    data: t.rawDataSync(),
  }));
  return encode(entries, metadata);
}

/** Like serializeSafetensors, reading the tensors with `await data()` (works on every backend). */
export async function serializeSafetensorsAsync(
  tensors: Record<string, Tensor>,
  metadata?: SafetensorsMetadata,
): Promise<Uint8Array> {
  checkMetadata(metadata, 'serialize');
  const entries: Entry[] = [];
  for (const [name, t] of entriesOf(tensors, 'serialize'))
    entries.push({ name, dtype: t.dtype, shape: t.shape, data: await t.rawData() });
  return encode(entries, metadata);
}

/** A tensor to write, read only when its turn comes (so a writer can cast or fetch one tensor at a time). */
export interface SafetensorsSource {
  name: string;
  dtype: DType;
  shape: readonly number[];
  /** The tensor's elements, row-major (what `rawData()` gives). */
  data(): Promise<TypedArray>;
}

/**
 * Writes tensors (and string metadata) to a .safetensors file, atomically, one tensor at a time: the file is
 * never whole in memory, so a model can be saved beside its own weights (a 6 GB file needs no 6 GB buffer).
 */
export async function saveSafetensors(
  path: string,
  tensors: Record<string, Tensor>,
  metadata?: SafetensorsMetadata,
): Promise<void> {
  let sources: SafetensorsSource[];
  try {
    sources = entriesOf(tensors, 'serialize').map(([name, t]) => ({
      name,
      dtype: t.dtype,
      shape: t.shape,
      data: () => t.rawData(),
    }));
  } catch (err) {
    throw new Error(`${(err as Error).message} (writing ${path})`, { cause: err });
  }
  await writeSafetensors(path, sources, metadata);
}

/** Writes tensors given as sources (see SafetensorsSource) to a .safetensors file, atomically. */
export async function writeSafetensors(
  path: string,
  sources: readonly SafetensorsSource[],
  metadata?: SafetensorsMetadata,
): Promise<void> {
  const where = (err: Error) => new Error(`${err.message} (writing ${path})`, { cause: err });
  let plan: Layout;
  const byName = new Map<string, SafetensorsSource>();
  try {
    checkMetadata(metadata, 'serialize');
    for (const s of sources) {
      if (s.name === METADATA_KEY || s.name === FORBIDDEN_NAME)
        throw new Error(`safetensors: serialize: '${s.name}' cannot name a tensor`);
      if (byName.has(s.name)) throw new Error(`safetensors: serialize: tensor '${s.name}' is given twice`);
      if (!(s.dtype in WRITE_DTYPE))
        throw new Error(
          `safetensors: serialize: tensor '${s.name}' has dtype ${s.dtype}, which cannot be written`,
        );
      byName.set(s.name, s);
    }
    plan = layout(
      sources.map((s) => ({ name: s.name, dtype: s.dtype, shape: s.shape, bytes: sizeOfEntry(s) })),
      metadata,
    );
  } catch (err) {
    throw where(err as Error);
  }
  await writeFileAtomicStreaming(path, async (write) => {
    await write(plan.head);
    for (const { name, bytes } of plan.sorted) {
      const data = await byName
        .get(name)!
        .data()
        .catch((err: Error) => {
          throw where(new Error(`safetensors: serialize: tensor '${name}': ${err.message}`));
        });
      if (data.byteLength !== bytes)
        throw where(
          new Error(`safetensors: serialize: tensor '${name}' gave ${data.byteLength} bytes, not ${bytes}`),
        );
      await write(littleEndianBytes(data));
    }
  });
}

// ---- reading ----

interface HeaderEntry {
  name: string;
  read: ReadDtype;
  dtypeName: string;
  shape: number[];
  begin: number;
  end: number;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The header's length from the file's first 8 bytes, checked against the limit and the file's size. */
function headerLengthOf(first: Uint8Array, fileSize: number, source: string): number {
  const fail = (why: string): never => {
    throw new Error(`safetensors: ${source}: ${why}`);
  };
  if (fileSize < 8) fail(`${fileSize} bytes is too short for the 8-byte header length`);
  const n = new DataView(first.buffer, first.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) fail(`header length ${n} exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  const headerLength = Number(n);
  if (8 + headerLength > fileSize)
    fail(`header length ${headerLength} runs past the end of the ${fileSize}-byte file`);
  return headerLength;
}

/** Checks the header and the layout against the file's size; returns the tensors and the data's start. */
function parseHeader(
  bytes: Uint8Array,
  source: string,
): { entries: HeaderEntry[]; metadata: SafetensorsMetadata; dataStart: number } {
  const headerLength = headerLengthOf(bytes, bytes.length, source);
  const parsed = parseHeaderJson(
    bytes.subarray(8, 8 + headerLength),
    bytes.length - 8 - headerLength,
    source,
  );
  return { ...parsed, dataStart: 8 + headerLength };
}

/** Checks the JSON header and the layout it gives against the `dataLength` bytes that follow it. */
function parseHeaderJson(
  headerBytes: Uint8Array,
  dataLength: number,
  source: string,
): { entries: HeaderEntry[]; metadata: SafetensorsMetadata } {
  const fail = (why: string): never => {
    throw new Error(`safetensors: ${source}: ${why}`);
  };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  } catch {
    return fail('the header is not valid UTF-8');
  }
  if (!text.startsWith('{'))
    fail(`the header does not start with '{' (got ${JSON.stringify(text.slice(0, 20))})`);
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (err) {
    return fail(`the header is not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(header)) return fail('the header is not a JSON object');

  // Null-prototype records: every name read is an own entry, whatever it is.
  const metadata: SafetensorsMetadata = Object.create(null);
  const rawMetadata = header[METADATA_KEY];
  if (rawMetadata !== undefined && rawMetadata !== null) {
    if (!isPlainObject(rawMetadata)) fail(`'${METADATA_KEY}' is not an object of strings`);
    for (const [k, v] of Object.entries(rawMetadata as Record<string, unknown>)) {
      if (k === FORBIDDEN_NAME)
        fail(`'${METADATA_KEY}' has an entry named '${FORBIDDEN_NAME}', which is not allowed`);
      if (typeof v !== 'string') fail(`'${METADATA_KEY}' entry '${k}' is ${JSON.stringify(v)}, not a string`);
      metadata[k] = v as string;
    }
  }

  const entries: HeaderEntry[] = [];
  for (const [name, info] of Object.entries(header)) {
    if (name === METADATA_KEY) continue;
    const bad = (why: string): never => fail(`tensor '${name}': ${why}`);
    if (name === FORBIDDEN_NAME) bad('this name is not allowed (it would set an object prototype)');
    if (!isPlainObject(info)) bad('its entry is not an object');
    const { dtype, shape, data_offsets: offsets } = info as Record<string, unknown>;
    if (typeof dtype !== 'string') bad(`dtype is ${JSON.stringify(dtype)}, not a string`);
    const read = READ_DTYPES[dtype as string];
    if (!read)
      bad(`unsupported dtype ${JSON.stringify(dtype)} (readable: ${Object.keys(READ_DTYPES).join(', ')})`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
      bad(`shape ${JSON.stringify(shape)} is not a list of integers >= 0`);
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
      offsets[0] > offsets[1]
    )
      bad(`data_offsets ${JSON.stringify(offsets)} is not a pair [begin, end] of integers with begin <= end`);
    const [begin, end] = offsets as number[];
    const dims = shape as number[];
    const needed = dims.reduce((a, b) => a * b, 1) * read.bytes;
    if (end - begin !== needed)
      bad(
        `data_offsets [${begin}, ${end}] hold ${end - begin} bytes, but ${dtype} of shape [${dims}] needs ${needed}`,
      );
    if (end > dataLength)
      bad(`data_offsets [${begin}, ${end}] are out of range: the file holds ${dataLength} bytes of data`);
    entries.push({ name, read, dtypeName: dtype as string, shape: dims, begin, end });
  }

  const byOffset = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = 0;
  let previous: HeaderEntry | null = null;
  for (const e of byOffset) {
    if (e.begin < covered)
      fail(
        `tensor '${e.name}' [${e.begin}, ${e.end}] overlaps tensor '${previous!.name}' [${previous!.begin}, ${previous!.end}]`,
      );
    if (e.begin > covered)
      fail(
        `bytes [${covered}, ${e.begin}) of the data, before tensor '${e.name}', belong to no tensor (a gap)`,
      );
    covered = e.end;
    previous = e;
  }
  if (covered !== dataLength)
    fail(`the last ${dataLength - covered} bytes of the data (from ${covered}) belong to no tensor`);
  return { entries, metadata };
}

/** One tensor's data decoded from its bytes; an error names the source, the tensor and its dtype. */
function decodeEntry(e: HeaderEntry, bytes: Uint8Array, source: string): TypedArray {
  const data = e.read.decode(
    bytes,
    e.shape.reduce((a, b) => a * b, 1),
  );
  if (typeof data === 'string')
    throw new Error(`safetensors: ${source}: tensor '${e.name}' (${e.dtypeName}): ${data}`);
  return data;
}

/** A tensor on `device` (F16 and BF16 become float32 where the device stores no half dtypes). */
function toTensor(e: HeaderEntry, bits: TypedArray, device: string): Tensor {
  const dtype = e.read.dtype;
  const storesHalf = getBackend(device).halfKernels !== undefined;
  const [data, as] =
    isHalf(dtype) && !storesHalf
      ? [decodeHalf(dtype, bits as Uint16Array), 'float32' as const]
      : [bits, dtype];
  return tensor(data, { shape: e.shape, dtype: as, device });
}

/** Reads safetensors bytes, checking them strictly; errors name the source and the tensor at fault. */
export function parseSafetensors(bytes: Uint8Array, options: ParseOptions = {}): ParsedSafetensors {
  const source = options.source ?? '<bytes>';
  const { entries, metadata, dataStart } = parseHeader(bytes, source);
  const decoded = entries.map(
    (e) => [e, decodeEntry(e, bytes.subarray(dataStart + e.begin, dataStart + e.end), source)] as const,
  );
  const device = options.device ?? getDefaultDevice();
  const tensors: Record<string, Tensor> = Object.create(null);
  for (const [e, bits] of decoded) tensors[e.name] = toTensor(e, bits, device);
  return { tensors, metadata };
}

/** Reads a .safetensors file (see parseSafetensors). */
export async function loadSafetensors(
  path: string,
  options: Omit<ParseOptions, 'source'> = {},
): Promise<ParsedSafetensors> {
  return parseSafetensors(await readFile(path), { ...options, source: path });
}

/** A tensor of a file as its header describes it: the file's dtype name ('BF16', 'F32', …) and shape. */
export interface SafetensorsTensorInfo {
  dtype: string;
  shape: readonly number[];
}

/**
 * A .safetensors file opened for reading one tensor at a time, so that a model's weights load without the
 * whole file in memory: opening reads the header and checks it against the file's size as parseSafetensors
 * does; `read` then reads one tensor's bytes. Close it when done.
 */
export class SafetensorsFile {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    readonly metadata: SafetensorsMetadata,
    private readonly entries: Map<string, HeaderEntry>,
    private readonly dataStart: number,
  ) {}

  static async open(path: string): Promise<SafetensorsFile> {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const first = new Uint8Array(Math.min(8, size));
      await readFully(handle, first, 0);
      const headerLength = headerLengthOf(first, size, path);
      const headerBytes = new Uint8Array(headerLength);
      await readFully(handle, headerBytes, 8);
      const { entries, metadata } = parseHeaderJson(headerBytes, size - 8 - headerLength, path);
      return new SafetensorsFile(
        path,
        handle,
        metadata,
        new Map(entries.map((e) => [e.name, e])),
        8 + headerLength,
      );
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** The tensors' names, in the header's order. */
  get names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The dtype and shape of tensor `name`; throws naming the file when it holds no such tensor. */
  info(name: string): SafetensorsTensorInfo {
    const e = this.entry(name);
    return { dtype: e.dtypeName, shape: e.shape };
  }

  /** Reads tensor `name` onto `device` (default: the default device). */
  async read(name: string, options: { device?: string } = {}): Promise<Tensor> {
    const e = this.entry(name);
    const bytes = new Uint8Array(e.end - e.begin);
    await readFully(this.handle, bytes, this.dataStart + e.begin);
    return toTensor(e, decodeEntry(e, bytes, this.path), options.device ?? getDefaultDevice());
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  private entry(name: string): HeaderEntry {
    const e = this.entries.get(name);
    if (!e) throw new Error(`safetensors: ${this.path} holds no tensor '${name}'`);
    return e;
  }
}

/** Fills `into` from the file at `position`; a short file is an error naming what was expected. */
async function readFully(handle: FileHandle, into: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
    if (bytesRead === 0)
      throw new Error(
        `safetensors: the file ended at byte ${position + done}, before ${position + into.length}`,
      );
    done += bytesRead;
  }
}
