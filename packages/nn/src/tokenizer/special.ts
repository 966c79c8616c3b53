/**
 * Special tokens: whole strings such as '<eos>' or '<tool_call>' that are cut out of the text before
 * pre-tokenisation and map to one id each.
 */

/** Checks a list of special-token names: non-empty strings. */
export function checkSpecialName(name: unknown, where: string): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new Error(`${where}: a special token must be a non-empty string, got ${JSON.stringify(name)}`);
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Splits text on a fixed set of special-token strings (leftmost match; the longest wins at a position). */
export class SpecialMatcher {
  private readonly re: RegExp | null;

  constructor(names: Iterable<string>) {
    const sorted = [...names].sort((a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0));
    this.re = sorted.length === 0 ? null : new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
  }

  /** Calls `onText` for each stretch of ordinary text (never empty) and `onSpecial` for each special. */
  split(text: string, onText: (text: string) => void, onSpecial: (name: string) => void): void {
    if (this.re === null) {
      if (text.length > 0) onText(text);
      return;
    }
    const re = new RegExp(this.re);
    let last = 0;
    let m: RegExpExecArray | null = re.exec(text);
    while (m !== null) {
      if (m.index > last) onText(text.slice(last, m.index));
      onSpecial(m[0]);
      last = m.index + m[0].length;
      m = re.exec(text);
    }
    if (last < text.length) onText(text.slice(last));
  }
}
