/**
 * Builds the multi-hop QA dataset (retrieval corpus + questions with train/validation/test splits) from
 * WordNet 3.1 and `world-countries`. Deterministic from the seed; optionally cached to disk as JSONL.
 *
 * Every fact a question needs lives in its own document: country facts are split into facet pages
 * (capital / currency / languages / geography / borders), and WordNet instance glosses carry their
 * instance-of and part-of links as sentences. A question of n hops has n distinct supporting docs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '@agent-r1/nn';
import { JsonlError, loadCorpusJsonl, loadQuestionsJsonl, writeJsonlAtomic } from './jsonl.js';
import { containsAnswer } from './recall.js';
import { mulberry32, type Rng, shuffled } from './rng.js';
import { type KnowledgeSources, loadKnowledgeSources, type WorldCountry } from './sources.js';
import type { Doc, MultihopDataset, QaExample, QaSplits } from './types.js';
import { targets, type WnSynset } from './wordnet.js';

/** Bump when the generated data changes, so stale caches are not reused. */
export const DATASET_VERSION = 2;

export interface BuildOptions {
  seed?: number;
  /** Folder for the JSONL cache (`<cacheDir>/multihop-v<version>-seed<seed>-…/`); none: no cache. */
  cacheDir?: string;
  /** Fractions of countries (and so of entities) in validation and test. Default 0.15 each. */
  validationFraction?: number;
  testFraction?: number;
  /** At most this many questions of one kind about one country (keeps answers diverse). Default 12. */
  maxPerCountryAndKind?: number;
  /**
   * A place's part-of sentence names the type of the place it links to where that place's title does
   * (`Gloucester is part of the American state Massachusetts.`, for the title `Massachusetts (American
   * state)`), so that the search for the next hop can follow from what was read. Default false.
   */
  bridgeTypes?: boolean;
  /** Injected sources (tests); default: the installed npm packages. */
  sources?: KnowledgeSources;
  /** Told when a damaged cache is rebuilt; default: a process warning (printed on stderr). */
  onWarning?: (message: string) => void;
}

/** The options the data depends on (those that name its cache folder). */
type DataOptions = Required<Omit<BuildOptions, 'cacheDir' | 'sources' | 'onWarning'>>;

interface Country {
  code: string;
  name: string;
  aliases: string[];
  capitals: string[];
  currencies: { code: string; name: string }[];
  languages: string[];
  region: string;
  subregion: string;
  area: number;
  landlocked: boolean;
  borders: string[];
}

interface Place {
  syn: WnSynset;
  name: string;
  type: string;
  country: Country;
  /** For two-level chains: the intermediate place (e.g. a state) the place is part of. */
  mid?: Place;
}

const docId = {
  capital: (c: Country) => `country:${c.code}:capital`,
  currency: (c: Country) => `country:${c.code}:currency`,
  languages: (c: Country) => `country:${c.code}:languages`,
  geography: (c: Country) => `country:${c.code}:geography`,
  borders: (c: Country) => `country:${c.code}:borders`,
  wn: (s: WnSynset) => `wordnet:${s.offset}`,
};

function uniqCaseless(xs: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const x of xs) {
    const t = x.trim();
    const k = t.toLowerCase();
    if (t.length > 0 && !seen.has(k)) {
      seen.add(k);
      out.push(t);
    }
  }
  return out;
}

function listText(xs: string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function countryFromRecord(r: WorldCountry): Country {
  return {
    code: r.cca3,
    name: r.name.common,
    aliases: [r.name.common, r.name.official, ...r.altSpellings.filter((a) => a.length >= 4)],
    capitals: (r.capital ?? []).filter((c) => c.trim() !== ''),
    currencies: Object.entries(r.currencies ?? {}).map(([code, v]) => ({ code, name: v.name })),
    languages: Object.values(r.languages ?? {}),
    region: r.region,
    subregion: r.subregion ?? '',
    area: r.area,
    landlocked: r.landlocked,
    borders: r.borders ?? [],
  };
}

const COUNTRYISH = /country|kingdom|republic|principality|sultanate|emirate|monarchy|dominion|commonwealth/i;

/** Links each country to its WordNet synset (a noun.location instance named like the country). */
function linkCountries(wn: Map<string, WnSynset>, countries: Country[]): Map<string, Country> {
  const byWord = new Map<string, WnSynset[]>();
  for (const s of wn.values()) {
    if (s.lexFile !== 15 || targets(s, '@i').length === 0) continue;
    for (const w of s.words) {
      const l = byWord.get(w);
      if (l === undefined) byWord.set(w, [s]);
      else l.push(s);
    }
  }
  const hyperText = (s: WnSynset) =>
    targets(s, '@i')
      .map((o) => wn.get(o)?.words.join(' ') ?? '')
      .join(' ');
  const linked = new Map<string, Country>();
  for (const c of countries) {
    let best: WnSynset | undefined;
    let bestScore = 0;
    for (const n of c.aliases) {
      for (const s of byWord.get(n) ?? []) {
        if (linked.has(s.offset)) continue;
        const score = (COUNTRYISH.test(hyperText(s)) ? 2 : 1) + (n === c.name ? 0.5 : 0);
        if (score > bestScore) {
          best = s;
          bestScore = score;
        }
      }
    }
    if (best !== undefined) {
      linked.set(best.offset, c);
      c.aliases.push(...best.words);
    }
  }
  for (const c of countries) c.aliases = uniqCaseless(c.aliases);
  return linked;
}

function countryDocs(c: Country, byCode: Map<string, Country>): Doc[] {
  const docs: Doc[] = [];
  if (c.capitals.length > 0) {
    const text =
      c.capitals.length === 1
        ? `The capital of ${c.name} is ${c.capitals[0]}.`
        : `The capitals of ${c.name} are ${listText(c.capitals)}.`;
    docs.push({ id: docId.capital(c), title: `${c.name} (capital)`, contents: text });
  }
  if (c.currencies.length > 0) {
    const cur = listText(c.currencies.map((x) => `the ${x.name} (${x.code})`));
    docs.push({ id: docId.currency(c), title: `${c.name} (currency)`, contents: `${c.name} uses ${cur}.` });
  }
  if (c.languages.length > 0) {
    const text =
      c.languages.length === 1
        ? `The official language of ${c.name} is ${c.languages[0]}.`
        : `The official languages of ${c.name} are ${listText(c.languages)}.`;
    docs.push({ id: docId.languages(c), title: `${c.name} (languages)`, contents: text });
  }
  const where = c.subregion !== '' && c.subregion !== c.region ? `${c.subregion} (${c.region})` : c.region;
  docs.push({
    id: docId.geography(c),
    title: `${c.name} (geography)`,
    contents:
      `${c.name} is ${c.landlocked ? 'landlocked' : 'not landlocked'}. ` +
      `Its area is ${formatArea(c.area)} square kilometres. It lies in ${where}.`,
  });
  const neighbours = c.borders.map((b) => byCode.get(b)?.name).filter((x): x is string => x !== undefined);
  docs.push({
    id: docId.borders(c),
    title: `${c.name} (borders)`,
    contents:
      neighbours.length === 0
        ? `${c.name} has no land borders.`
        : `${c.name} shares land borders with ${listText(neighbours)}.`,
  });
  return docs;
}

/** An area as the documents write it: whole square kilometres with thousands commas (`181,035`). */
export function formatArea(a: number): string {
  return a.toLocaleString('en-US', { maximumFractionDigits: 0 });
}

function wordnetDoc(
  s: WnSynset,
  wn: Map<string, WnSynset>,
  linked: Map<string, Country>,
  title: string,
  /** How the part-of sentence names a place: `Massachusetts`, or `the American state Massachusetts`. */
  placeName: (p: WnSynset) => string,
): Doc {
  const name = s.words[0];
  // Where the place is comes first, as in an encyclopedia's lead sentence: a search shows each document's
  // first 80 characters, and a bridge fact after a long gloss was cut off (docs/data.md).
  const parts: string[] = [];
  for (const p of targets(s, '#p')) {
    const c = linked.get(p);
    const ps = wn.get(p);
    if (c !== undefined) parts.push(`${name} is located in ${c.name}.`);
    else if (ps !== undefined) parts.push(`${name} is part of ${placeName(ps)}.`);
  }
  parts.push(`${name}: ${s.gloss.replace(/\s*;?\s*$/, '')}.`);
  if (s.words.length > 1) parts.push(`Also called ${listText(s.words.slice(1))}.`);
  for (const h of targets(s, '@i')) {
    const hs = wn.get(h);
    // (WordNet has a few instance-of links to other instances, e.g. Mecca -> Riyadh: not a class, skipped.)
    if (hs !== undefined && targets(hs, '@i').length === 0) parts.push(`${name} is ${article(hs.words[0])}.`);
  }
  for (const m of targets(s, '#m')) {
    const ms = wn.get(m);
    if (ms !== undefined) parts.push(`${name} is a member of ${ms.words[0]}.`);
  }
  return { id: docId.wn(s), title, contents: parts.join(' ') };
}

/** "the river Seine", or just "Simpson Desert" when the name already says what it is. */
function placePhrase(p: Place): string {
  const last = p.type.split(' ').pop() ?? p.type;
  return p.name.toLowerCase().includes(last.toLowerCase()) ? p.name : `the ${p.type} ${p.name}`;
}

/** Generic noun for an intermediate place, so the question does not give away its country. */
function midNoun(type: string): string {
  if (/state|province|region|district|county|department|canton|territory|area|prefecture/i.test(type))
    return 'region';
  if (/island|archipelago/i.test(type)) return 'island group or island';
  if (/range|mountains/i.test(type)) return 'mountain range';
  if (/city|town|capital/i.test(type)) return 'city';
  return 'area';
}

interface Draft extends Omit<QaExample, 'id'> {
  key: string;
  countries: Country[];
}

/** Builds the corpus and all candidate questions (before splitting). */
function generate(
  src: KnowledgeSources,
  bridgeTypes: boolean,
): { corpus: Doc[]; drafts: Draft[]; countries: Country[] } {
  const wn = src.wordnet;
  const countries = src.countries.map(countryFromRecord).sort((a, b) => a.code.localeCompare(b.code));
  const byCode = new Map(countries.map((c) => [c.code, c]));
  const linked = linkCountries(wn, countries);

  // --- corpus -------------------------------------------------------------------------------------------
  const instances = [...wn.values()].filter((s) => targets(s, '@i').length > 0);
  const typeOf = (s: WnSynset) => wn.get(targets(s, '@i')[0])?.words[0] ?? 'entity';
  const lemmaCount = new Map<string, number>();
  const lemmaTypeCount = new Map<string, number>();
  for (const s of instances) {
    lemmaCount.set(s.words[0], (lemmaCount.get(s.words[0]) ?? 0) + 1);
    const k = `${typeOf(s)}|${s.words[0]}`;
    lemmaTypeCount.set(k, (lemmaTypeCount.get(k) ?? 0) + 1);
  }
  const ambiguous = (s: WnSynset) => (lemmaCount.get(s.words[0]) ?? 0) > 1;
  const placeName = (p: WnSynset) =>
    bridgeTypes && ambiguous(p) ? `the ${typeOf(p)} ${p.words[0]}` : p.words[0];
  const corpus: Doc[] = [];
  for (const c of countries) corpus.push(...countryDocs(c, byCode));
  for (const s of instances) {
    const title = ambiguous(s) ? `${s.words[0]} (${typeOf(s)})` : s.words[0];
    corpus.push(wordnetDoc(s, wn, linked, title, placeName));
  }

  // --- places linked to countries through part-of --------------------------------------------------------
  const reserved = new Set<string>();
  for (const c of countries) for (const n of [...c.aliases, ...c.capitals]) reserved.add(n.toLowerCase());
  const usable = (s: WnSynset) => {
    const type = typeOf(s);
    const h = wn.get(targets(s, '@i')[0]);
    return (
      h !== undefined &&
      targets(h, '@i').length === 0 &&
      !linked.has(s.offset) &&
      !/country|capital|camp/i.test(type) &&
      (lemmaTypeCount.get(`${type}|${s.words[0]}`) ?? 0) === 1 &&
      !reserved.has(s.words[0].toLowerCase())
    );
  };
  const directCountry = (s: WnSynset): Country | undefined => {
    const cs = targets(s, '#p').filter((o) => linked.has(o));
    return cs.length === 1 ? linked.get(cs[0]) : undefined;
  };
  const places: Place[] = [];
  const chained: Place[] = [];
  for (const s of instances) {
    if (!usable(s)) continue;
    const direct = targets(s, '#p').filter((o) => linked.has(o));
    if (direct.length > 0) {
      const c = directCountry(s);
      if (c !== undefined && c.capitals.length > 0)
        places.push({ syn: s, name: s.words[0], type: typeOf(s), country: c });
      continue;
    }
    const mids = targets(s, '#p');
    if (mids.length !== 1) continue;
    const m = wn.get(mids[0]);
    if (m === undefined || !usable(m) || targets(m, '@i').length === 0) continue;
    const c = directCountry(m);
    if (c === undefined || c.capitals.length === 0) continue;
    const mid: Place = { syn: m, name: m.words[0], type: typeOf(m), country: c };
    chained.push({ syn: s, name: s.words[0], type: typeOf(s), country: c, mid });
  }

  // --- questions ------------------------------------------------------------------------------------------
  const drafts: Draft[] = [];
  const add = (d: Draft) => drafts.push(d);
  const capList = (c: Country) => c.capitals;
  const curAnswers = (c: Country) => uniqCaseless(c.currencies.flatMap((x) => [x.name, x.code]));
  const curEvidence = (c: Country) => c.currencies[0].name;
  const capQ = (c: Country) => (c.capitals.length === 1 ? c.capitals[0] : undefined);

  const languageCount = new Map<string, number>();
  for (const c of countries)
    for (const l of c.languages) languageCount.set(l, (languageCount.get(l) ?? 0) + 1);
  for (const c of countries) {
    const cap = capQ(c);
    if (c.capitals.length > 0)
      add({
        key: `capital-${c.code}`,
        kind: 'capital',
        hops: 1,
        question: `What is the capital of ${c.name}?`,
        answers: capList(c),
        supportingDocs: [docId.capital(c)],
        evidence: [c.capitals[0]],
        entities: [c.name, ...c.capitals],
        countries: [c],
      });
    if (c.currencies.length > 0)
      add({
        key: `currency-${c.code}`,
        kind: 'currency',
        hops: 1,
        question: `What currency is used in ${c.name}?`,
        answers: curAnswers(c),
        supportingDocs: [docId.currency(c)],
        evidence: [curEvidence(c)],
        entities: [c.name],
        countries: [c],
      });
    if (cap === undefined) continue;
    if (c.currencies.length > 0)
      add({
        key: `capital_currency-${c.code}`,
        kind: 'capital_currency',
        hops: 2,
        question: `What currency is used in the country whose capital is ${cap}?`,
        answers: curAnswers(c),
        supportingDocs: [docId.capital(c), docId.currency(c)],
        evidence: [c.name, curEvidence(c)],
        entities: [c.name, cap],
        countries: [c],
      });
    // Only languages official in few countries: with English, French, Arabic… one retrieval of any
    // "official language" page would already hold the answer.
    if (c.languages.length > 0 && c.languages.every((l) => (languageCount.get(l) ?? 0) <= 3))
      add({
        key: `capital_language-${c.code}`,
        kind: 'capital_language',
        hops: 2,
        question: `Name an official language of the country whose capital is ${cap}.`,
        answers: c.languages,
        supportingDocs: [docId.capital(c), docId.languages(c)],
        evidence: [c.name, c.languages[0]],
        entities: [c.name, cap],
        countries: [c],
      });
    const nb = c.borders.length === 1 ? byCode.get(c.borders[0]) : undefined;
    if (nb !== undefined) {
      add({
        key: `sole_neighbor-${c.code}`,
        kind: 'sole_neighbor',
        hops: 2,
        question: `Which country is the only land neighbour of the country whose capital is ${cap}?`,
        answers: nb.aliases,
        supportingDocs: [docId.capital(c), docId.borders(c)],
        evidence: [c.name, nb.name],
        entities: [c.name, cap, nb.name],
        countries: [c, nb],
      });
      if (nb.capitals.length > 0)
        add({
          key: `neighbor_capital-${c.code}`,
          kind: 'neighbor_capital',
          hops: 3,
          question: `What is the capital of the only country that shares a land border with the country whose capital is ${cap}?`,
          answers: nb.capitals,
          supportingDocs: [docId.capital(c), docId.borders(c), docId.capital(nb)],
          evidence: [c.name, nb.name, nb.capitals[0]],
          entities: [c.name, cap, nb.name, ...nb.capitals],
          countries: [c, nb],
        });
    }
  }

  for (const p of places) {
    const c = p.country;
    const the = placePhrase(p);
    const base = { entities: [p.name, c.name, ...c.capitals], countries: [c] };
    add({
      key: `place_country-${p.syn.offset}`,
      kind: 'place_country',
      hops: 1,
      question: `In which country is ${the} located?`,
      answers: c.aliases,
      supportingDocs: [docId.wn(p.syn)],
      evidence: [c.name],
      ...base,
    });
    add({
      key: `place_capital-${p.syn.offset}`,
      kind: 'place_capital',
      hops: 2,
      question: `What is the capital of the country where ${the} is located?`,
      answers: c.capitals,
      supportingDocs: [docId.wn(p.syn), docId.capital(c)],
      evidence: [c.name, c.capitals[0]],
      ...base,
    });
    if (c.currencies.length > 0)
      add({
        key: `place_currency-${p.syn.offset}`,
        kind: 'place_currency',
        hops: 2,
        question: `What currency is used in the country where ${the} is located?`,
        answers: curAnswers(c),
        supportingDocs: [docId.wn(p.syn), docId.currency(c)],
        evidence: [c.name, curEvidence(c)],
        ...base,
      });
  }

  for (const p of chained) {
    const c = p.country;
    const mid = p.mid as Place;
    const the = placePhrase(p);
    const noun = midNoun(mid.type);
    const base = { entities: [p.name, mid.name, c.name, ...c.capitals], countries: [c] };
    add({
      key: `place_mid_capital-${p.syn.offset}`,
      kind: 'place_mid_capital',
      hops: 3,
      question: `What is the capital of the country containing the ${noun} that ${the} is part of?`,
      answers: c.capitals,
      supportingDocs: [docId.wn(p.syn), docId.wn(mid.syn), docId.capital(c)],
      evidence: [mid.name, c.name, c.capitals[0]],
      ...base,
    });
    if (c.currencies.length > 0)
      add({
        key: `place_mid_currency-${p.syn.offset}`,
        kind: 'place_mid_currency',
        hops: 3,
        question: `What currency is used in the country containing the ${noun} that ${the} is part of?`,
        answers: curAnswers(c),
        supportingDocs: [docId.wn(p.syn), docId.wn(mid.syn), docId.currency(c)],
        evidence: [mid.name, c.name, curEvidence(c)],
        ...base,
      });
  }
  // Drop leaks: an answer named in the question, or held by a document before the last hop's.
  const docText = new Map(corpus.map((doc) => [doc.id, `${doc.title} ${doc.contents}`]));
  const clean = drafts.filter(
    (d) =>
      !containsAnswer(d.question, d.answers) &&
      d.supportingDocs.slice(0, -1).every((id) => !containsAnswer(docText.get(id) ?? '', d.answers)),
  );
  return { corpus, drafts: clean, countries };
}

/** Comparison questions between two countries of the same split. */
function comparisons(countries: Country[], rng: Rng): Draft[] {
  const out: Draft[] = [];
  const withArea = countries.filter((c) => c.area > 0);
  const a = shuffled(withArea, rng);
  const b = shuffled(withArea, rng);
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i] === x ? b[(i + 1) % b.length] : b[i];
    if (y === undefined || y === x || Math.abs(x.area - y.area) / Math.max(x.area, y.area) < 0.05) continue;
    const big = x.area > y.area ? x : y;
    out.push({
      key: `compare_area-${x.code}-${y.code}`,
      kind: 'compare_area',
      hops: 2,
      question: `Which country has the larger area, ${x.name} or ${y.name}?`,
      answers: big.aliases,
      supportingDocs: [docId.geography(x), docId.geography(y)],
      evidence: [formatArea(x.area), formatArea(y.area)],
      entities: [x.name, y.name],
      countries: [x, y],
    });
  }
  const land = shuffled(
    countries.filter((c) => c.landlocked),
    rng,
  );
  const sea = shuffled(
    countries.filter((c) => !c.landlocked),
    rng,
  );
  for (let i = 0; i < land.length && i < sea.length; i++) {
    const [x, y] = rng() < 0.5 ? [land[i], sea[i]] : [sea[i], land[i]];
    out.push({
      key: `compare_landlocked-${x.code}-${y.code}`,
      kind: 'compare_landlocked',
      hops: 2,
      question: `Which of these two countries is landlocked, ${x.name} or ${y.name}?`,
      answers: land[i].aliases,
      supportingDocs: [docId.geography(x), docId.geography(y)],
      evidence: ['landlocked', 'landlocked'],
      entities: [x.name, y.name],
      countries: [x, y],
    });
  }
  return out;
}

function cacheFolder(cacheDir: string, o: DataOptions): string {
  return join(
    cacheDir,
    `multihop-v${DATASET_VERSION}-seed${o.seed}-val${o.validationFraction}-test${o.testFraction}-max${o.maxPerCountryAndKind}${o.bridgeTypes ? '-types' : ''}`,
  );
}

/**
 * Builds (or loads from `cacheDir`) the multi-hop QA dataset.
 * Test and validation questions only involve entities (countries, capitals, places) that never occur in
 * training questions: countries are split first, and a question belongs to the split of all its countries.
 */
export function buildMultihopDataset(options: BuildOptions = {}): MultihopDataset {
  const o = {
    seed: options.seed ?? 0,
    validationFraction: options.validationFraction ?? 0.15,
    testFraction: options.testFraction ?? 0.15,
    maxPerCountryAndKind: options.maxPerCountryAndKind ?? 12,
    bridgeTypes: options.bridgeTypes ?? false,
  };
  const folder = options.cacheDir === undefined ? undefined : cacheFolder(options.cacheDir, o);
  if (folder !== undefined && options.sources === undefined && existsSync(join(folder, 'meta.json'))) {
    const cached = readCache(folder);
    if ('dataset' in cached) return cached.dataset;
    const warn = options.onWarning ?? ((m: string) => process.emitWarning(m, 'DatasetCacheWarning'));
    warn(`the dataset cache is damaged and is rebuilt: ${cached.problem}`);
  }
  const dataset = buildFresh(options.sources ?? loadKnowledgeSources(), o);
  if (folder !== undefined) {
    writeJsonlAtomic(join(folder, 'corpus.jsonl'), dataset.corpus);
    for (const s of ['train', 'validation', 'test'] as const)
      writeJsonlAtomic(join(folder, `${s}.jsonl`), dataset.questions[s]);
    // meta.json last: its presence marks a complete cache.
    writeFileAtomicSync(
      join(folder, 'meta.json'),
      `${JSON.stringify({ version: DATASET_VERSION, ...o, stats: datasetStats(dataset) }, null, 2)}\n`,
    );
  }
  return dataset;
}

const CACHE_FILES = ['corpus', 'train', 'validation', 'test'] as const;

/**
 * The cached dataset, or what is wrong with it (`file:line: …`). The cache is derived data, written atomically
 * with meta.json last, so a bad line is damage from outside (disk, a hand edit, another tool): rebuilding it
 * (about a second) is always the fix, and the caller does that rather than make the user find the folder.
 */
function readCache(folder: string): { dataset: MultihopDataset } | { problem: string } {
  const file = (name: (typeof CACHE_FILES)[number]) => join(folder, `${name}.jsonl`);
  const missing = CACHE_FILES.find((name) => !existsSync(file(name)));
  if (missing !== undefined) return { problem: `${file(missing)} is missing` };
  try {
    return {
      dataset: {
        corpus: loadCorpusJsonl(file('corpus')),
        questions: {
          train: loadQuestionsJsonl(file('train')),
          validation: loadQuestionsJsonl(file('validation')),
          test: loadQuestionsJsonl(file('test')),
        },
      },
    };
  } catch (e) {
    if (e instanceof JsonlError) return { problem: e.message };
    throw e;
  }
}

function buildFresh(src: KnowledgeSources, o: DataOptions): MultihopDataset {
  const rng = mulberry32(o.seed);
  const { corpus, drafts, countries } = generate(src, o.bridgeTypes);
  const order = shuffled(countries, rng);
  const nTest = Math.round(order.length * o.testFraction);
  const nVal = Math.round(order.length * o.validationFraction);
  const splitOf = new Map<string, keyof QaSplits>();
  for (let i = 0; i < order.length; i++) {
    splitOf.set(order[i].code, i < nTest ? 'test' : i < nTest + nVal ? 'validation' : 'train');
  }

  const bySplit: Record<keyof QaSplits, Draft[]> = { train: [], validation: [], test: [] };
  for (const s of ['train', 'validation', 'test'] as const) {
    bySplit[s].push(
      ...comparisons(
        countries.filter((c) => splitOf.get(c.code) === s),
        rng,
      ),
    );
  }
  // Cap questions per (kind, country) with a seeded choice.
  const groups = new Map<string, Draft[]>();
  for (const d of drafts) {
    const splits = new Set(d.countries.map((c) => splitOf.get(c.code)));
    if (splits.size !== 1) continue; // crosses splits: dropped
    const g = `${d.kind}|${d.countries[0].code}`;
    const l = groups.get(g);
    if (l === undefined) groups.set(g, [d]);
    else l.push(d);
  }
  for (const l of groups.values()) {
    const chosen = l.length > o.maxPerCountryAndKind ? shuffled(l, rng).slice(0, o.maxPerCountryAndKind) : l;
    for (const d of chosen) bySplit[splitOf.get(d.countries[0].code) as keyof QaSplits].push(d);
  }
  // Entity-level disjointness (names can collide across countries): test first, then validation, then train.
  const blocked = new Set<string>();
  const result = {} as QaSplits;
  for (const s of ['test', 'validation', 'train'] as const) {
    const kept = bySplit[s]
      .sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
      .filter((d) => !(d.entities ?? []).some((e) => blocked.has(e.toLowerCase())));
    for (const d of kept) for (const e of d.entities ?? []) blocked.add(e.toLowerCase());
    result[s] = shuffled(kept, rng).map(({ key, countries: _c, ...rest }) => ({ id: key, ...rest }));
  }
  return { corpus, questions: { train: result.train, validation: result.validation, test: result.test } };
}

/** Question counts per split and kind. */
export function datasetStats(d: MultihopDataset): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const s of ['train', 'validation', 'test'] as const) {
    for (const q of d.questions[s]) {
      if (out[q.kind] === undefined) out[q.kind] = { hops: q.hops, train: 0, validation: 0, test: 0 };
      out[q.kind][s]++;
    }
  }
  return out;
}

/** Reads `meta.json` of a cache folder, if any (for tools). */
export function readCacheMeta(folder: string): unknown {
  const p = join(folder, 'meta.json');
  if (!existsSync(p)) return undefined;
  try {
    return JSON.parse(readFileSync(p, 'utf8'));
  } catch (e) {
    throw new Error(`${p}: invalid JSON (${(e as Error).message})`);
  }
}
