/**
 * The tokenizer's JSON form, and its validation with errors that name the source and the bad field.
 *
 * {
 *   "type": "byte-bpe", "version": 1, "pretokenizer": "gpt2",     // or "split-digits-punct", "split-punct-digits3"
 *   "merges": [[116, 104], [32, 116], ...],   // merge r joins the pair into token id 256 + r
 *   "specialTokens": ["<eos>", "<pad>", ...]  // ids 256 + merges.length + i
 * }
 */
import { BYTE_VOCAB } from './bytes.js';
import { PRETOKENIZER_NAMES, type PretokenizerName } from './pretokenize.js';

export const FORMAT_TYPE = 'byte-bpe';
export const FORMAT_VERSION = 1;

export interface TokenizerJSON {
  type: typeof FORMAT_TYPE;
  version: typeof FORMAT_VERSION;
  pretokenizer: PretokenizerName;
  merges: Array<[number, number]>;
  specialTokens: string[];
}

export interface TokenizerSpec {
  merges: Array<[number, number]>;
  specialTokens: string[];
  pretokenizer: PretokenizerName;
}

/** Checks a merge list: merge r may only join ids below 256 + r (bytes and earlier merges). */
export function checkMerges(merges: unknown, where: string): asserts merges is Array<[number, number]> {
  if (!Array.isArray(merges))
    throw new Error(`${where}: field "merges" must be an array, got ${describe(merges)}`);
  for (let r = 0; r < merges.length; r++) {
    const m = merges[r];
    const limit = BYTE_VOCAB + r;
    const ok = (x: unknown) => Number.isInteger(x) && (x as number) >= 0 && (x as number) < limit;
    if (!Array.isArray(m) || m.length !== 2 || !ok(m[0]) || !ok(m[1])) {
      throw new Error(
        `${where}: field "merges[${r}]" must be a pair of token ids below ${limit}, got ${describe(m)}`,
      );
    }
  }
}

/**
 * Validates parsed JSON as a tokenizer. Errors read "Invalid tokenizer <source>: ..." (source 'JSON', or
 * 'file <path>' when loading) and name the missing or bad field.
 */
export function parseTokenizerJSON(json: unknown, source = 'JSON'): TokenizerSpec {
  const where = `Invalid tokenizer ${source}`;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error(`${where}: expected a JSON object, got ${describe(json)}`);
  }
  const obj = json as Record<string, unknown>;
  const expect = (field: string, want: unknown) => {
    if (!(field in obj)) throw new Error(`${where}: missing field "${field}"`);
    if (obj[field] !== want) {
      throw new Error(
        `${where}: field "${field}" must be ${JSON.stringify(want)}, got ${describe(obj[field])}`,
      );
    }
  };
  expect('type', FORMAT_TYPE);
  expect('version', FORMAT_VERSION);
  if (!('pretokenizer' in obj)) throw new Error(`${where}: missing field "pretokenizer"`);
  const pretokenizer = obj.pretokenizer as PretokenizerName;
  if (!PRETOKENIZER_NAMES.includes(pretokenizer)) {
    const names = PRETOKENIZER_NAMES.map((n) => JSON.stringify(n));
    const known = `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
    throw new Error(`${where}: field "pretokenizer" must be ${known}, got ${describe(obj.pretokenizer)}`);
  }
  for (const field of ['merges', 'specialTokens']) {
    if (!(field in obj)) throw new Error(`${where}: missing field "${field}"`);
  }
  checkMerges(obj.merges, where);
  const specials = obj.specialTokens;
  if (!Array.isArray(specials)) {
    throw new Error(`${where}: field "specialTokens" must be an array of strings, got ${describe(specials)}`);
  }
  const seen = new Set<string>();
  specials.forEach((s, i) => {
    if (typeof s !== 'string' || s.length === 0) {
      throw new Error(`${where}: field "specialTokens[${i}]" must be a non-empty string, got ${describe(s)}`);
    }
    if (seen.has(s)) throw new Error(`${where}: field "specialTokens[${i}]" repeats ${JSON.stringify(s)}`);
    seen.add(s);
  });
  return { merges: obj.merges.map(([a, b]) => [a, b]), specialTokens: [...specials], pretokenizer };
}

function describe(x: unknown): string {
  if (x === undefined) return 'undefined';
  const s = JSON.stringify(x);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
