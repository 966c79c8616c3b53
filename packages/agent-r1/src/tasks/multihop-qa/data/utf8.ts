/**
 * Strict UTF-8 for user files: a byte sequence that is not UTF-8 is an error that says where it is, never a
 * U+FFFD that is then tokenized, searched and scored as if the user had written it.
 */

const strict = new TextDecoder('utf-8', { fatal: true });

/** Offset of the first byte that starts an invalid UTF-8 sequence (RFC 3629), or -1 if there is none. */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = 0; i < n; ) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    // Continuation bytes allowed after the lead: the first is narrower after E0, ED, F0 and F4 (no overlong
    // forms, no surrogates, nothing past U+10FFFF).
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = i + k < n ? bytes[i + k] : -1;
      if (c < lo || c > hi) return i;
      lo = 0x80;
      hi = 0xbf;
    }
    i += need + 1;
  }
  return -1;
}

/** Where a text file's bytes stop being UTF-8: the 1-based line and byte column, and the byte itself. */
export interface Utf8Problem {
  offset: number;
  line: number;
  column: number;
  byte: number;
}

/** Decodes UTF-8 (a leading byte-order mark is dropped); returns the first problem instead if not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { problem: Utf8Problem } {
  try {
    return { text: strict.decode(bytes) };
  } catch {
    // The decoder says only that the bytes are bad; the scan says where (it agrees with the decoder).
    const offset = Math.max(0, invalidUtf8Offset(bytes));
    let line = 1;
    let start = 0;
    for (let i = 0; i < offset; i++) {
      if (bytes[i] === 0x0a) {
        line++;
        start = i + 1;
      }
    }
    return { problem: { offset, line, column: offset - start + 1, byte: bytes[offset] } };
  }
}

/** How a problem reads in an error: `invalid UTF-8 (byte 0xE9 at column 12)`. */
export function describeUtf8Problem(p: Utf8Problem): string {
  const hex = p.byte.toString(16).toUpperCase().padStart(2, '0');
  return `invalid UTF-8 (byte 0x${hex} at column ${p.column}); the file must be UTF-8 encoded`;
}

/** A lone UTF-16 surrogate (from a JSON escape such as "\ud800"): it has no UTF-8 form and would become U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `s` holds a lone surrogate. */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}
