/**
 * UTF-8 and byte helpers for the byte-level tokenizer. Token ids 0..255 are the raw bytes, so every string
 * has an encoding.
 *
 * A JS string holding a lone surrogate (half of a UTF-16 pair) has no UTF-8 form: `TextEncoder` writes
 * U+FFFD (EF BF BD) in its place, so such a string encodes without error but does not decode back to the
 * same string. Every well-formed string round-trips exactly.
 */

/** Number of base tokens: one per byte value. */
export const BYTE_VOCAB = 256;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/** UTF-8 bytes of `text` (lone surrogates become U+FFFD). */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes UTF-8; malformed or incomplete sequences become U+FFFD rather than throwing. */
export function utf8Decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** The byte ids of one pre-token, with a fast path for ASCII (the common case). */
export function pieceBytes(piece: string): number[] {
  const n = piece.length;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const c = piece.charCodeAt(i);
    if (c >= 0x80) return Array.from(encoder.encode(piece));
    out[i] = c;
  }
  return out;
}

/**
 * GPT-2's printable stand-in for each byte: printable Latin-1 bytes map to themselves, the rest (control
 * characters, space, ...) to U+0100 and up, so a space shows as 'Ġ' and a newline as 'Ċ'. Used only to
 * display tokens (`idToToken`); the tokenizer itself works on bytes.
 */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const table = new Array<string>(BYTE_VOCAB);
  let extra = 0;
  for (let b = 0; b < BYTE_VOCAB; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : BYTE_VOCAB + extra++);
  }
  return table;
})();

/** A token's bytes in GPT-2's printable form, e.g. [0x20, 0x74, 0x68, 0x65] → 'Ġthe'. */
export function bytesToDisplay(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += BYTE_TO_CHAR[b];
  return s;
}
