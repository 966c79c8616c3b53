/**
 * Byte-level BPE tokenizer (GPT-2 style). Ids: 0..255 are bytes, 256..256+M-1 the M learned merges in the
 * order they were learned, then the special tokens in the order they were registered.
 *
 * Any string encodes (there is no unknown token) and `decode(encode(s)) === s` for every well-formed string.
 * Lone surrogates have no UTF-8 form and come back as U+FFFD (see bytes.ts).
 *
 * Decoding a slice of ids can end inside a multi-byte character. `decode` turns such a fragment into
 * U+FFFD, so decoding pieces separately and concatenating the strings is lossy; concatenate
 * `decodeBytes` results instead, or use `decoder()`, which carries partial characters across calls
 * (what token-by-token generation wants).
 */
import { BYTE_VOCAB, bytesToDisplay, pieceBytes, utf8Decode, utf8Encode } from './bytes.js';
import { writeFileAtomic } from '../io/atomic.js';
import { readJsonFile } from './io.js';
import { MergeTable } from './merge.js';
import { type PretokenizerName, pretokenizerPattern } from './pretokenize.js';
import {
  FORMAT_TYPE,
  FORMAT_VERSION,
  type TokenizerJSON,
  checkMerges,
  parseTokenizerJSON,
} from './serialize.js';
import { SpecialMatcher, checkSpecialName } from './special.js';

export interface TokenizerOptions {
  /** Learned merges: merge r joins the pair of ids into id 256 + r (ids below 256 + r only). */
  merges?: ReadonlyArray<readonly [number, number]>;
  /** Special tokens, given ids after the merges in this order. */
  specialTokens?: readonly string[];
  /** How text is cut into pieces before merging (default `gpt2`); must be the one the merges learned on. */
  pretokenizer?: PretokenizerName;
}

export interface EncodeOptions {
  /**
   * Recognise special-token strings in the text (default true). With false, '<eos>' in the text is encoded
   * as ordinary characters, which is what untrusted text (a tool result, say) should get.
   */
  allowSpecial?: boolean;
}

/** Encoded pre-tokens kept for reuse; the cache is emptied when it reaches this size. */
const CACHE_LIMIT = 1 << 17;

export class Tokenizer {
  private readonly table: MergeTable;
  private readonly mergeList: Array<[number, number]>;
  /** Bytes of every token, specials included. */
  private readonly bytes: Uint8Array[] = [];
  private readonly specials: string[] = [];
  private readonly specialIds = new Map<string, number>();
  private matcher = new SpecialMatcher([]);
  private readonly cache = new Map<string, number[]>();
  private readonly pattern: RegExp;
  readonly pretokenizer: PretokenizerName;

  constructor(options: TokenizerOptions = {}) {
    const merges = (options.merges ?? []).map(([a, b]) => [a, b] as [number, number]);
    checkMerges(merges, 'Tokenizer');
    this.mergeList = merges;
    this.pretokenizer = options.pretokenizer ?? 'gpt2';
    this.pattern = pretokenizerPattern(this.pretokenizer);
    this.table = new MergeTable(merges);
    for (let b = 0; b < BYTE_VOCAB; b++) this.bytes.push(Uint8Array.of(b));
    for (const [a, b] of merges) {
      const left = this.bytes[a];
      const right = this.bytes[b];
      const joined = new Uint8Array(left.length + right.length);
      joined.set(left);
      joined.set(right, left.length);
      this.bytes.push(joined);
    }
    this.addSpecialTokens(options.specialTokens ?? []);
  }

  /** Number of ids: 256 bytes + merges + special tokens. */
  get vocabSize(): number {
    return this.bytes.length;
  }

  get numMerges(): number {
    return this.mergeList.length;
  }

  /** Special-token names in id order. */
  get specialTokens(): readonly string[] {
    return this.specials;
  }

  /**
   * Registers special tokens (new ones get the next ids, in order) and returns the id of each name given;
   * names already registered keep their id.
   */
  addSpecialTokens(names: readonly string[]): number[] {
    const ids = names.map((name, i) => {
      checkSpecialName(name, `addSpecialTokens: names[${i}]`);
      let id = this.specialIds.get(name);
      if (id === undefined) {
        id = this.bytes.length;
        this.specials.push(name);
        this.specialIds.set(name, id);
        this.bytes.push(utf8Encode(name));
      }
      return id;
    });
    this.matcher = new SpecialMatcher(this.specials);
    return ids;
  }

  /** The id of a special token; throws naming the token if it is not registered. */
  tokenId(name: string): number {
    const id = this.specialIds.get(name);
    if (id === undefined) {
      const known = this.specials.length === 0 ? 'none registered' : `known: ${this.specials.join(', ')}`;
      throw new Error(`Unknown special token ${JSON.stringify(name)} (${known})`);
    }
    return id;
  }

  /** Whether `id` is a special token. */
  isSpecial(id: number): boolean {
    return id >= BYTE_VOCAB + this.mergeList.length && id < this.bytes.length;
  }

  /** A readable form of one token: the special's name, or its bytes in GPT-2's printable form ('Ġthe'). */
  idToToken(id: number): string {
    this.checkId(id);
    return this.isSpecial(id)
      ? this.specials[id - BYTE_VOCAB - this.mergeList.length]
      : bytesToDisplay(this.bytes[id]);
  }

  /** The UTF-8 bytes a token stands for (a copy). */
  tokenBytes(id: number): Uint8Array {
    this.checkId(id);
    return this.bytes[id].slice();
  }

  /** Encodes text to token ids. */
  encode(text: string, options: EncodeOptions = {}): number[] {
    const out: number[] = [];
    if (options.allowSpecial === false || this.specials.length === 0) {
      this.encodeOrdinary(text, out);
    } else {
      this.matcher.split(
        text,
        (t) => this.encodeOrdinary(t, out),
        (s) => out.push(this.specialIds.get(s)!),
      );
    }
    return out;
  }

  /** Encodes each text. */
  encodeBatch(texts: Iterable<string>, options: EncodeOptions = {}): number[][] {
    const out: number[][] = [];
    for (const t of texts) out.push(this.encode(t, options));
    return out;
  }

  /** The bytes the ids stand for, concatenated. Throws naming any id out of range. */
  decodeBytes(ids: ArrayLike<number>): Uint8Array {
    let total = 0;
    for (let i = 0; i < ids.length; i++) {
      this.checkId(ids[i]);
      total += this.bytes[ids[i]].length;
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (let i = 0; i < ids.length; i++) {
      const b = this.bytes[ids[i]];
      out.set(b, at);
      at += b.length;
    }
    return out;
  }

  /** Decodes ids to text. An incomplete UTF-8 sequence (at either end) becomes U+FFFD; see `decoder()`. */
  decode(ids: ArrayLike<number>): string {
    return utf8Decode(this.decodeBytes(ids));
  }

  /** A streaming decoder: feed ids as they come; characters split across calls are held back until whole. */
  decoder(): TokenStreamDecoder {
    return new TokenStreamDecoder(this);
  }

  toJSON(): TokenizerJSON {
    return {
      type: FORMAT_TYPE,
      version: FORMAT_VERSION,
      pretokenizer: this.pretokenizer,
      merges: this.mergeList.map(([a, b]) => [a, b]),
      specialTokens: [...this.specials],
    };
  }

  /** Builds a tokenizer from `toJSON()` output (parsed); errors name `source` and the bad field. */
  static fromJSON(json: unknown, source?: string): Tokenizer {
    return new Tokenizer(parseTokenizerJSON(json, source));
  }

  /** Writes the tokenizer as JSON, atomically (temporary file, then rename). */
  async save(path: string): Promise<void> {
    await writeFileAtomic(path, `${JSON.stringify(this.toJSON())}\n`);
  }

  /** Reads a tokenizer saved by `save`; errors name the file and the missing or bad field. */
  static async load(path: string): Promise<Tokenizer> {
    return Tokenizer.fromJSON(await readJsonFile(path), `file ${path}`);
  }

  private checkId(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.bytes.length) {
      throw new Error(`Token id ${id} is out of range: the vocabulary has ids 0..${this.bytes.length - 1}`);
    }
  }

  /** Encodes text with no special tokens in it: pre-tokenise, then merge each piece (cached). */
  private encodeOrdinary(text: string, out: number[]): void {
    const re = this.pattern;
    re.lastIndex = 0;
    let last = 0;
    let m: RegExpExecArray | null = re.exec(text);
    while (m !== null) {
      if (m.index > last) this.encodePiece(text.slice(last, m.index), out);
      const piece = m[0];
      this.encodePiece(piece, out);
      last = m.index + piece.length;
      m = re.exec(text);
    }
    if (last < text.length) this.encodePiece(text.slice(last), out);
  }

  private encodePiece(piece: string, out: number[]): void {
    let ids = this.cache.get(piece);
    if (ids === undefined) {
      ids = this.table.apply(pieceBytes(piece));
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(piece, ids);
    }
    for (let i = 0; i < ids.length; i++) out.push(ids[i]);
  }
}

/** Decodes a stream of ids incrementally (see `Tokenizer.decoder`). */
export class TokenStreamDecoder {
  private readonly utf8: InstanceType<typeof TextDecoder>;

  /** `ignoreBOM`: keep a leading U+FEFF (as Hugging Face tokenizers do) instead of dropping it. */
  constructor(
    private readonly tokenizer: { decodeBytes(ids: ArrayLike<number>): Uint8Array },
    options: { ignoreBOM?: boolean } = {},
  ) {
    this.utf8 = new TextDecoder('utf-8', { ignoreBOM: options.ignoreBOM ?? false });
  }

  /** Decodes more ids; returns the text completed so far (a split character waits for its last byte). */
  push(ids: number | ArrayLike<number>): string {
    const bytes = this.tokenizer.decodeBytes(typeof ids === 'number' ? [ids] : ids);
    return this.utf8.decode(bytes, { stream: true });
  }

  /** Ends the stream: returns what is left, with an unfinished character as U+FFFD. */
  flush(): string {
    return this.utf8.decode();
  }
}
