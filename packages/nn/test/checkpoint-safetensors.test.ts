import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Tensor, createCpuBackend, registerBackend, tensor, zeros } from '@agent-r1/tensor';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SafetensorsFile,
  loadSafetensors,
  parseSafetensors,
  saveSafetensors,
  serializeSafetensors,
  serializeSafetensorsAsync,
  writeSafetensors,
} from '../src/index.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

/** A file by the spec: u64 LE header length, the header padded with spaces to 8 bytes, then the data. */
function build(header: string | object, data: Uint8Array = new Uint8Array(0), pad = true): Uint8Array {
  let json = typeof header === 'string' ? header : JSON.stringify(header);
  if (pad) while (utf8(json).length % 8 !== 0) json += ' ';
  const h = utf8(json);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

function headerOf(bytes: Uint8Array): string {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return new TextDecoder().decode(bytes.subarray(8, 8 + n));
}

function describeTensor(t: Tensor) {
  return { dtype: t.dtype, shape: [...t.shape], data: [...t.dataSync()] };
}

describe('safetensors round trip', () => {
  it('keeps every dtype, shape (0-d and empty too), value and the metadata', () => {
    const tensors = {
      'layer.weight': tensor(
        [
          [1.5, -2, 3.25],
          [1e-30, -0, 65504],
        ],
        { dtype: 'float32' },
      ),
      'layer.f64': tensor([Math.PI, -1e300, 5e-324], { dtype: 'float64' }),
      ids: tensor([[-2147483648, 2147483647, 0, -7]], { dtype: 'int32' }),
      mask: tensor([true, false, true]),
      scalar: tensor(42.5),
      empty: zeros([0, 3]),
      'empty.int': zeros([2, 0], { dtype: 'int32' }),
      half: tensor([1, -2.5e-3, 65504, 2 ** -24], { dtype: 'float16' }),
      brain: tensor([[1 / 3, -1e38]], { dtype: 'bfloat16' }),
    };
    const metadata = { format: 'pt', note: 'héllo "quoted" ✓' };
    const bytes = serializeSafetensors(tensors, metadata);
    const parsed = parseSafetensors(bytes);
    expect(parsed.metadata).toEqual(metadata);
    expect(Object.keys(parsed.tensors).sort()).toEqual(Object.keys(tensors).sort());
    for (const [name, t] of Object.entries(tensors))
      expect(describeTensor(parsed.tensors[name]), name).toEqual(describeTensor(t));
    expect(parsed.tensors.scalar.shape).toEqual([]);
    expect(Object.is(parsed.tensors['layer.weight'].dataSync()[4], -0)).toBe(true);
  });

  it('lays out the file as the reference does: padded header, widest dtype first, no gaps', () => {
    const bytes = serializeSafetensors({
      b: tensor([true]),
      a: tensor([1], { dtype: 'int32' }),
      z: tensor([1, 2], { dtype: 'float32' }),
      y: tensor([1], { dtype: 'float64' }),
      h: tensor([1], { dtype: 'float16' }),
      g: tensor([1], { dtype: 'bfloat16' }),
    });
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    const header = headerOf(bytes);
    expect(header.trimEnd()).toBe(
      '{"y":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"z":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},' +
        '"a":{"dtype":"I32","shape":[1],"data_offsets":[16,20]},"g":{"dtype":"BF16","shape":[1],"data_offsets":[20,22]},' +
        '"h":{"dtype":"F16","shape":[1],"data_offsets":[22,24]},"b":{"dtype":"BOOL","shape":[1],"data_offsets":[24,25]}}',
    );
    expect(header.length - header.trimEnd().length).toBeLessThan(8);
    expect(bytes.length).toBe(8 + n + 25);
    expect([...bytes.subarray(8 + n + 20, 8 + n + 24)]).toEqual([0x80, 0x3f, 0x00, 0x3c]); // 1.0 in BF16, F16
  });

  it("writes a half tensor's bits as they are, NaN payloads included, and reads them back", async () => {
    const bits = new Uint16Array([0x7fc1, 0xffd5, 0x3c00, 0x0001]); // two NaNs with payloads in either type
    for (const dtype of ['float16', 'bfloat16'] as const) {
      const t = tensor(bits, { dtype });
      for (const bytes of [serializeSafetensors({ t }), await serializeSafetensorsAsync({ t })]) {
        const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
        expect(new Uint16Array(bytes.slice(8 + n).buffer)).toEqual(bits);
        expect(parseSafetensors(bytes).tensors.t.rawDataSync()).toEqual(bits);
      }
    }
  });

  it('writes exactly the bytes of a hand-built file (what the Python library writes)', () => {
    const json = '{"__metadata__":{"format":"pt"},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}';
    const data = new Uint8Array(8);
    new DataView(data.buffer).setFloat32(0, 1, true);
    new DataView(data.buffer).setFloat32(4, -2.5, true);
    const expected = build(json, data);
    expect(utf8(json).length).toBe(85);
    expect(Number(new DataView(expected.buffer).getBigUint64(0, true))).toBe(88); // 85 + 3 spaces
    expect(serializeSafetensors({ x: tensor([1, -2.5]) }, { format: 'pt' })).toEqual(expected);
  });

  it('writes an empty file as the 8-byte header "{}" and six spaces', () => {
    const bytes = serializeSafetensors({});
    expect([...bytes.subarray(0, 8)]).toEqual([8, 0, 0, 0, 0, 0, 0, 0]);
    expect(headerOf(bytes)).toBe('{}      ');
    expect(parseSafetensors(bytes)).toEqual({ tensors: {}, metadata: {} });
  });
});

describe('safetensors written by other tools', () => {
  it('parses a hand-built file with F32, I64, F16, BF16, BOOL, U8 and unpadded header', () => {
    const data = new Uint8Array(8 + 16 + 6 + 4 + 3 + 2);
    const v = new DataView(data.buffer);
    v.setFloat32(0, 1.5, true);
    v.setFloat32(4, -2, true);
    v.setBigInt64(8, 7n, true);
    v.setBigInt64(16, -3n, true);
    v.setUint16(24, 0x3c00, true); // 1.0
    v.setUint16(26, 0xc000, true); // -2.0
    v.setUint16(28, 0x0001, true); // smallest subnormal, 2^-24
    v.setUint16(30, 0x3fc0, true); // bf16 1.5
    v.setUint16(32, 0xff80, true); // bf16 -inf
    data.set([1, 0, 1], 34);
    data.set([200, 3], 37);
    const header = {
      __metadata__: { format: 'pt', source: 'hand' },
      floats: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      longs: { dtype: 'I64', shape: [2, 1], data_offsets: [8, 24] },
      halves: { dtype: 'F16', shape: [3], data_offsets: [24, 30] },
      brains: { dtype: 'BF16', shape: [2], data_offsets: [30, 34] },
      flags: { dtype: 'BOOL', shape: [3], data_offsets: [34, 37] },
      bytes: { dtype: 'U8', shape: [2], data_offsets: [37, 39] },
    };
    const { tensors, metadata } = parseSafetensors(build(header, data, false));
    expect(metadata).toEqual({ format: 'pt', source: 'hand' });
    expect(describeTensor(tensors.floats)).toEqual({ dtype: 'float32', shape: [2], data: [1.5, -2] });
    expect(describeTensor(tensors.longs)).toEqual({ dtype: 'int32', shape: [2, 1], data: [7, -3] });
    expect(describeTensor(tensors.halves)).toEqual({ dtype: 'float16', shape: [3], data: [1, -2, 2 ** -24] });
    expect(describeTensor(tensors.brains)).toEqual({
      dtype: 'bfloat16',
      shape: [2],
      data: [1.5, Number.NEGATIVE_INFINITY],
    });
    expect(tensors.flags.toArraySync()).toEqual([true, false, true]);
    expect(describeTensor(tensors.bytes)).toEqual({ dtype: 'int32', shape: [2], data: [200, 3] });
  });

  it('reads F16 and BF16 as float32 onto a device that cannot store half dtypes', () => {
    registerBackend('cpu-no-half', { ...createCpuBackend('cpu-no-half'), halfKernels: undefined });
    const bytes = serializeSafetensors({ h: tensor([0.1, -3], { dtype: 'float16' }) });
    const { tensors } = parseSafetensors(bytes, { device: 'cpu-no-half' });
    expect(tensors.h.dtype).toBe('float32');
    expect([...tensors.h.dataSync()]).toEqual([...tensor([0.1, -3], { dtype: 'float16' }).dataSync()]);
  });
});

describe('malformed safetensors', () => {
  const f32 = (shape: number[], offsets: [number, number]) => ({
    dtype: 'F32',
    shape,
    data_offsets: offsets,
  });
  const parse = (bytes: Uint8Array) => () => parseSafetensors(bytes, { source: 'bad.safetensors' });

  it('names the file and what is wrong with the header', () => {
    expect(parse(new Uint8Array(4))).toThrow(
      'safetensors: bad.safetensors: 4 bytes is too short for the 8-byte header length',
    );
    const long = build({});
    new DataView(long.buffer).setBigUint64(0, 1000n, true);
    expect(parse(long)).toThrow(/bad.safetensors: header length 1000 runs past the end of the 16-byte file/);
    new DataView(long.buffer).setBigUint64(0, 2n ** 63n, true);
    expect(parse(long)).toThrow(/header length 9223372036854775808 exceeds the 100000000-byte limit/);
    expect(parse(build('{"a": '))).toThrow(/bad.safetensors: the header is not valid JSON/);
    expect(parse(build('[1, 2]'))).toThrow(/the header does not start with '\{'/);
    expect(parse(build('{"__metadata__": {"n": 1}}'))).toThrow(/'__metadata__' entry 'n' is 1, not a string/);
    const badUtf8 = build('{}      ');
    badUtf8[9] = 0xff;
    expect(parse(badUtf8)).toThrow(/the header is not valid UTF-8/);
  });

  it('names the tensor with an unknown dtype or a bad shape, offsets or size', () => {
    const data = new Uint8Array(8);
    expect(parse(build({ w: { dtype: 'Q7', shape: [2], data_offsets: [0, 8] } }, data))).toThrow(
      /bad.safetensors: tensor 'w': unsupported dtype "Q7"/,
    );
    expect(parse(build({ w: f32([-2], [0, 8]) }, data))).toThrow(/tensor 'w': shape \[-2\] is not a list/);
    expect(parse(build({ w: f32([2], [8, 0]) }, data))).toThrow(
      /tensor 'w': data_offsets \[8,0\] is not a pair/,
    );
    expect(parse(build({ w: f32([3], [0, 8]) }, data))).toThrow(
      /tensor 'w': data_offsets \[0, 8\] hold 8 bytes, but F32 of shape \[3\] needs 12/,
    );
    expect(parse(build({ w: f32([2], [8, 16]) }, data))).toThrow(
      /tensor 'w': data_offsets \[8, 16\] are out of range: the file holds 8 bytes of data/,
    );
  });

  it('refuses overlapping tensors, gaps and bytes that belong to no tensor', () => {
    const data = new Uint8Array(16);
    expect(parse(build({ a: f32([2], [0, 8]), b: f32([2], [4, 12]) }, data))).toThrow(
      /tensor 'b' \[4, 12\] overlaps tensor 'a' \[0, 8\]/,
    );
    expect(parse(build({ a: f32([2], [0, 8]), b: f32([1], [12, 16]) }, data))).toThrow(
      /bytes \[8, 12\) of the data, before tensor 'b', belong to no tensor \(a gap\)/,
    );
    expect(parse(build({ a: f32([2], [0, 8]) }, data))).toThrow(
      /the last 8 bytes of the data \(from 8\) belong to no tensor/,
    );
  });

  it('refuses values that do not fit the dtype they are read into', () => {
    const bool = new Uint8Array([1, 2]);
    expect(parse(build({ m: { dtype: 'BOOL', shape: [2], data_offsets: [0, 2] } }, bool))).toThrow(
      /tensor 'm' \(BOOL\): element 1 is the byte 2, not 0 or 1/,
    );
    const big = new Uint8Array(8);
    new DataView(big.buffer).setBigInt64(0, 2n ** 40n, true);
    expect(parse(build({ i: { dtype: 'I64', shape: [], data_offsets: [0, 8] } }, big))).toThrow(
      /tensor 'i' \(I64\): element 0 is 1099511627776, outside the int32 range/,
    );
  });

  it('refuses a tensor or metadata entry named __proto__, which would set the prototype of the record', () => {
    // Before, `tensors['__proto__'] = t` made t the record's prototype: no Object.keys check saw it.
    const one = new Uint8Array(4);
    const proto = '{"__proto__": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}';
    expect(parse(build(proto, one))).toThrow(
      /bad.safetensors: tensor '__proto__': this name is not allowed \(it would set an object prototype\)/,
    );
    const beside =
      '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "__proto__": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}';
    expect(parse(build(beside, new Uint8Array(8)))).toThrow(/tensor '__proto__': this name is not allowed/);
    expect(parse(build('{"__metadata__": {"__proto__": "x"}}'))).toThrow(
      /'__metadata__' has an entry named '__proto__', which is not allowed/,
    );
    const record = Object.defineProperty({}, '__proto__', { value: tensor([1]), enumerable: true });
    expect(() => serializeSafetensors(record)).toThrow(/'__proto__' cannot name a tensor/);
    const meta = Object.defineProperty({}, '__proto__', { value: 'x', enumerable: true });
    expect(() => serializeSafetensors({ a: tensor([1]) }, meta)).toThrow(
      /'__proto__' cannot name a metadata entry/,
    );
  });

  it('reads tensors and metadata into null-prototype records, so any other name is an own entry', () => {
    const bytes = serializeSafetensors(
      { constructor: tensor([1]), toString: tensor([2]), hasOwnProperty: tensor([3]) },
      { constructor: 'c' },
    );
    const { tensors, metadata } = parseSafetensors(bytes);
    expect(Object.getPrototypeOf(tensors)).toBe(null);
    expect(Object.getPrototypeOf(metadata)).toBe(null);
    expect(Object.keys(tensors).sort()).toEqual(['constructor', 'hasOwnProperty', 'toString']);
    expect([...tensors['toString'].dataSync()]).toEqual([2]);
    expect(metadata.constructor).toBe('c');
    expect('valueOf' in tensors).toBe(false);
  });

  it('refuses to write metadata that is not strings or a tensor named __metadata__', () => {
    expect(() => serializeSafetensors({ a: tensor([1]) }, { n: 1 } as never)).toThrow(
      /metadata 'n' is number; metadata values must be strings/,
    );
    expect(() => serializeSafetensors({ __metadata__: tensor([1]) })).toThrow(
      /'__metadata__' cannot name a tensor/,
    );
  });
});

describe('saveSafetensors / loadSafetensors', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'safetensors-test-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes atomically, leaves no temporary file, and reads back', async () => {
    const path = join(dir, 'w.safetensors');
    await saveSafetensors(path, { w: tensor([1, 2, 3]) }, { step: '3' });
    await saveSafetensors(path, { w: tensor([4, 5]) }, { step: '4' });
    expect(await readdir(dir)).toEqual(['w.safetensors']);
    const { tensors, metadata } = await loadSafetensors(path);
    expect(metadata).toEqual({ step: '4' });
    expect([...tensors.w.dataSync()]).toEqual([4, 5]);
  });

  it('keeps the existing file intact when serialization throws', async () => {
    const path = join(dir, 'w.safetensors');
    await saveSafetensors(path, { w: tensor([1, 2, 3]) });
    const before = await readFile(path);
    const disposed = tensor([9]);
    disposed.dispose();
    await expect(saveSafetensors(path, { w: tensor([1]), gone: disposed })).rejects.toThrow(
      /tensor 'gone' was disposed \(writing .*w.safetensors\)/,
    );
    await expect(saveSafetensors(path, { w: tensor([1]) }, { bad: 1 } as never)).rejects.toThrow(
      /metadata 'bad' is number/,
    );
    expect(await readFile(path)).toEqual(before);
    expect(await readdir(dir)).toEqual(['w.safetensors']);
  });

  it('removes its temporary file when the final rename fails', async () => {
    const path = join(dir, 'taken');
    await mkdir(path);
    await writeFile(join(path, 'x'), 'x');
    await expect(saveSafetensors(path, { w: tensor([1]) })).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['taken']);
  });

  it('names the file in errors', async () => {
    const path = join(dir, 'broken.safetensors');
    await writeFile(path, build('{"a": 1}'));
    await expect(loadSafetensors(path)).rejects.toThrow(
      `safetensors: ${path}: tensor 'a': its entry is not an object`,
    );
  });
});

describe('SafetensorsFile (one tensor at a time) and writeSafetensors', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'safetensors-file-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const tensors = () => ({
    w: tensor([[1.5, -2, 3.25]]),
    f64: tensor([Math.PI], { dtype: 'float64' }),
    ids: tensor([-7, 2147483647], { dtype: 'int32' }),
    mask: tensor([true, false]),
    half: tensor([1, -2.5e-3, 65504], { dtype: 'float16' }),
    brain: tensor([1 / 3, -1e38], { dtype: 'bfloat16' }),
    empty: zeros([0, 3]),
  });

  it('reads each tensor as parseSafetensors does, and its header info', async () => {
    const path = join(dir, 'm.safetensors');
    const bytes = serializeSafetensors(tensors(), { format: 'pt' });
    await writeFile(path, bytes);
    const whole = parseSafetensors(bytes);
    const file = await SafetensorsFile.open(path);
    expect(file.metadata).toEqual({ format: 'pt' });
    expect(file.names.sort()).toEqual(Object.keys(whole.tensors).sort());
    expect(file.info('brain')).toEqual({ dtype: 'BF16', shape: [2] });
    for (const name of file.names) {
      const t = await file.read(name);
      expect(describeTensor(t), name).toEqual(describeTensor(whole.tensors[name]));
    }
    await expect(file.read('nope')).rejects.toThrow(`safetensors: ${path} holds no tensor 'nope'`);
    await file.close();
  });

  it('checks the header against the file size on opening, with the errors parseSafetensors gives', async () => {
    const path = join(dir, 'bad.safetensors');
    const cases: Uint8Array[] = [
      new Uint8Array(4),
      (() => {
        const b = build({});
        new DataView(b.buffer).setBigUint64(0, 1000n, true);
        return b;
      })(),
      build({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, new Uint8Array(12)),
      build({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, new Uint8Array(4)),
    ];
    for (const bytes of cases) {
      await writeFile(path, bytes);
      let expected = '';
      try {
        parseSafetensors(bytes, { source: path });
      } catch (err) {
        expected = (err as Error).message;
      }
      expect(expected).not.toBe('');
      await expect(SafetensorsFile.open(path)).rejects.toThrow(expected);
    }
  });

  it('saveSafetensors writes the bytes serializeSafetensors gives, one tensor at a time', async () => {
    const path = join(dir, 's.safetensors');
    await saveSafetensors(path, tensors(), { note: 'x' });
    expect(new Uint8Array(await readFile(path))).toEqual(serializeSafetensors(tensors(), { note: 'x' }));
  });

  it('writeSafetensors reads each source in turn; a failing one leaves the old file intact', async () => {
    const path = join(dir, 'w.safetensors');
    await saveSafetensors(path, { w: tensor([1, 2]) });
    const before = await readFile(path);
    const read: string[] = [];
    const source = (name: string, fail = false) => ({
      name,
      dtype: 'float32' as const,
      shape: [2],
      data: async () => {
        read.push(name);
        if (fail) throw new Error('device lost');
        return new Float32Array([1, 2]);
      },
    });
    await expect(writeSafetensors(path, [source('a'), source('b', true), source('c')])).rejects.toThrow(
      /safetensors: serialize: tensor 'b': device lost \(writing .*w\.safetensors\)/,
    );
    expect(read).toEqual(['a', 'b']);
    expect(await readFile(path)).toEqual(before);
    expect(await readdir(dir)).toEqual(['w.safetensors']);
    await expect(writeSafetensors(path, [source('a'), source('a')])).rejects.toThrow(
      /tensor 'a' is given twice/,
    );
    const wrong = { ...source('z'), shape: [3] };
    await expect(writeSafetensors(path, [wrong])).rejects.toThrow(/tensor 'z' gave 8 bytes, not 12/);
    expect(await readFile(path)).toEqual(before);
  });
});
