/**
 * Pre-tokenisation: splits text into the pieces BPE works inside (merges never cross a piece boundary).
 * GPT-2's pattern: English contractions, letter runs and number runs with an optional leading space,
 * punctuation runs with an optional leading space, and whitespace (a whitespace run gives up its last
 * character to the word that follows it, so " the" stays one piece).
 */

/** The GPT-2 pre-tokenisation regex, with Unicode property escapes. */
export const GPT2_PATTERN = /'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** Name stored in saved tokenizers, so a file made with another pre-tokeniser is refused. */
export const PRETOKENIZER_NAME = 'gpt2';

/**
 * Calls `fn` with each piece of `text`, in order. The pieces concatenate back to `text` exactly: the
 * pattern matches every character, and anything it skipped would still be passed on as its own piece.
 */
export function forEachPiece(text: string, fn: (piece: string) => void): void {
  const re = new RegExp(GPT2_PATTERN);
  let last = 0;
  let m: RegExpExecArray | null = re.exec(text);
  while (m !== null) {
    if (m.index > last) fn(text.slice(last, m.index));
    fn(m[0]);
    last = m.index + m[0].length;
    m = re.exec(text);
  }
  if (last < text.length) fn(text.slice(last));
}

/** The pieces of `text` as an array (see `forEachPiece`). */
export function pretokenize(text: string): string[] {
  const out: string[] = [];
  forEachPiece(text, (p) => out.push(p));
  return out;
}
