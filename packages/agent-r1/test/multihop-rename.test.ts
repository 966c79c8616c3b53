import { Generator } from '@agent-r1/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import {
  corpusNamePieces,
  corpusWords,
  entityRenamer,
  madeUpName,
  namePieces,
  renamePool,
  typeAdjectives,
} from '../src/tasks/multihop-qa/rename.js';

const example: QaExample = {
  id: 'place_capital-1',
  question: 'What is the capital of the country where the city Trondheim is located?',
  answers: ['Oslo'],
  hops: 2,
  kind: 'place_capital',
  supportingDocs: ['wordnet:1', 'country:NOR:capital'],
  evidence: ['Norway', 'Oslo'],
  entities: ['Trondheim', 'Norway', 'Oslo'],
};

/** An area comparison of `example`'s country with Malta. */
const compare: QaExample = {
  ...example,
  question: 'Which country has the larger area, Norway or Malta?',
  answers: ['Norway'],
  kind: 'compare_area',
  evidence: ['323,802', '316'],
  entities: ['Norway', 'Malta'],
};

const texts = [
  'Question: What is the capital of the country where the city Trondheim is located?\n',
  '<search>Trondheim</search>',
  '<result>Doc 1 (Trondheim): Trondheim: a port in central Norway. Doc 2 (Trondheim Fjord): Trondheim Fjord: a long inlet of the Norwegian Sea.</result>',
  '<search>Norway capital</search>',
  '<result>Doc 1 (Norway (capital)): The capital of Norway is Oslo. Norway uses the Norwegian krone (NOK).</result>',
  '<answer>Oslo</answer>',
];

const pool = ['Lima', 'Peru', 'Kampala', 'Uganda', 'Oslo'];

/** The page a comparison with Norway reads. */
const NORWAY_AREA =
  '<result>Doc 1 (Norway (geography)): Norway is not landlocked. Its area is 323,802 square kilometres.</result>';

/** `compare`'s episode: its question, the two pages it reads and its compare call. */
const COMPARE_EPISODE = [
  compare.question,
  NORWAY_AREA,
  '<result>Doc 1 (Malta (geography)): Malta is not landlocked. Its area is 316 square kilometres.</result>',
  '<compare> Norway 323,802 ; Malta 316</compare>',
];

describe('entityRenamer', () => {
  it('replaces every mentioned name by one other name, the same in every text, and nothing else', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), (seed) => {
        const renaming = entityRenamer(example, texts, pool, new Generator(seed));
        const out = texts.map(renaming.apply);
        // Restoring gives the texts back: a renamed search or answer can be run and scored as the real one.
        expect(out.map(renaming.restore)).toEqual(texts);
        const city = /city (.+) is located/.exec(out[0])![1];
        expect(out[1]).toBe(`<search>${city}</search>`);
        const country = /central (.+)\. Doc 2/.exec(out[2])![1];
        expect(out[3]).toBe(`<search>${country} capital</search>`);
        // Names may end in a period of their own (`Kalo K.B.`): the country's name marks where the capital ends.
        const capital = /The capital of (.+?) is (.+)\. \1 uses/.exec(out[4])![2];
        expect(out[5]).toBe(`<answer>${capital}</answer>`);
        const fjord = /Doc 2 \((.+)\): /.exec(out[2])![1];
        const names = [city, country, capital, fjord];
        expect(new Set(names).size).toBe(4);
        for (const original of ['Trondheim', 'Norway', 'Oslo', 'Trondheim Fjord'])
          expect(names).not.toContain(original);
        // Words that only contain a name ("Norwegian") and the template's words stay as they were.
        expect(out[2]).toContain('a long inlet of the Norwegian Sea');
        expect(out[4]).toContain('Norwegian krone');
        // The currency code is not one of the example's names here, so it stays too.
        expect(out[4]).toContain('(NOK)');
      }),
      { numRuns: 50 },
    );
  });

  it('renames currency codes that are answers to made-up codes of the same length', () => {
    const currency: QaExample = {
      ...example,
      question: 'What currency is used in Belarus?',
      answers: ['Belarusian ruble', 'BYN'],
      evidence: ['Belarusian ruble'],
      entities: ['Belarus'],
    };
    const doc = '<result>Doc 1 (Belarus (currency)): Belarus uses the Belarusian ruble (BYN).</result>';
    const out = entityRenamer(currency, [currency.question, doc], pool, new Generator(3)).apply(doc);
    const m = /Doc 1 \((.+) \(currency\)\): (.+) uses the (.+) \(([A-Z]+)\)\./.exec(out)!;
    expect(m[1]).toBe(m[2]);
    expect(m[1]).not.toBe('Belarus');
    expect(m[3]).not.toBe('Belarusian ruble');
    expect(m[4]).toMatch(/^[A-Z]{3}$/);
    expect(m[4]).not.toBe('BYN');
  });

  it("redraws a comparison's two areas in the same order, leaving other figures and the answer as they were", () => {
    const docs = [
      NORWAY_AREA,
      '<result>Doc 1 (Malta (geography)): Its area is 316 square kilometres. Doc 2 (Rome): 2,316,000 people.</result>',
    ];
    const texts = [compare.question, ...docs, '<answer>Norway</answer>'];
    const seen = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const renaming = entityRenamer(compare, texts, pool, new Generator(seed));
      const out = texts.map(renaming.apply);
      expect(out.map(renaming.restore)).toEqual(texts);
      const [big, small] = out.slice(1, 3).map((d) => /area is ([\d,]+) square/.exec(d)![1]);
      const value = (f: string) => Number(f.replaceAll(',', ''));
      expect(value(big)).toBeGreaterThan(value(small) * 1.05);
      expect(out[2]).toContain('2,316,000 people');
      const winner = /larger area, (.+) or /.exec(out[0])![1];
      expect(out[3]).toBe(`<answer>${winner}</answer>`);
      seen.add(big);
    }
    expect(seen.size).toBeGreaterThan(25);
  });

  it('with noLonger draws only the names it allows, and figures of as many digits, in the same order', () => {
    const texts = COMPARE_EPISODE;
    const noLonger = (name: string, other: string) => other.length <= name.length;
    const seen = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const renaming = entityRenamer(compare, texts, pool, new Generator(seed), { noLonger });
      const out = texts.map(renaming.apply);
      expect(out.map(renaming.restore)).toEqual(texts);
      const [, big, bigArea, small, smallArea] = /^<compare> (.+) ([\d,]+) ; (.+) ([\d,]+)<\/compare>$/.exec(
        out[3],
      )!;
      expect(big.length).toBeLessThanOrEqual('Norway'.length);
      expect(small.length).toBeLessThanOrEqual('Malta'.length);
      const value = (f: string) => Number(f.replaceAll(',', ''));
      expect(String(value(bigArea))).toHaveLength(6);
      expect(smallArea).toHaveLength(3);
      expect(value(bigArea)).toBeGreaterThan(value(smallArea) * 1.05);
      seen.add(bigArea);
    }
    expect(seen.size).toBeGreaterThan(25);
  });

  it("keeps a landlocked comparison's word: it renames the two options, not what their pages say of them", () => {
    const landlocked: QaExample = {
      ...example,
      question: 'Which of these two countries is landlocked, Norway or Mali?',
      answers: ['Mali'],
      kind: 'compare_landlocked',
      evidence: ['landlocked', 'landlocked'],
      entities: ['Norway', 'Mali'],
    };
    const texts = [
      landlocked.question,
      NORWAY_AREA,
      '<result>Doc 1 (Mali (geography)): Mali is landlocked. Its area is 1,240,192 square kilometres.</result>',
      '<answer>Mali</answer>',
    ];
    for (let seed = 0; seed < 20; seed++) {
      const out = texts.map(entityRenamer(landlocked, texts, pool, new Generator(seed)).apply);
      const [, first, second] = /landlocked, (.+) or (.+)\?$/.exec(out[0])!;
      expect([first, second]).not.toContain('Norway');
      expect(out[1]).toContain(`${first} is not landlocked.`);
      expect(out[2]).toContain(`${second} is landlocked.`);
      expect(out[3]).toBe(`<answer>${second}</answer>`);
    }
    // Nor is the word a name another renaming could draw.
    expect(renamePool([landlocked])).toEqual(['Mali', 'Norway']);
  });

  it('names the options of a comparison alike at the share asked, and draws as before at 0', () => {
    const texts = COMPARE_EPISODE;
    const options = (out: string[]) => /larger area, (.+) or (.+)\?$/.exec(out[0])!.slice(1, 3);
    const begin = (a: string, b: string) => a.startsWith(b.split(' ')[0]) || b.startsWith(a.split(' ')[0]);
    let alike = 0;
    for (let seed = 0; seed < 40; seed++) {
      const renaming = entityRenamer(compare, texts, pool, new Generator(seed), { confusable: 1 });
      const out = texts.map(renaming.apply);
      const [first, second] = options(out);
      expect(first).not.toBe(second);
      expect(out[3]).toMatch(new RegExp(`^<compare> ${first} [\\d,]+ ; ${second} [\\d,]+</compare>$`));
      expect(out.map(renaming.restore)).toEqual(texts);
      if (begin(first, second)) alike++;
      // Without the option, or at 0, the same renaming from the same generator.
      const plain = texts.map(entityRenamer(compare, texts, pool, new Generator(seed)).apply);
      const atZero = texts.map(
        entityRenamer(compare, texts, pool, new Generator(seed), { confusable: 0 }).apply,
      );
      expect(atZero).toEqual(plain);
    }
    expect(alike).toBe(40);
    // A name drawn from the pool or made up begins like the other option's only by chance.
    const unlike = Array.from({ length: 40 }, (_, seed) =>
      options(texts.map(entityRenamer(compare, texts, pool, new Generator(seed)).apply)),
    ).filter(([a, b]) => begin(a, b));
    expect(unlike.length).toBeLessThan(4);
  });

  it("renames a typed place's adjective at the share asked, the same in every text, and draws as before at 0", () => {
    const typed: QaExample = {
      ...example,
      question: 'What is the capital of the country where the Italian region Lazio is located?',
      answers: ['Rome'],
      evidence: ['Italy', 'Rome'],
      entities: ['Lazio', 'Italy', 'Rome'],
    };
    const texts = [
      typed.question,
      '<search>Italian region Lazio</search>',
      '<result>Doc 1 (Lazio (Italian region)): Lazio is located in Italy. Lazio is an Italian region.</result>',
      '<answer>Rome</answer>',
    ];
    const words = typeAdjectives([
      { title: 'Lazio (Italian region)' },
      { title: 'Rome' },
      { title: 'Kent (town)' },
    ]);
    expect(words).toEqual(['Italian']);
    const adjectives = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const renaming = entityRenamer(typed, texts, pool, new Generator(seed), {
        typeAdjectives: { words, share: 1 },
      });
      const out = texts.map(renaming.apply);
      const [, adjective, place] = /where the (\S+) region (.+) is located\?$/.exec(out[0])!;
      expect(adjective).toMatch(/^\p{Lu}\p{L}+(ian|an|ese|ish)$/u);
      expect(adjective).not.toBe('Italian');
      expect(out[1]).toBe(`<search>${adjective} region ${place}</search>`);
      expect(out[2]).toContain(`(${place} (${adjective} region))`);
      expect(out[2]).toContain(`is an ${adjective} region.`);
      expect(out.map(renaming.restore)).toEqual(texts);
      adjectives.add(adjective);
      // At 0, or without the option, the renaming drawn without it.
      const plain = texts.map(entityRenamer(typed, texts, pool, new Generator(seed)).apply);
      const atZero = entityRenamer(typed, texts, pool, new Generator(seed), {
        typeAdjectives: { words, share: 0 },
      });
      expect(texts.map(atZero.apply)).toEqual(plain);
      expect(plain[0]).toContain('the Italian region');
    }
    expect(adjectives.size).toBeGreaterThan(25);
    // Nor does the option at 0 draw anything: a comparison's figures, drawn after the names, are as without it.
    const withAdjective = [...COMPARE_EPISODE, 'Norway is a European country.'];
    const european = { words: ['European'], share: 0 };
    for (let seed = 0; seed < 10; seed++)
      expect(
        withAdjective.map(
          entityRenamer(compare, withAdjective, pool, new Generator(seed), { typeAdjectives: european })
            .apply,
        ),
      ).toEqual(withAdjective.map(entityRenamer(compare, withAdjective, pool, new Generator(seed)).apply));
    // A renaming that must not lengthen the texts keeps an adjective that no made-up one fits.
    const noLonger = (name: string, other: string) => other.length <= name.length;
    const short = entityRenamer(typed, texts, pool, new Generator(1), {
      typeAdjectives: { words: ['Italian'], share: 1 },
      noLonger: (name, other) => (name === 'Italian' ? false : noLonger(name, other)),
    });
    expect(short.apply(texts[0])).toContain('the Italian region');
  });

  it('is reproducible from the generator and leaves texts without names alone', () => {
    const a = texts.map(entityRenamer(example, texts, pool, new Generator(7)).apply);
    const b = texts.map(entityRenamer(example, texts, pool, new Generator(7)).apply);
    expect(a).toEqual(b);
    const none = { ...example, entities: [], answers: [], evidence: [] };
    const plain = ['Question: how far?', '<answer>far</answer>'];
    expect(plain.map(entityRenamer(none, plain, pool, new Generator(1)).apply)).toEqual(plain);
  });
});

describe('renamePool and madeUpName', () => {
  it('keeps short real names without digits or codes, and makes up capitalised names', () => {
    const names = renamePool([
      { ...example, answers: ['Islamic Republic of Pakistan', 'PAK', 'Pakistan'], evidence: ['1,580'] },
    ]);
    expect(names).toEqual(['Norway', 'Oslo', 'Pakistan', 'Trondheim']);
  });

  it('makes up capitalised names, a quarter of them in the punctuated shapes of real ones', () => {
    const g = new Generator(0);
    const names = Array.from({ length: 400 }, () => madeUpName(g));
    const word = '[A-Z][a-z]+';
    const shapes = [
      new RegExp(`^${word}( ${word})?$`),
      new RegExp(`^${word} [A-Z]\\.[A-Z]\\.$`),
      new RegExp(`^St\\. ${word}('s)?$`),
      new RegExp(`^${word}-(de-)?${word}$`),
      new RegExp(`^${word} and ${word}$`),
    ];
    const counts = shapes.map((re) => names.filter((n) => re.test(n)).length);
    expect(counts.reduce((a, b) => a + b)).toBe(names.length);
    expect(counts[0] / names.length).toBeGreaterThan(0.65);
    expect(counts[0] / names.length).toBeLessThan(0.85);
    for (const c of counts.slice(1)) expect(c).toBeGreaterThan(0);
    // taskOptions.punctuatedNames: the share asked for, none at 0.
    const plain = new RegExp(`^${word}( ${word})?$`);
    const share = (punctuated: number) =>
      Array.from({ length: 400 }, () => madeUpName(g, undefined, punctuated)).filter((n) => !plain.test(n))
        .length / 400;
    expect(share(0)).toBe(0);
    expect(share(0.5)).toBeGreaterThan(0.4);
    expect(share(0.5)).toBeLessThan(0.6);
  });

  it('renames a name ending in a period so that the sentence after it still reads back', () => {
    const texts = ['The capital of Norway is Oslo.'];
    let periodEnded = 0;
    for (let seed = 0; seed < 400; seed++) {
      const renaming = entityRenamer(example, texts, [], new Generator(seed));
      const renamed = renaming.apply(texts[0]);
      if (renamed.endsWith('..')) periodEnded++;
      expect(renaming.restore(renamed)).toBe(texts[0]);
    }
    expect(periodEnded).toBeGreaterThan(0);
  });

  it("glues the share of made-up words it is given from a vocabulary's pieces, never a start alone", () => {
    const vocabulary = [' Vietnam', ' war', 'ietnam', 'ota', ' 1', 'x', '<search>', ' Ab', 'Cd'];
    const codec = { decode: (ids: ArrayLike<number>) => Array.from(ids, (i) => vocabulary[i]).join('') };
    const pieces = namePieces(codec, vocabulary.length);
    expect(pieces).toEqual({ starts: ['Vietnam', 'war', 'Ab'], continuations: ['ietnam', 'ota'] });
    const g = new Generator(3);
    const glued = /^(Vietnam|War|Ab)(ietnam|ota)$/;
    const names = Array.from({ length: 400 }, () => madeUpName(g, { ...pieces, share: 0.5 }));
    const words = names.flatMap((n) => n.split(/[ .'-]+/).filter((w) => w.length > 2 && w !== 'and'));
    const fromVocabulary = words.filter((w) => glued.test(w)).length;
    expect(fromVocabulary / words.length).toBeGreaterThan(0.35);
    expect(fromVocabulary / words.length).toBeLessThan(0.65);
    expect(words.some((w) => w === 'Vietnam' || w === 'War')).toBe(false);
    // A glued word that is a real name (`Abota`, here) is never made up.
    const avoid = corpusWords([{ title: 'Abota (capital)', contents: 'Abota is a city.' }]);
    expect(avoid).toEqual(new Set(['abota', 'capital', 'is', 'a', 'city']));
    const h = new Generator(3);
    const guarded = Array.from({ length: 400 }, () => madeUpName(h, { ...pieces, avoid, share: 0.5 }));
    expect(names.some((n) => n.includes('Abota'))).toBe(true);
    expect(guarded.some((n) => n.includes('Abota'))).toBe(false);
  });

  it("never glues onto one of the corpus's whole words, as written or as the tokenizer reads it", () => {
    const vocabulary = [
      ' Vietnam',
      ' Viet',
      ' War',
      'ietnam',
      'ota',
      'ship',
      'namota',
      ' ',
      'V',
      'i',
      'e',
      't',
    ];
    // Greedy longest match, as a BPE tokenizer reads ` Vietnamota`: ` Vietnam` + `ota`.
    const encode = (text: string) => {
      const ids: number[] = [];
      for (let at = 0; at < text.length; ) {
        const id = vocabulary
          .map((piece, i) => ({ piece, i }))
          .filter(({ piece }) => text.startsWith(piece, at))
          .sort((a, b) => b.piece.length - a.piece.length)[0].i;
        ids.push(id);
        at += vocabulary[id].length;
      }
      return ids;
    };
    const codec = {
      encode,
      decode: (ids: ArrayLike<number>) => Array.from(ids, (i) => vocabulary[i]).join(''),
    };
    const corpus = [
      { title: 'Vietnam', contents: 'Vietnam lies on the South China Sea; the war ended in 1975.' },
    ];
    const pieces = corpusNamePieces(codec, vocabulary.length, corpus);
    expect(pieces.starts).toEqual(['Viet']);
    const g = new Generator(5);
    const words = Array.from({ length: 300 }, () => madeUpName(g, { ...pieces, share: 1 })).flatMap((n) =>
      n.split(/[ .'-]+/),
    );
    expect(words.some((w) => /^Viet(ota|ship)$/.test(w))).toBe(true);
    // `Viet` + `namota` is read ` Vietnam` + `ota`: the whole word going on, so never made up.
    expect(words.some((w) => /^(Vietnam|War)./.test(w))).toBe(false);
  });

  it('draws as before where no share is given, so that a run without the option renames as it did', () => {
    const pieces = { starts: ['Vietnam'], continuations: ['ota'], share: 0 };
    for (let seed = 0; seed < 50; seed++) {
      const without = texts.map(entityRenamer(example, texts, pool, new Generator(seed)).apply);
      const withNone = texts.map(entityRenamer(example, texts, pool, new Generator(seed), { pieces }).apply);
      expect(withNone).toEqual(without);
    }
  });
});
