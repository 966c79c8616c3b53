/**
 * User data is refused up front, with `file:line` and the field, rather than changed, dropped or guessed at
 * (issue #35 item 8): bytes that are not UTF-8 (in question and corpus files, and in the search service's
 * request bodies), bad `hops` and `id` values, questions the search index would refuse as queries, answers
 * that are not strings; a damaged dataset cache is rebuilt with a warning that names its line.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildMultihopDataset,
  JsonlError,
  loadCorpusJsonl,
  loadQuestionsJsonl,
} from '../src/tasks/multihop-qa/data/index.js';
import { decodeUtf8, invalidUtf8Offset } from '../src/tasks/multihop-qa/data/utf8.js';
import { multihopQaTask } from '../src/tasks/multihop-qa/index.js';
import {
  DEFAULT_QUERY_LIMITS,
  SearchIndex,
  startSearchServer,
} from '../src/tasks/multihop-qa/search/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'user-data-checks-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let files = 0;
/** A file of `lines` (strings, or raw bytes) joined by newlines. */
const file = (lines: (string | Uint8Array)[]) => {
  const p = join(tmp, `f${files++}.jsonl`);
  const parts = lines.flatMap((l, i) => [
    typeof l === 'string' ? Buffer.from(l) : Buffer.from(l),
    ...(i < lines.length - 1 ? [Buffer.from('\n')] : []),
  ]);
  writeFileSync(p, Buffer.concat([...parts, Buffer.from('\n')]));
  return p;
};
const q = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ question: 'What is the capital of France?', golden_answers: ['Paris'], ...extra });
const doc = (extra: Record<string, unknown> = {}) => JSON.stringify({ id: 'd', contents: 'text', ...extra });

/** The error `load` throws: a JsonlError whose message starts with `file:line: `. */
function refused(load: () => unknown, path: string, line: number): string {
  try {
    load();
  } catch (e) {
    expect(e).toBeInstanceOf(JsonlError);
    expect((e as JsonlError).line).toBe(line);
    expect((e as Error).message.startsWith(`${path}:${line}: `)).toBe(true);
    return (e as Error).message;
  }
  throw new Error(`${path} was accepted; expected an error at line ${line}`);
}

describe('invalid UTF-8 in questions and corpus files', () => {
  const latin1 = (s: string) => Buffer.from(s, 'latin1'); // "é" as the one byte 0xE9

  it('is refused with the file, the line and the byte, not read as U+FFFD', () => {
    const line = q({ question: 'Where is Besançon?' });
    const qs = file([q(), latin1(line)]);
    expect(refused(() => loadQuestionsJsonl(qs), qs, 2)).toContain(
      `invalid UTF-8 (byte 0xE7 at column ${line.indexOf('ç') + 1})`,
    );
    const cs = file([doc(), doc({ id: 'e' }), latin1(doc({ id: 'f', contents: 'café' }))]);
    expect(refused(() => loadCorpusJsonl(cs), cs, 3)).toMatch(/invalid UTF-8 \(byte 0xE9/);
    // A sequence cut short by the end of the file, and an overlong form.
    const cut = file([q(), Buffer.from([0x7b, 0xe2, 0x82])]);
    expect(refused(() => loadQuestionsJsonl(cut), cut, 2)).toMatch(/invalid UTF-8 \(byte 0xE2 at column 2\)/);
    const overlong = file([Buffer.from([0xc0, 0xaf])]);
    expect(refused(() => loadQuestionsJsonl(overlong), overlong, 1)).toMatch(/byte 0xC0 at column 1/);
  });

  it('still reads UTF-8, with or without a byte-order mark', () => {
    const qs = file([q({ question: 'Where is Besançon? 東京?' })]);
    expect(loadQuestionsJsonl(qs)[0].question).toBe('Where is Besançon? 東京?');
    const bom = file([Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(q())])]);
    expect(loadQuestionsJsonl(bom)[0].answers).toEqual(['Paris']);
  });

  it('refuses a lone surrogate escape, which has no UTF-8 form', () => {
    const p = file([q(), '{"question": "a\\ud800b?", "golden_answers": ["x"]}']);
    expect(refused(() => loadQuestionsJsonl(p), p, 2)).toMatch(/"question" holds a lone surrogate/);
    const pair = file(['{"question": "a\\ud83d\\ude00?", "golden_answers": ["x"]}']);
    expect(loadQuestionsJsonl(pair)[0].question).toBe('a😀?');
  });

  it('locates the first bad byte exactly where the strict decoder fails', () => {
    const bytes = fc.uint8Array({ maxLength: 24 }).map((b) => b.map((x) => (x < 96 ? x + 32 : x)));
    fc.assert(
      fc.property(bytes, (b) => {
        let ok = true;
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(b);
        } catch {
          ok = false;
        }
        const at = invalidUtf8Offset(b);
        expect(at === -1).toBe(ok);
        if (!ok) {
          // Everything before the offset is UTF-8; the sequence at it is not (on its own or with what follows).
          expect(invalidUtf8Offset(b.subarray(0, at))).toBe(-1);
          expect('problem' in decodeUtf8(b)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('question fields', () => {
  it('refuses a hops that is not an integer from 1 to 16', () => {
    for (const hops of [-3, 0, 1.5, 1e300, 17, '__proto__', '2', null, [2]]) {
      const p = file([q({ hops: 1 }), q({ id: 'b', hops })]);
      expect(refused(() => loadQuestionsJsonl(p), p, 2)).toMatch(
        /"hops" must be an integer from 1 to 16 when given, got /,
      );
    }
    const ok = file([q({ hops: 1 }), q({ id: 'b', hops: 16 })]);
    expect(loadQuestionsJsonl(ok).map((x) => x.hops)).toEqual([1, 16]);
  });

  it('keeps hops optional, but on every question or on none', () => {
    const none = file([q(), q({ id: 'b' })]);
    expect(loadQuestionsJsonl(none).map((x) => x.hops)).toEqual([0, 0]);
    const some = file([q({ hops: 2 }), q({ id: 'b', hops: 1 }), q({ id: 'c' })]);
    expect(refused(() => loadQuestionsJsonl(some), some, 3)).toMatch(
      /"hops" is missing here but given on line 1/,
    );
    const late = file([q(), q({ id: 'b', hops: 1 })]);
    expect(refused(() => loadQuestionsJsonl(late), late, 2)).toMatch(
      /"hops" is given here but missing on line 1/,
    );
  });

  it('refuses an id that is neither a string nor an integer read exactly', () => {
    for (const id of [null, 1.5, true, { a: 1 }, ['x']]) {
      const p = file([q({ id })]);
      expect(refused(() => loadQuestionsJsonl(p), p, 1)).toMatch(/"id" must be a string or an integer, got /);
      const c = file([doc({ id })]);
      expect(refused(() => loadCorpusJsonl(c), c, 1)).toMatch(/"id" must be a string or an integer, got /);
    }
    const big = file([
      q({ id: 'a' }),
      '{"id": 12345678901234567890, "question": "q?", "golden_answers": ["x"]}',
    ]);
    expect(refused(() => loadQuestionsJsonl(big), big, 2)).toMatch(/an integer too large to read exactly/);
    const ok = file([q({ id: 7 }), q({ id: 'seven' }), q({ id: -1 })]);
    expect(loadQuestionsJsonl(ok).map((x) => x.id)).toEqual(['7', 'seven', '-1']);
  });

  it('refuses golden_answers that are not a non-empty array of non-empty strings', () => {
    for (const golden_answers of [[], [''], ['Paris', 3], 'Paris', null, [['Paris']]]) {
      const p = file([q(), q({ id: 'b', golden_answers })]);
      expect(refused(() => loadQuestionsJsonl(p), p, 2)).toMatch(
        /"golden_answers" must be a non-empty array/,
      );
    }
    const none = file(['{"question": "q?"}']);
    expect(refused(() => loadQuestionsJsonl(none), none, 1)).toMatch(/missing field "golden_answers"/);
    // A single `answer` string (HotpotQA's layout) is one answer.
    const single = file(['{"question": "q?", "answer": "Paris"}']);
    expect(loadQuestionsJsonl(single)[0].answers).toEqual(['Paris']);
  });

  it('refuses a field it would otherwise drop or turn into "[object Object]"', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { supportingDocs: [{ id: 'd' }] },
        /"supportingDocs" must be a non-empty array of strings or integers; element 0/,
      ],
      [{ supportingDocs: 'd1' }, /"supportingDocs" must be a non-empty array/],
      [{ evidence: [{ a: 1 }] }, /"evidence" must be a non-empty array of strings; element 0 is \{"a":1\}/],
      [{ entities: 'France' }, /"entities" must be a non-empty array of strings/],
      [{ kind: 3 }, /"kind" must be a non-empty string when given, got 3/],
    ];
    for (const [extra, re] of cases) {
      const p = file([q(extra)]);
      expect(refused(() => loadQuestionsJsonl(p), p, 1)).toMatch(re);
    }
    const c = file([doc({ title: 1984 })]);
    expect(refused(() => loadCorpusJsonl(c), c, 1)).toMatch(/"title" must be a string when given, got 1984/);
    const ok = loadQuestionsJsonl(file([q({ supportingDocs: ['d1', 7], evidence: [], kind: 'capital' })]));
    expect(ok[0]).toMatchObject({ supportingDocs: ['d1', '7'], evidence: [], kind: 'capital' });
    expect(loadCorpusJsonl(file([doc({ title: null })]))[0].title).toBe('');
  });
});

describe('questions over the search query limits', () => {
  const { maxQueryChars, maxQueryTerms } = DEFAULT_QUERY_LIMITS;

  it('are refused when read, with the line and the limit', () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    const long = file([q(), q({ id: 'b', question: 'x'.repeat(maxQueryChars + 1) })]);
    expect(refused(() => loadQuestionsJsonl(long), long, 2)).toMatch(
      new RegExp(
        `"question" is over the search query limits: it is ${maxQueryChars + 1} characters long; the limit is ${maxQueryChars}`,
      ),
    );
    const terms = file([q({ question: words(maxQueryTerms + 1) })]);
    expect(refused(() => loadQuestionsJsonl(terms), terms, 1)).toMatch(
      new RegExp(`it has ${maxQueryTerms + 1} distinct terms; the limit is ${maxQueryTerms}`),
    );
    // At the limits, and repeated words (counted once), a question is read.
    const atLimit = file([
      q({ question: words(maxQueryTerms) }),
      q({ id: 'b', question: 'y '.repeat(1000) }),
    ]);
    expect(loadQuestionsJsonl(atLimit)).toHaveLength(2);
  });

  it('stop a task before its index, tokenizer and baselines (a 1M-word question)', {
    timeout: 30_000,
  }, async () => {
    const p = file([q(), q({ id: 'huge', question: 'capital of france '.repeat(333_334) })]);
    const cacheDir = join(tmp, 'task-cache');
    const task = multihopQaTask({ rollout: { maxTurns: 4 }, taskOptions: { questions: p } }, { cacheDir });
    await expect(task).rejects.toThrow(JsonlError);
    await expect(task).rejects.toThrow(
      `${p}:2: "question" is over the search query limits: it is 6000012 characters long; the limit is 2048`,
    );
    // Only the dataset was built (into the empty cache); no tokenizer was trained.
    expect(readdirSync(cacheDir).filter((f) => f.startsWith('tokenizer'))).toEqual([]);
  });
});

describe('a damaged dataset cache', () => {
  it('is rebuilt with a warning that names the file and line', () => {
    const cacheDir = join(tmp, 'dataset-cache');
    const first = buildMultihopDataset({ cacheDir });
    const folder = join(cacheDir, `multihop-v2-seed0-val0.15-test0.15-max12`);
    const train = join(folder, 'train.jsonl');
    const good = readFileSync(train);
    const lines = good.toString('utf8').split('\n');
    lines[4] = lines[4].slice(0, 20); // a line cut short
    writeFileSync(train, lines.join('\n'));
    const warnings: string[] = [];
    const again = buildMultihopDataset({ cacheDir, onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(`^the dataset cache is damaged and is rebuilt: ${train}:5: invalid JSON`),
    );
    expect(again).toEqual(first);
    expect(readFileSync(train).equals(good)).toBe(true);
    // Bytes that are not UTF-8, and a file gone: the same.
    const corpus = join(folder, 'corpus.jsonl');
    const text = readFileSync(corpus);
    writeFileSync(corpus, Buffer.concat([text.subarray(0, 100), Buffer.from([0xff]), text.subarray(101)]));
    rmSync(join(folder, 'test.jsonl'));
    buildMultihopDataset({ cacheDir, onWarning: (m) => warnings.push(m) });
    expect(warnings[1]).toMatch(/test\.jsonl is missing$/);
    expect(buildMultihopDataset({ cacheDir, onWarning: (m) => warnings.push(m) })).toEqual(first);
    expect(warnings).toHaveLength(2);
    writeFileSync(corpus, Buffer.concat([text.subarray(0, 100), Buffer.from([0xff]), text.subarray(101)]));
    buildMultihopDataset({ cacheDir, onWarning: (m) => warnings.push(m) });
    const before = text.subarray(0, 100).toString('utf8').split('\n');
    expect(warnings[2]).toContain(
      `${corpus}:${before.length}: invalid UTF-8 (byte 0xFF at column ${Buffer.byteLength(before[before.length - 1]) + 1})`,
    );
  });
});

describe('the search service', () => {
  /** POSTs raw bytes to /search (fetch would re-encode a string body). */
  function postBytes(url: string, body: Buffer): Promise<{ status: number; json: { error?: string } }> {
    return new Promise((resolve, reject) => {
      const req = request(`${url}/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('answers a body that is not UTF-8 with 400, and still takes UTF-8', async () => {
    const index = SearchIndex.build([
      { id: 'b', title: 'Besançon', contents: 'Besançon is a city in France.' },
      { id: 'p', title: 'Paris', contents: 'Paris is the capital of France.' },
    ]);
    await using server = await startSearchServer(index);
    // "Besançon" in Latin-1: decoded leniently it was "Besan\uFFFDon" and searched (finding "france").
    const bad = await postBytes(server.url, Buffer.from('{"query": "Besançon France"}', 'latin1'));
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/not valid UTF-8/);
    const cut = await postBytes(
      server.url,
      Buffer.from([...Buffer.from('{"query": "x'), 0xe2, 0x82, 0x22, 0x7d]),
    );
    expect(cut.status).toBe(400);
    const good = await postBytes(server.url, Buffer.from('{"query": "Besançon"}', 'utf8'));
    expect(good.status).toBe(200);
    expect((good.json as { results: { id: string }[] }).results[0].id).toBe('b');
  });
});
