import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokenizer, pretokenize, trainBpe } from '../src/index.js';
import { englishLike } from './tokenizer-corpus.js';

const SPECIALS = [
  '<search>',
  '</search>',
  '<result>',
  '</result>',
  '<answer>',
  '</answer>',
  '<tool_call>',
  '</tool_call>',
  '<eos>',
  '<pad>',
];

let tok: Tokenizer;
let dir: string;

beforeAll(async () => {
  tok = trainBpe([englishLike(200_000, 1)], { vocabSize: 800, specialTokens: SPECIALS });
  dir = await mkdtemp(join(tmpdir(), 'tokenizer-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pretokenize', () => {
  it('splits GPT-2 style: words with their leading space, contractions, numbers, punctuation, whitespace', () => {
    expect(pretokenize("Hello world's 123 apples!!  ok\n")).toEqual([
      'Hello',
      ' world',
      "'s",
      ' 123',
      ' apples',
      '!!',
      ' ',
      ' ok',
      '\n',
    ]);
    expect(pretokenize('héllo мир 日本')).toEqual(['héllo', ' мир', ' 日本']);
  });

  it('loses nothing: the pieces concatenate back to the text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => pretokenize(s).join('') === s));
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => pretokenize(s, 'split-digits-punct').join('') === s),
    );
  });

  it('split-digits-punct: one piece per digit and per punctuation mark, words as in GPT-2', () => {
    expect(pretokenize("is Washington D.C.. Area 181,035 km², St. George's", 'split-digits-punct')).toEqual([
      'is',
      ' Washington',
      ' D',
      '.',
      'C',
      '.',
      '.',
      ' Area',
      ' ',
      '1',
      '8',
      '1',
      ',',
      '0',
      '3',
      '5',
      ' km',
      '²',
      ',',
      ' St',
      '.',
      ' George',
      "'s",
    ]);
  });

  it('split-punct-digits3: digits in runs of up to three, left to right; marks and words as split-digits-punct', () => {
    const text = "is Washington D.C.. Area 181,035 km², 1285216 St. George's";
    expect(pretokenize(text, 'split-punct-digits3')).toEqual([
      ...pretokenize('is Washington D.C.. Area ', 'split-digits-punct'),
      ...['181', ',', '035', ' km', '²', ',', ' ', '128', '521', '6'],
      ...pretokenize(" St. George's", 'split-digits-punct'),
    ]);
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => pretokenize(s, 'split-punct-digits3').join('') === s),
    );
  });

  it('split-punct-digits3: a figure copied out of a sentence is the same tokens, one or two per group', () => {
    const figures = Array.from({ length: 300 }, (_, i) => `${(i * 7919) % 1000},${(i * 104729) % 1000} `);
    const split = trainBpe([englishLike(50_000, 2), `Its area is ${figures.join('')}`.repeat(3)], {
      vocabSize: 600,
      pretokenizer: 'split-punct-digits3',
    });
    const inSentence = split.encode('Its area is 246,700 square kilometres.');
    const alone = split.encode(' 246,700');
    const pieces = alone.map((id) => split.decode([id]));
    expect(pieces.join('')).toBe(' 246,700');
    // The space is a piece of its own before a digit, so the figure's tokens follow `is` in the sentence.
    expect(inSentence.join(',')).toContain(alone.slice(1).join(','));
    expect(alone.length - 1).toBeLessThanOrEqual(2 * 2 + 1);
    const restored = Tokenizer.fromJSON(JSON.parse(JSON.stringify(split)));
    expect(restored.pretokenizer).toBe('split-punct-digits3');
    expect(restored.encode('12,345,678')).toEqual(split.encode('12,345,678'));
  });

  it('split-digits-punct: a name copied out of a sentence is the same tokens as inside it', () => {
    const split = trainBpe([englishLike(50_000, 2), 'Washington D.C.. '.repeat(50), '181,035 '.repeat(50)], {
      vocabSize: 400,
      pretokenizer: 'split-digits-punct',
    });
    const inSentence = split.encode('The capital is Washington D.C..');
    const alone = split.encode(' Washington D.C.');
    expect(inSentence.slice(-alone.length - 1, -1)).toEqual(alone);
    const digits = split.encode(' 181,035').map((id) => split.decode([id]));
    expect(digits).toEqual([' ', '1', '8', '1', ',', '0', '3', '5']);
    const restored = Tokenizer.fromJSON(JSON.parse(JSON.stringify(split)));
    expect(restored.pretokenizer).toBe('split-digits-punct');
    expect(restored.encode('D.C.. 12,345')).toEqual(split.encode('D.C.. 12,345'));
    // GPT-2's pieces merge the two final periods, so the name's last token is not in the sentence.
    const gpt2 = trainBpe([englishLike(50_000, 2), 'Washington D.C.. '.repeat(50)], { vocabSize: 400 });
    const tail = gpt2.encode('The capital is Washington D.C..');
    expect(tail.slice(-gpt2.encode(' Washington D.C.').length - 1, -1)).not.toEqual(
      gpt2.encode(' Washington D.C.'),
    );
  });
});

describe('Tokenizer round trip', () => {
  it('decode(encode(s)) === s for any well-formed Unicode string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => tok.decode(tok.encode(s)) === s),
      { numRuns: 300 },
    );
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => tok.decode(tok.encode(s)) === s));
  });

  it('round-trips text mixing specials, words and odd characters, with or without special matching', () => {
    const pieces = fc.constantFrom(...SPECIALS, ' the', 'word', '<eos', '>', '\n', '😀', '\u0000');
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string({ unit: 'binary', maxLength: 5 }))), (parts) => {
        const s = parts.join('');
        return tok.decode(tok.encode(s)) === s && tok.decode(tok.encode(s, { allowSpecial: false })) === s;
      }),
    );
  });

  it('handles long pre-tokens (heap merge path) and empty input', () => {
    const long = `${'ab'.repeat(5000)} ${'the'.repeat(3000)} ${' '.repeat(1000)}x`;
    expect(tok.decode(tok.encode(long))).toBe(long);
    expect(tok.encode('')).toEqual([]);
    expect(tok.decode([])).toBe('');
  });

  it('documents lone surrogates: they have no UTF-8 form and come back as U+FFFD', () => {
    expect(tok.decode(tok.encode('a\uD800b'))).toBe('a\uFFFDb');
  });

  it('with no merges, encodes to the UTF-8 bytes', () => {
    const bytesOnly = new Tokenizer();
    expect(bytesOnly.vocabSize).toBe(256);
    expect(bytesOnly.encode('a€')).toEqual([0x61, 0xe2, 0x82, 0xac]);
  });

  it('encodeBatch matches encode, and accepts Int32Array ids for decode', () => {
    const texts = ['one two', '<eos>', ''];
    expect(tok.encodeBatch(texts)).toEqual(texts.map((t) => tok.encode(t)));
    const ids = tok.encode('the sea');
    expect(tok.decode(Int32Array.from(ids))).toBe('the sea');
  });
});

describe('partial UTF-8', () => {
  const bytesOnly = new Tokenizer();
  const ids = bytesOnly.encode('€!'); // e2 82 ac 21

  it('decode replaces a cut character, decodeBytes keeps its bytes exactly', () => {
    expect(bytesOnly.decode(ids.slice(0, 2))).toBe('\uFFFD');
    const a = bytesOnly.decodeBytes(ids.slice(0, 2));
    const b = bytesOnly.decodeBytes(ids.slice(2));
    expect(new TextDecoder().decode(Buffer.concat([a, b]))).toBe('€!');
  });

  it('the streaming decoder holds a split character until it is whole', () => {
    const d = bytesOnly.decoder();
    expect(ids.map((id) => d.push(id))).toEqual(['', '', '€', '!']);
    expect(d.flush()).toBe('');
    const cut = bytesOnly.decoder();
    expect(cut.push(ids.slice(0, 1))).toBe('');
    expect(cut.flush()).toBe('\uFFFD');
  });
});

describe('special tokens', () => {
  it('each special encodes to one id after the merges, and decodes back to its name', () => {
    const base = 256 + tok.numMerges;
    SPECIALS.forEach((name, i) => {
      expect(tok.tokenId(name)).toBe(base + i);
      expect(tok.encode(name)).toEqual([base + i]);
      expect(tok.idToToken(base + i)).toBe(name);
      expect(tok.isSpecial(base + i)).toBe(true);
    });
    expect(tok.vocabSize).toBe(800);
    const text = '<search>who wrote it</search><result>a man</result><answer>him</answer><eos>';
    const ids = tok.encode(text);
    expect(ids[0]).toBe(tok.tokenId('<search>'));
    expect(ids[ids.length - 1]).toBe(tok.tokenId('<eos>'));
    expect(ids.filter((id) => tok.isSpecial(id)).length).toBe(7);
    expect(tok.decode(ids)).toBe(text);
  });

  it('with allowSpecial: false, special strings are plain text', () => {
    const ids = tok.encode('x<eos>y', { allowSpecial: false });
    expect(ids.some((id) => tok.isSpecial(id))).toBe(false);
    expect(ids.length).toBeGreaterThan(3);
    expect(tok.decode(ids)).toBe('x<eos>y');
  });

  it('training never learns pieces of a special token', () => {
    const t = trainBpe([englishLike(20_000, 3).replaceAll('.', '.<eos>')], {
      vocabSize: 400,
      specialTokens: ['<eos>'],
    });
    for (let id = 256; id < 256 + t.numMerges; id++) expect(t.idToToken(id)).not.toContain('eos');
  });

  it('addSpecialTokens appends new names and keeps the ids of known ones', () => {
    const t = Tokenizer.fromJSON(tok.toJSON());
    const n = t.vocabSize;
    expect(t.addSpecialTokens(['<eos>', '<think>'])).toEqual([t.tokenId('<eos>'), n]);
    expect(t.vocabSize).toBe(n + 1);
    expect(t.encode('a<think>b')).toContain(n);
    expect(t.decode([n])).toBe('<think>');
    // A longer special wins over a shorter one that starts the same way.
    t.addSpecialTokens(['<think>!']);
    expect(t.encode('<think>!')).toEqual([n + 1]);
  });

  it('tokenId names an unknown token', () => {
    expect(() => tok.tokenId('<bogus>')).toThrow(
      'Unknown special token "<bogus>" (known: <search>, </search>',
    );
    expect(() => new Tokenizer().tokenId('<eos>')).toThrow('Unknown special token "<eos>" (none registered)');
  });

  it('refuses empty special names', () => {
    expect(() => tok.addSpecialTokens([''])).toThrow('addSpecialTokens: names[0]: a special token must be');
    expect(() => trainBpe([], { vocabSize: 300, specialTokens: ['a', ''] })).toThrow(
      'trainBpe: specialTokens[1]: a special token must be a non-empty string, got ""',
    );
  });
});

describe('tokens', () => {
  it('idToToken shows bytes in GPT-2 printable form; tokenBytes gives the raw bytes', () => {
    const [the] = tok.encode(' the');
    expect(tok.idToToken(the)).toBe('Ġthe');
    expect(new TextDecoder().decode(tok.tokenBytes(the))).toBe(' the');
    expect(tok.idToToken(10)).toBe('Ċ');
    expect(tok.idToToken(65)).toBe('A');
  });

  it('out-of-range ids throw, naming the id', () => {
    expect(() => tok.decode([1, 800])).toThrow('Token id 800 is out of range: the vocabulary has ids 0..799');
    expect(() => tok.decode([-1])).toThrow('Token id -1 is out of range');
    expect(() => tok.decodeBytes([1.5])).toThrow('Token id 1.5 is out of range');
    expect(() => tok.idToToken(1000)).toThrow('Token id 1000 is out of range');
  });
});

describe('save and load', () => {
  const sample = `${englishLike(5_000, 9)}<tool_call>{"q": "x"}</tool_call>ünïcödé 😀<pad>`;

  it('toJSON / fromJSON round-trips through a JSON string with identical encodings', () => {
    const copy = Tokenizer.fromJSON(JSON.parse(JSON.stringify(tok)));
    expect(copy.toJSON()).toEqual(tok.toJSON());
    expect(copy.vocabSize).toBe(tok.vocabSize);
    expect(copy.encode(sample)).toEqual(tok.encode(sample));
  });

  it('save writes atomically (no temporary files left) and load restores the tokenizer', async () => {
    const path = join(dir, 'nested', 'tok.json');
    await tok.save(path);
    await tok.save(path); // overwrite
    expect(await readdir(join(dir, 'nested'))).toEqual(['tok.json']);
    const loaded = await Tokenizer.load(path);
    expect(loaded.encode(sample)).toEqual(tok.encode(sample));
    expect(loaded.specialTokens).toEqual(SPECIALS);
    expect(JSON.parse(await readFile(path, 'utf8')).type).toBe('byte-bpe');
  });

  it('a missing or malformed file gives an error naming the file and the field', async () => {
    const path = join(dir, 'bad.json');
    const good = tok.toJSON();
    const cases: Array<[unknown, string]> = [
      [[1, 2], 'expected a JSON object, got [1,2]'],
      [{ ...good, type: undefined }, 'missing field "type"'],
      [{ ...good, version: 2 }, 'field "version" must be 1, got 2'],
      [
        { ...good, pretokenizer: 'cl100k' },
        'field "pretokenizer" must be "gpt2", "split-digits-punct" or "split-punct-digits3", got "cl100k"',
      ],
      [{ ...good, merges: undefined }, 'missing field "merges"'],
      [{ ...good, merges: {} }, 'field "merges" must be an array, got {}'],
      [
        {
          ...good,
          merges: [
            [1, 2],
            [3, 257],
          ],
        },
        'field "merges[1]" must be a pair of token ids below 257, got [3,257]',
      ],
      [{ ...good, merges: [[1, 'a']] }, 'field "merges[0]" must be a pair of token ids below 256'],
      [{ ...good, specialTokens: undefined }, 'missing field "specialTokens"'],
      [{ ...good, specialTokens: ['<a>', 3] }, 'field "specialTokens[1]" must be a non-empty string, got 3'],
      [{ ...good, specialTokens: ['<a>', '<a>'] }, 'field "specialTokens[1]" repeats "<a>"'],
    ];
    for (const [json, message] of cases) {
      const body = JSON.stringify(json);
      await writeFile(path, body);
      await expect(Tokenizer.load(path)).rejects.toThrow(`Invalid tokenizer file ${path}: ${message}`);
      expect(() => Tokenizer.fromJSON(JSON.parse(body))).toThrow(`Invalid tokenizer JSON: ${message}`);
    }
    await writeFile(path, '{"type": "byte-bpe",');
    await expect(Tokenizer.load(path)).rejects.toThrow(`Invalid tokenizer file ${path}: not valid JSON`);
    const missing = join(dir, 'missing.json');
    await expect(Tokenizer.load(missing)).rejects.toThrow(`Cannot read tokenizer file ${missing}: ENOENT`);
  });
});
