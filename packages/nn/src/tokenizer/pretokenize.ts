/**
 * Pre-tokenisation: splits text into the pieces BPE works inside (merges never cross a piece boundary).
 *
 * - `gpt2`: GPT-2's pattern: English contractions, letter runs and number runs with an optional leading
 *   space, punctuation runs with an optional leading space, and whitespace (a whitespace run gives up its
 *   last character to the word that follows it, so " the" stays one piece).
 * - `split-digits-punct`: the same, except that every digit and every punctuation mark is a piece of its
 *   own (a mark keeps an optional leading space; a digit never has one). Text copied out of a longer text
 *   is then the same tokens as it was there: in `is Washington D.C..` the name's final `.` is a token, not
 *   half of a `..` piece, and `181,035` is six digits and a comma however it is grouped.
 * - `split-punct-digits3`: the same, except that digits go in runs of up to three, left to right, as in
 *   GPT-4's pattern (`181,035` → `181`, `,`, `035`; BPE may merge inside a run): a figure written with
 *   thousands commas is then as many pieces as it has groups, and a copy of it is the same pieces again.
 */

/** The GPT-2 pre-tokenisation regex, with Unicode property escapes. */
export const GPT2_PATTERN = /'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** GPT-2's pattern with single digits and single punctuation marks (see the module comment). */
export const SPLIT_DIGITS_PUNCT_PATTERN =
  /'(?:[sdmt]|ll|ve|re)| ?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]|\s+(?!\S)|\s+/gu;

/** `split-digits-punct` with digits in runs of up to three (see the module comment). */
export const SPLIT_PUNCT_DIGITS3_PATTERN =
  /'(?:[sdmt]|ll|ve|re)| ?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]|\s+(?!\S)|\s+/gu;

const PATTERNS = {
  gpt2: GPT2_PATTERN,
  'split-digits-punct': SPLIT_DIGITS_PUNCT_PATTERN,
  'split-punct-digits3': SPLIT_PUNCT_DIGITS3_PATTERN,
} as const;

/** The pre-tokenisers by name; the name is stored in saved tokenizers. */
export type PretokenizerName = keyof typeof PATTERNS;

export const PRETOKENIZER_NAMES = Object.keys(PATTERNS) as PretokenizerName[];

/** A fresh global regex of the named pre-tokeniser; throws naming the unknown name. */
export function pretokenizerPattern(name: PretokenizerName): RegExp {
  const pattern = PATTERNS[name];
  if (pattern === undefined)
    throw new Error(`Unknown pretokenizer ${JSON.stringify(name)} (known: ${PRETOKENIZER_NAMES.join(', ')})`);
  return new RegExp(pattern);
}

/**
 * Calls `fn` with each piece of `text`, in order. The pieces concatenate back to `text` exactly: the
 * pattern matches every character, and anything it skipped would still be passed on as its own piece.
 */
export function forEachPiece(
  text: string,
  fn: (piece: string) => void,
  pretokenizer: PretokenizerName = 'gpt2',
): void {
  const re = pretokenizerPattern(pretokenizer);
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
export function pretokenize(text: string, pretokenizer: PretokenizerName = 'gpt2'): string[] {
  const out: string[] = [];
  forEachPiece(text, (p) => out.push(p), pretokenizer);
  return out;
}
