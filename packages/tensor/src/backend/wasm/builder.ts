/**
 * A small WebAssembly module builder: enough of the binary format (LEB128, the type, import, function,
 * export and code sections) and of the instruction set (control flow, i32/f32 scalars, the 128-bit SIMD
 * opcodes) to emit the kernels in ./kernels.ts from TypeScript, with no toolchain. Functions are written
 * through `Code`, a fluent emitter whose methods are the instructions (`c.localGet(x).i32Const(4).i32Add()`).
 *
 * Reference: the WebAssembly core specification 2.0, "Binary format", and its SIMD instruction table.
 */

export const I32 = 0x7f;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof F32 | typeof F64 | typeof V128;

/** Unsigned LEB128. */
export function uleb(value: number, out: number[]): void {
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
}

/** Signed LEB128 of a 32-bit integer. */
export function sleb(value: number, out: number[]): void {
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return;
  }
}

function name(text: string, out: number[]): void {
  const bytes = new TextEncoder().encode(text);
  uleb(bytes.length, out);
  for (const b of bytes) out.push(b);
}

function vec(items: number[][], out: number[]): void {
  uleb(items.length, out);
  for (const item of items) for (const b of item) out.push(b);
}

const f32Bytes = new Uint8Array(4);
const f32View = new DataView(f32Bytes.buffer);

/** The SIMD prefix; every SIMD instruction is 0xfd followed by its opcode in unsigned LEB128. */
const SIMD = 0xfd;

/**
 * Instruction emitter for one function body. Locals are allocated with `local(type)` (after the
 * parameters); labels are relative depths, as in the binary format.
 */
export class Code {
  readonly bytes: number[] = [];
  private readonly locals: ValType[] = [];

  constructor(readonly params: readonly ValType[]) {}

  /** Index of parameter `i`. */
  param(i: number): number {
    return i;
  }

  local(type: ValType): number {
    this.locals.push(type);
    return this.params.length + this.locals.length - 1;
  }

  /** The locals declaration, run-length encoded as the code section wants it. */
  localsDecl(): number[] {
    const groups: number[][] = [];
    for (let i = 0; i < this.locals.length; ) {
      let j = i;
      while (j < this.locals.length && this.locals[j] === this.locals[i]) j++;
      const g: number[] = [];
      uleb(j - i, g);
      g.push(this.locals[i]);
      groups.push(g);
      i = j;
    }
    const out: number[] = [];
    vec(groups, out);
    return out;
  }

  private op(...bytes: number[]): this {
    for (const b of bytes) this.bytes.push(b);
    return this;
  }

  private simd(opcode: number): this {
    this.bytes.push(SIMD);
    uleb(opcode, this.bytes);
    return this;
  }

  private memarg(align: number, offset: number): this {
    uleb(align, this.bytes);
    uleb(offset, this.bytes);
    return this;
  }

  // Control flow. Block types: 0x40 (no result) or a value type.
  block(type = 0x40): this {
    return this.op(0x02, type);
  }
  loop(type = 0x40): this {
    return this.op(0x03, type);
  }
  if(type = 0x40): this {
    return this.op(0x04, type);
  }
  else(): this {
    return this.op(0x05);
  }
  end(): this {
    return this.op(0x0b);
  }
  br(depth: number): this {
    this.op(0x0c);
    uleb(depth, this.bytes);
    return this;
  }
  brIf(depth: number): this {
    this.op(0x0d);
    uleb(depth, this.bytes);
    return this;
  }
  return(): this {
    return this.op(0x0f);
  }
  call(func: number): this {
    this.op(0x10);
    uleb(func, this.bytes);
    return this;
  }
  drop(): this {
    return this.op(0x1a);
  }
  select(): this {
    return this.op(0x1b);
  }

  // Variables.
  localGet(i: number): this {
    this.op(0x20);
    uleb(i, this.bytes);
    return this;
  }
  localSet(i: number): this {
    this.op(0x21);
    uleb(i, this.bytes);
    return this;
  }
  localTee(i: number): this {
    this.op(0x22);
    uleb(i, this.bytes);
    return this;
  }

  // Memory (align is log2 of the byte alignment hint; offset is a static byte offset).
  i32Load(offset = 0): this {
    return this.op(0x28).memarg(2, offset);
  }
  i32Store(offset = 0): this {
    return this.op(0x36).memarg(2, offset);
  }
  f32Load(offset = 0): this {
    return this.op(0x2a).memarg(2, offset);
  }
  f32Store(offset = 0): this {
    return this.op(0x38).memarg(2, offset);
  }
  /** memory.fill (bulk memory): [dest, value, bytes] → fills bytes with the low byte of value. */
  memoryFill(): this {
    return this.op(0xfc, 0x0b, 0x00);
  }
  /** memory.copy (bulk memory): [dest, source, bytes] → copies bytes (the ranges may overlap). */
  memoryCopy(): this {
    return this.op(0xfc, 0x0a, 0x00, 0x00);
  }

  // Constants.
  i32Const(v: number): this {
    this.op(0x41);
    sleb(v, this.bytes);
    return this;
  }
  f32Const(v: number): this {
    f32View.setFloat32(0, v, true);
    return this.op(0x43, ...f32Bytes);
  }

  f64Const(v: number): this {
    this.op(0x44);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    return this.op(...b);
  }

  // i32 arithmetic and comparisons.
  i32Eqz(): this {
    return this.op(0x45);
  }
  i32Eq(): this {
    return this.op(0x46);
  }
  i32GtS(): this {
    return this.op(0x4a);
  }
  i32And(): this {
    return this.op(0x71);
  }
  i32Ne(): this {
    return this.op(0x47);
  }
  i32LtS(): this {
    return this.op(0x48);
  }
  i32LtU(): this {
    return this.op(0x49);
  }
  i32LeS(): this {
    return this.op(0x4c);
  }
  i32GeS(): this {
    return this.op(0x4e);
  }
  i32Add(): this {
    return this.op(0x6a);
  }
  i32Sub(): this {
    return this.op(0x6b);
  }
  i32Mul(): this {
    return this.op(0x6c);
  }
  i32DivS(): this {
    return this.op(0x6d);
  }
  i32Shl(): this {
    return this.op(0x74);
  }

  // f32 arithmetic and comparisons.
  f32Eq(): this {
    return this.op(0x5b);
  }
  f32Add(): this {
    return this.op(0x92);
  }
  f32Sub(): this {
    return this.op(0x93);
  }
  f32Mul(): this {
    return this.op(0x94);
  }
  f32Div(): this {
    return this.op(0x95);
  }
  f32Max(): this {
    return this.op(0x97);
  }
  f32Min(): this {
    return this.op(0x96);
  }
  f32Neg(): this {
    return this.op(0x8c);
  }
  f32Sqrt(): this {
    return this.op(0x91);
  }
  f32Gt(): this {
    return this.op(0x5e);
  }
  f64Gt(): this {
    return this.op(0x64);
  }
  f64Mul(): this {
    return this.op(0xa2);
  }
  f64Sqrt(): this {
    return this.op(0x9f);
  }
  f64ConvertI32S(): this {
    return this.op(0xb7);
  }
  f64Add(): this {
    return this.op(0xa0);
  }
  f64Sub(): this {
    return this.op(0xa1);
  }
  f64Div(): this {
    return this.op(0xa3);
  }
  f32DemoteF64(): this {
    return this.op(0xb6);
  }
  f64PromoteF32(): this {
    return this.op(0xbb);
  }

  // SIMD: memory.
  v128Load(offset = 0): this {
    return this.simd(0x00).memarg(2, offset);
  }
  /** Loads one f32 (as 32 bits) and splats it over the four lanes. */
  v128Load32Splat(offset = 0): this {
    return this.simd(0x09).memarg(2, offset);
  }
  v128Store(offset = 0): this {
    return this.simd(0x0b).memarg(2, offset);
  }
  // SIMD: constants, splats, lanes.
  f32x4Const(v: number): this {
    this.simd(0x0c);
    f32View.setFloat32(0, v, true);
    for (let i = 0; i < 4; i++) for (const b of f32Bytes) this.bytes.push(b);
    return this;
  }
  /** Splats the f32 constant over the four lanes (f32.const + f32x4.splat; shorter than v128.const). */
  f32x4SplatConst(v: number): this {
    return this.f32Const(v).f32x4Splat();
  }
  i32x4Splat(): this {
    return this.simd(0x11);
  }
  f32x4Splat(): this {
    return this.simd(0x13);
  }
  f32x4ExtractLane(lane: number): this {
    return this.simd(0x1f).op(lane);
  }
  f64x2ExtractLane(lane: number): this {
    return this.simd(0x21).op(lane);
  }
  /** Bytes of the two operands (0–15 the first, 16–31 the second) picked by 16 constant lane indices. */
  i8x16Shuffle(lanes: readonly number[]): this {
    if (lanes.length !== 16) throw new Error('i8x16.shuffle takes 16 lane indices');
    this.simd(0x0d);
    for (const lane of lanes) this.bytes.push(lane);
    return this;
  }
  // SIMD: f32x4 comparisons and bitwise.
  f32x4Ge(): this {
    return this.simd(0x46);
  }
  f32x4Eq(): this {
    return this.simd(0x41);
  }
  f32x4Ne(): this {
    return this.simd(0x42);
  }
  f32x4Lt(): this {
    return this.simd(0x43);
  }
  f32x4Gt(): this {
    return this.simd(0x44);
  }
  f32x4Le(): this {
    return this.simd(0x45);
  }
  v128And(): this {
    return this.simd(0x4e);
  }
  v128Or(): this {
    return this.simd(0x50);
  }
  /** 1 if any bit of the v128 is set. */
  v128AnyTrue(): this {
    return this.simd(0x53);
  }
  /** Lanes of the first operand where the mask (top of stack) is set, else of the second. */
  v128Bitselect(): this {
    return this.simd(0x52);
  }
  // SIMD: arithmetic.
  f32x4Abs(): this {
    return this.simd(0xe0);
  }
  f32x4Nearest(): this {
    return this.simd(0x6a);
  }
  i32x4Shl(): this {
    return this.simd(0xab);
  }
  i32x4ShrS(): this {
    return this.simd(0xac);
  }
  i32x4Add(): this {
    return this.simd(0xae);
  }
  i32x4Sub(): this {
    return this.simd(0xb1);
  }
  f32x4Add(): this {
    return this.simd(0xe4);
  }
  f32x4Sub(): this {
    return this.simd(0xe5);
  }
  f32x4Mul(): this {
    return this.simd(0xe6);
  }
  /** Relaxed SIMD: a·b + c of the three v128s on the stack (a, b, c), fused or not as the hardware does. */
  f32x4RelaxedMadd(): this {
    return this.simd(0x105);
  }
  f32x4Max(): this {
    return this.simd(0xe9);
  }
  f32x4Min(): this {
    return this.simd(0xe8);
  }
  f32x4Div(): this {
    return this.simd(0xe7);
  }
  f32x4Sqrt(): this {
    return this.simd(0xe3);
  }
  /** Pseudo-minimum b < a ? b : a (one minps; no NaN canonicalisation, unlike f32x4.min). */
  f32x4Pmin(): this {
    return this.simd(0xea);
  }
  /** Pseudo-maximum a < b ? b : a (one maxps). */
  f32x4Pmax(): this {
    return this.simd(0xeb);
  }
  f32x4Neg(): this {
    return this.simd(0xe1);
  }
  i32x4TruncSatF32x4S(): this {
    return this.simd(0xf8);
  }
  /** The two low f32 lanes as f64x2. */
  f64x2PromoteLowF32x4(): this {
    return this.simd(0x5f);
  }
  f64x2Add(): this {
    return this.simd(0xf0);
  }
}

interface FuncDef {
  type: number;
  code: Code;
  exportName?: string;
}

interface ImportDef {
  module: string;
  field: string;
  /** 0x00 function (with its type index) or 0x02 memory (with its minimum pages). */
  kind: 0x00 | 0x02;
  index: number;
  /** Memory only: a maximum in pages makes it a shared memory (threads proposal: shared needs a maximum). */
  sharedMax?: number;
}

/** Assembles a module: imported functions first (they take the low function indices), then defined ones. */
export class ModuleBuilder {
  private readonly types: number[][] = [];
  private readonly imports: ImportDef[] = [];
  private readonly funcs: FuncDef[] = [];
  private importedFuncs = 0;

  private typeIndex(params: readonly ValType[], results: readonly ValType[]): number {
    const t: number[] = [0x60];
    uleb(params.length, t);
    t.push(...params);
    uleb(results.length, t);
    t.push(...results);
    const key = t.join(',');
    const found = this.types.findIndex((x) => x.join(',') === key);
    if (found >= 0) return found;
    this.types.push(t);
    return this.types.length - 1;
  }

  /** Imports a memory; with `sharedMaxPages` a shared one (importable by instances on several threads). */
  importMemory(module: string, field: string, minPages: number, sharedMaxPages?: number): void {
    this.imports.push({ module, field, kind: 0x02, index: minPages, sharedMax: sharedMaxPages });
  }

  /** Declares an imported function; returns its function index. Call before `func`. */
  importFunc(module: string, field: string, params: ValType[], results: ValType[]): number {
    if (this.funcs.length > 0) throw new Error('ModuleBuilder: import functions before defining any');
    this.imports.push({ module, field, kind: 0x00, index: this.typeIndex(params, results) });
    return this.importedFuncs++;
  }

  /** Defines a function; `body` fills in its code (without the final `end`). Returns its index. */
  func(params: ValType[], results: ValType[], body: (c: Code) => void, exportName?: string): number {
    const code = new Code(params);
    body(code);
    code.end();
    this.funcs.push({ type: this.typeIndex(params, results), code, exportName });
    return this.importedFuncs + this.funcs.length - 1;
  }

  build(): Uint8Array {
    const out = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
    const section = (id: number, content: number[]) => {
      out.push(id);
      uleb(content.length, out);
      for (const b of content) out.push(b);
    };
    const types: number[] = [];
    vec(this.types, types);
    section(1, types);
    const imports: number[] = [];
    vec(
      this.imports.map((imp) => {
        const e: number[] = [];
        name(imp.module, e);
        name(imp.field, e);
        e.push(imp.kind);
        if (imp.kind === 0x02) e.push(imp.sharedMax === undefined ? 0x00 : 0x03);
        uleb(imp.index, e);
        if (imp.sharedMax !== undefined) uleb(imp.sharedMax, e);
        return e;
      }),
      imports,
    );
    section(2, imports);
    const funcs: number[] = [];
    vec(
      this.funcs.map((f) => {
        const e: number[] = [];
        uleb(f.type, e);
        return e;
      }),
      funcs,
    );
    section(3, funcs);
    const exports: number[] = [];
    const exported = this.funcs
      .map((f, i) => ({ f, i }))
      .filter(({ f }) => f.exportName !== undefined)
      .map(({ f, i }) => {
        const e: number[] = [];
        name(f.exportName as string, e);
        e.push(0x00);
        uleb(this.importedFuncs + i, e);
        return e;
      });
    vec(exported, exports);
    section(7, exports);
    const code: number[] = [];
    vec(
      this.funcs.map((f) => {
        const body = [...f.code.localsDecl(), ...f.code.bytes];
        const e: number[] = [];
        uleb(body.length, e);
        for (const b of body) e.push(b);
        return e;
      }),
      code,
    );
    section(10, code);
    return Uint8Array.from(out);
  }
}
