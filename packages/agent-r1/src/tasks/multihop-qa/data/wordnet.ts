/** Minimal parser of WordNet `data.noun` files (https://wordnet.princeton.edu/documentation/wndb5wn). */

export interface WnPointer {
  /** Pointer symbol, e.g. `@i` instance-of, `#p` part holonym, `#m` member holonym. */
  symbol: string;
  offset: string;
  pos: string;
}

export interface WnSynset {
  offset: string;
  /** Lexicographer file number (15 = noun.location, 18 = noun.person). */
  lexFile: number;
  /** Lemmas with underscores turned into spaces and adjective markers removed. */
  words: string[];
  pointers: WnPointer[];
  gloss: string;
}

/** Parses the text of a WordNet `data.noun` file into synsets keyed by offset (file order kept). */
export function parseWordNetData(text: string): Map<string, WnSynset> {
  const out = new Map<string, WnSynset>();
  const lines = text.split('\n');
  for (let ln = 0; ln < lines.length; ln++) {
    const line = lines[ln];
    if (line.length === 0 || line.startsWith('  ')) continue; // licence header lines start with two spaces
    const bar = line.indexOf(' | ');
    const head = (bar >= 0 ? line.slice(0, bar) : line).trim();
    const gloss = bar >= 0 ? line.slice(bar + 3).trim() : '';
    const t = head.split(' ');
    const wordCount = Number.parseInt(t[3], 16);
    if (t.length < 5 || !Number.isFinite(wordCount)) {
      throw new Error(`WordNet data line ${ln + 1}: malformed synset record`);
    }
    const words: string[] = [];
    let i = 4;
    for (let w = 0; w < wordCount; w++, i += 2)
      words.push(t[i].replace(/_/g, ' ').replace(/\([a-z]+\)$/, ''));
    const ptrCount = Number.parseInt(t[i], 10);
    i++;
    const pointers: WnPointer[] = [];
    for (let p = 0; p < ptrCount; p++, i += 4)
      pointers.push({ symbol: t[i], offset: t[i + 1], pos: t[i + 2] });
    out.set(t[0], { offset: t[0], lexFile: Number.parseInt(t[1], 10), words, pointers, gloss });
  }
  return out;
}

/** Offsets the synset points to with `symbol` (noun targets only). */
export function targets(s: WnSynset, symbol: string): string[] {
  return s.pointers.filter((p) => p.symbol === symbol && p.pos === 'n').map((p) => p.offset);
}
