/**
 * Entity renaming for the warm start: one demonstration's names (the question's entities, its answers and
 * evidence, the titles of the documents it retrieved) replaced consistently by other names, in the prompt,
 * the actions and the observations alike. Test questions are about entities no training question names,
 * so a policy must copy names from its context rather than recall them; with the names drawn afresh each
 * pass, copying is the only way to fit the demonstrations. The two areas a comparison reads are redrawn
 * too (in the same order), so that the policy compares them rather than recalls which country is larger.
 */
import type { Generator } from '@agent-r1/tensor';
import type { EntityRenaming } from '../task.js';
import { parseArea, splitTitle } from './scripted.js';
import { formatArea } from './data/build.js';
import type { QaExample } from './data/types.js';
import { PUNCTUATED_SHARE } from './options.js';
import { isComparison } from './swapped.js';

const ONSETS = [
  'b',
  'd',
  'g',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'z',
  'br',
  'st',
  'tr',
  'kh',
  'sh',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'a', 'o', 'ia', 'ou', 'ei'];
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 'm', 'k'];

function pick<T>(items: readonly T[], generator: Generator): T {
  return items[Math.floor(generator.random() * items.length)];
}

/** A pronounceable made-up word of 2–3 syllables, capitalised (`Brelouk`). */
function madeUpWord(generator: Generator): string {
  const syllables = 2 + Math.floor(generator.random() * 2);
  let word = '';
  for (let i = 0; i < syllables; i++)
    word += pick(ONSETS, generator) + pick(VOWELS, generator) + pick(CODAS, generator);
  return word[0].toUpperCase() + word.slice(1);
}

/** A capital letter. */
function initial(generator: Generator): string {
  return String.fromCharCode(65 + Math.floor(generator.random() * 26));
}

/**
 * The punctuated shapes real names take (`Washington D.C.`, `St. George's`, `Porto-Novo`, `Fort-de-France`,
 * `Trinidad and Tobago`): copying one means copying through its marks, and past a final period that
 * the sentence's own period follows (`…is Washington D.C..`).
 */
const SHAPES: ReadonlyArray<(word: () => string, generator: Generator) => string> = [
  (word, g) => `${word()} ${initial(g)}.${initial(g)}.`,
  (word) => `St. ${word()}`,
  (word) => `St. ${word()}'s`,
  (word) => `${word()}-${word()}`,
  (word) => `${word()}-de-${word()}`,
  (word) => `${word()} and ${word()}`,
];

/**
 * The alphabetic pieces of a tokenizer's vocabulary that made-up words can be glued from: those that begin
 * a word (` Camb`, ` Iran`, kept without the space) and those that go on one (`odia`, `ota`).
 */
export interface NamePieces {
  starts: readonly string[];
  continuations: readonly string[];
  /** Words never to make up, lowercased: the real words of the corpus (`Cambodia` is ` Camb` + `odia`). */
  avoid?: ReadonlySet<string>;
  /** Whether a glued word may be made up, beyond `avoid` (corpusNamePieces: how the tokenizer reads it). */
  fits?: (word: string) => boolean;
}

/** The name pieces of a vocabulary of `vocabSize` ids, each decoded on its own. */
export function namePieces(codec: { decode(ids: ArrayLike<number>): string }, vocabSize: number): NamePieces {
  const starts: string[] = [];
  const continuations: string[] = [];
  for (let id = 0; id < vocabSize; id++) {
    const piece = codec.decode([id]);
    if (/^ [A-Za-z]{2,}$/.test(piece)) starts.push(piece.slice(1));
    else if (/^[a-z]{2,}$/.test(piece)) continuations.push(piece);
  }
  return { starts, continuations };
}

/** The words of a corpus, titles and contents, lowercased (`Suriname (geography)` → `suriname`, `geography`). */
export function corpusWords(corpus: readonly { title: string; contents: string }[]): Set<string> {
  return new Set(
    corpus.flatMap((doc) => `${doc.title} ${doc.contents}`.toLowerCase().match(/\p{L}+/gu) ?? []),
  );
}

/**
 * The pieces of a vocabulary that made-up names may be glued from, for a corpus: no word of the corpus is
 * made up, and no made-up word is read as one of its whole words going on. A start such as ` Iran`, read
 * in training only as the start of made-up words (`Iranada`), taught the policy that the word goes on: it
 * searched `Iranada capital` for questions about Iran. So the starts that are whole words go, and a
 * word the tokenizer reads as one anyway (` Ir` + `ant` is read ` Iran` + `t`) is not made up.
 */
export function corpusNamePieces(
  codec: { encode(text: string): ArrayLike<number>; decode(ids: ArrayLike<number>): string },
  vocabSize: number,
  corpus: readonly { title: string; contents: string }[],
): NamePieces {
  const { starts, continuations } = namePieces(codec, vocabSize);
  const avoid = corpusWords(corpus);
  const fits = (word: string) => {
    const first = codec
      .decode([codec.encode(` ${word}`)[0]])
      .trim()
      .toLowerCase();
    return first.length < 3 || !avoid.has(first);
  };
  return { starts: starts.filter((s) => !avoid.has(s.toLowerCase())), continuations, avoid, fits };
}

/**
 * A made-up word glued from a vocabulary's pieces, capitalised: a word's start and one piece that goes on
 * (`Camb` + `ota` → `Cambota`), at most 14 letters, never a word of `pieces.avoid`. So no real name is
 * made up, but the pieces real names are cut into are read, as parts of names, somewhere in training.
 */
function vocabularyWord(pieces: NamePieces, generator: Generator): string {
  const unfit = (w: string) =>
    w === '' || w.length > 14 || (pieces.avoid?.has(w.toLowerCase()) ?? false) || !(pieces.fits?.(w) ?? true);
  const glue = () => {
    const word = pick(pieces.starts, generator) + pick(pieces.continuations, generator);
    return word[0].toUpperCase() + word.slice(1);
  };
  let word = '';
  for (let attempt = 0; attempt < 20 && unfit(word); attempt++) word = glue();
  return unfit(word) ? madeUpWord(generator) : word;
}

/**
 * A made-up name: one word, two words one time in five (`Tralo Mesin`), and the share `punctuated` of the
 * time (one in four by default) a punctuated shape (`Tralo K.B.`, `St. Mesin's`, `Brelo-de-Kano`; see
 * SHAPES). Its words are syllables (`Brelouk`), or with `pieces`, the share `pieces.share` of names glue
 * theirs from a vocabulary's pieces (`vocabularyWord`).
 */
export function madeUpName(
  generator: Generator,
  pieces?: NamePieces & { share: number },
  punctuated = PUNCTUATED_SHARE,
): string {
  const fromVocabulary =
    pieces !== undefined &&
    pieces.share > 0 &&
    pieces.starts.length > 0 &&
    pieces.continuations.length > 0 &&
    generator.random() < pieces.share;
  const word = () => (fromVocabulary ? vocabularyWord(pieces, generator) : madeUpWord(generator));
  if (generator.random() < punctuated) return pick(SHAPES, generator)(word, generator);
  const first = word();
  return generator.random() < 0.2 ? `${first} ${word()}` : first;
}

/** One made-up word, as `madeUpName` draws a name's first (`Tralo`): never a punctuated shape. */
function madeUpNameWord(generator: Generator, pieces?: NamePieces & { share: number }): string {
  return madeUpName(generator, pieces, 0).split(' ')[0];
}

/**
 * Two made-up names that begin alike, as test comparisons' options do (`Angola` and `Anguilla` share
 * ` Ang`; `United States` is the start of `United States Virgin Islands`, next to it in the documents):
 * one word and that word going on (`Tralo`, `Tralomesin`), one word then two others (`Tralo Mesin`,
 * `Tralo Kano`), or a word alone and with one after it (`Tralo`, `Tralo Mesin`), in a random order. A
 * policy that copies the second option's name must go on from where that name's own first part is, not
 * from the first option's.
 */
export function confusableNames(
  generator: Generator,
  pieces?: NamePieces & { share: number },
): [string, string] {
  const word = () => madeUpNameWord(generator, pieces);
  const stem = word();
  const shape = Math.floor(generator.random() * 3);
  const pair: [string, string] =
    shape === 0
      ? [stem, stem + word().toLowerCase()]
      : shape === 1
        ? [`${stem} ${word()}`, `${stem} ${word()}`]
        : [stem, `${stem} ${word()}`];
  return generator.random() < 0.5 ? pair : [pair[1], pair[0]];
}

/**
 * The evidence of `ex` that names something: a bridge entity or an answer. A comparison's evidence is what
 * each option's page says of it (an area, the word `landlocked`): renamed, `landlocked` became a made-up
 * name in the question and the pages alike, and the landlocked comparisons could not be learnt.
 */
const namingEvidence = (ex: QaExample) => (isComparison(ex) ? [] : (ex.evidence ?? []));

/** The names of a set of examples: entities, answers and naming evidence, without numbers. */
export function entityNames(examples: readonly QaExample[]): string[] {
  const names = new Set<string>();
  for (const ex of examples)
    for (const name of [...(ex.entities ?? []), ...ex.answers, ...namingEvidence(ex)])
      if (/\p{L}/u.test(name) && !/\d/.test(name)) names.add(name.trim());
  return [...names].filter((n) => n !== '').sort();
}

/**
 * The real names renamings draw from: the examples' names of at most two words and 16 characters (longer
 * ones would crowd the documents' text out of the observation limit), currency codes left out.
 */
export function renamePool(examples: readonly QaExample[]): string[] {
  return entityNames(examples).filter(
    (n) => n.length <= 16 && n.split(' ').length <= 2 && !/^[A-Z]{2,4}$/.test(n),
  );
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}]/u.test(c);
}

const DIGIT = /\d/;

/** Whether `text[start, end)` stands alone: not inside a longer word, nor a figure inside a longer one. */
function isWhole(text: string, start: number, end: number): boolean {
  if (isWordChar(text[start - 1]) || isWordChar(text[end])) return false;
  // `34` is not a whole figure in `1,034` or `34,000`.
  const glued = (mark: string | undefined, outer: string | undefined, inner: string | undefined) =>
    mark !== undefined && /[,.]/.test(mark) && DIGIT.test(outer ?? '') && DIGIT.test(inner ?? '');
  return (
    !glued(text[start - 1], text[start - 2], text[start]) && !glued(text[end], text[end + 1], text[end - 1])
  );
}

/** Where `name` occurs in `text` as a whole word (not inside a longer word). */
function occurrences(text: string, name: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + 1))
    if (isWhole(text, i, i + name.length)) at.push(i);
  return at;
}

/** `text` with each whole-word occurrence of a key of `replacement` replaced; longer names win overlaps. */
function replaceNames(text: string, replacement: ReadonlyMap<string, string>): string {
  const names = [...replacement.keys()].sort((a, b) => b.length - a.length);
  const covered = new Uint8Array(text.length);
  const spans: { start: number; end: number; by: string }[] = [];
  for (const name of names) {
    for (const start of occurrences(text, name)) {
      const end = start + name.length;
      if (covered.subarray(start, end).some((c) => c === 1)) continue;
      covered.fill(1, start, end);
      spans.push({ start, end, by: replacement.get(name)! });
    }
  }
  spans.sort((a, b) => a.start - b.start);
  let out = '';
  let last = 0;
  for (const { start, end, by } of spans) {
    out += text.slice(last, start) + by;
    last = end;
  }
  return out + text.slice(last);
}

/** A made-up code in place of a currency code (`BYN` → `KTE`): capitals, as long as the original. */
function madeUpCode(length: number, generator: Generator): string {
  return Array.from({ length }, () => initial(generator)).join('');
}

/** A figure as the documents write it (`181,035`). */
const FIGURE = /^\d{1,3}(,\d{3})*$/;

/**
 * New figures for an example whose evidence holds two (the areas a comparison reads), in the same order,
 * so the answer stands: drawn log-uniformly from 10 to 10 million, at least 5% apart as the dataset's
 * comparisons are, and never a figure `all` holds. One-digit figures are left alone (they would also
 * match `Doc 2`). Without it the 173 training comparisons' figures could be recalled, not compared. With
 * `sameDigits`, each new figure has as many digits as the one it replaces (a digit is a token: the texts
 * keep their length).
 */
function refigure(
  example: QaExample,
  all: string,
  generator: Generator,
  sameDigits = false,
): Map<string, string> {
  const figures = (example.evidence ?? []).filter((e) => FIGURE.test(e));
  const [a, b] = figures.map(parseArea);
  if (figures.length !== 2 || a === b || Math.min(a, b) < 10) return new Map();
  const digits = (n: number) => String(n).length;
  const drawLike = (n: number) =>
    sameDigits
      ? 10 ** (digits(n) - 1) + Math.floor(generator.random() * 9 * 10 ** (digits(n) - 1))
      : Math.round(10 ** (1 + generator.random() * 6));
  const usable = (x: number, y: number) =>
    Math.abs(x - y) >= 0.05 * Math.max(x, y) &&
    occurrences(all, formatArea(x)).length === 0 &&
    occurrences(all, formatArea(y)).length === 0;
  let [x, y] = [drawLike(a), drawLike(b)];
  for (let attempt = 0; attempt < 20 && !usable(x, y); attempt++) [x, y] = [drawLike(a), drawLike(b)];
  if (!usable(x, y)) return new Map();
  // Swapped into the originals' order; with the same digits the order can only differ where the two
  // originals have as many digits as each other, so the swap keeps each figure's length.
  if (x > y !== a > b) [x, y] = [y, x];
  return new Map([
    [figures[0], formatArea(x)],
    [figures[1], formatArea(y)],
  ]);
}

/**
 * The adjectives that begin the corpus's place types, from the titles that name one (`Massachusetts
 * (American state)` → `American`): the part-of sentence of a place whose name is ambiguous names its type
 * (`…is part of the American state Massachusetts.`), and the next hop searches that type as written.
 */
export function typeAdjectives(corpus: readonly { title: string }[]): string[] {
  const words = new Set<string>();
  for (const { title } of corpus) {
    const m = /\((\p{Lu}\p{L}+) \p{Ll}[\p{Ll} ]*\)$/u.exec(title);
    if (m) words.add(m[1]);
  }
  return [...words].sort();
}

const ADJECTIVE_ENDINGS = ['ian', 'an', 'ese', 'ish'];

/** A made-up adjective of a place type (`Brelouian`): a made-up word and a demonym's ending. */
function madeUpAdjective(generator: Generator, pieces?: NamePieces & { share: number }): string {
  return madeUpNameWord(generator, pieces) + pick(ADJECTIVE_ENDINGS, generator);
}

/** How `entityRenamer` draws its new names, beyond the pool. */
export interface RenameOptions {
  /** Made-up names glued from a vocabulary's pieces, the share `pieces.share` of them (`madeUpName`). */
  pieces?: NamePieces & { share: number };
  /** The share of made-up names that take a punctuated shape (`madeUpName`). */
  punctuated?: number;
  /** The share of comparisons whose two options get names that begin alike (`confusableNames`). */
  confusable?: number;
  /**
   * Whether a new name may stand for `name`: for a renaming that must not lengthen the texts, no more
   * tokens than `name` (the figures then keep their number of digits, see `refigure`). Absent: any name.
   */
  noLonger?: (name: string, other: string) => boolean;
  /**
   * The share `share` of renamings also rename the adjectives of place types the texts hold, of `words`
   * (`typeAdjectives`), by made-up ones (`the Italian region Lazio` → `the Brelouian region Tralo`): test
   * places' types (`American state`, `Canadian province`) have adjectives hardly any training question
   * reads, and a policy that has read a few others as fixed words does not copy a new one into its search.
   */
  typeAdjectives?: { words: readonly string[]; share: number };
}

/**
 * A renaming of one episode's names (found in `texts`: its prompt, actions and observations) by others, the
 * same one wherever it occurs (longer names first, so `Trondheim Fjord` is one name, not `Trondheim` +
 * `Fjord`): half of the time a name from `pool`, otherwise a made-up one (`madeUpName`; a made-up code for
 * a currency code), never a name the texts mention; the two figures of a comparison are redrawn in the
 * same order (see `refigure`). `options` say how names are drawn. `restore` maps the new names back, so
 * that a search or an answer written in the renamed world can be run and scored in the real one.
 */
export function entityRenamer(
  example: QaExample,
  texts: readonly string[],
  pool: readonly string[],
  generator: Generator,
  options: RenameOptions = {},
): EntityRenaming {
  const { pieces, punctuated = PUNCTUATED_SHARE, confusable = 0, noLonger, typeAdjectives } = options;
  const fitsFor = (name: string, other: string) => noLonger?.(name, other) ?? true;
  const candidates = new Set(entityNames([example]));
  for (const text of texts)
    for (const m of text.matchAll(/Doc \d+ \((.+?)\):/g)) candidates.add(splitTitle(m[1]).main);
  const all = texts.join('\n');
  const mentioned = [...candidates]
    .filter((name) => name.length > 1 && occurrences(all, name).length > 0)
    .sort();
  const taken = new Set(mentioned.map((n) => n.toLowerCase()));
  const replacement = new Map<string, string>();
  // Drawn only where asked for: with confusable 0 the renamings are those drawn without the option.
  const twoOptions = example.entities ?? [];
  if (confusable > 0 && isComparison(example) && twoOptions.length === 2 && generator.random() < confusable) {
    const pair = confusableNames(generator, pieces);
    if (
      twoOptions.every((o, i) => mentioned.includes(o) && fitsFor(o, pair[i])) &&
      pair.every((n) => !taken.has(n.toLowerCase()))
    )
      twoOptions.forEach((option, i) => {
        replacement.set(option, pair[i]);
        taken.add(pair[i].toLowerCase());
      });
  }
  /** Up to 20 draws for `name` until one is free and fits; the last draw, and whether it is usable. */
  const drawFor = (name: string, draw: () => string) => {
    const unusable = (other: string) =>
      other === '' || taken.has(other.toLowerCase()) || !fitsFor(name, other);
    let other = '';
    for (let attempt = 0; attempt < 20 && unusable(other); attempt++) other = draw();
    return { other, usable: !unusable(other) };
  };
  for (const name of mentioned) {
    if (replacement.has(name)) continue;
    const { other } = drawFor(name, () =>
      /^[A-Z]{2,4}$/.test(name)
        ? madeUpCode(name.length, generator)
        : pool.length > 0 && generator.random() < 0.5
          ? pick(pool, generator)
          : madeUpName(generator, pieces, punctuated),
    );
    taken.add(other.toLowerCase());
    replacement.set(name, other);
  }
  // Drawn only where asked for and held by the texts: otherwise the renamings are those drawn without it.
  const typeShare = typeAdjectives?.share ?? 0;
  const adjectives = (typeShare > 0 ? typeAdjectives!.words : []).filter(
    (word) => !replacement.has(word) && occurrences(all, word).length > 0,
  );
  if (adjectives.length > 0 && generator.random() < typeShare)
    for (const word of adjectives) {
      const { other, usable } = drawFor(word, () => madeUpAdjective(generator, pieces));
      // A renaming that must not lengthen the texts keeps an adjective no made-up one fits.
      if (!usable) continue;
      taken.add(other.toLowerCase());
      replacement.set(word, other);
    }
  for (const [figure, other] of refigure(example, all, generator, noLonger !== undefined))
    if (occurrences(all, figure).length > 0) replacement.set(figure, other);
  const inverse = new Map([...replacement].map(([from, to]) => [to, from]));
  return {
    apply: (text) => replaceNames(text, replacement),
    restore: (text) => replaceNames(text, inverse),
  };
}
