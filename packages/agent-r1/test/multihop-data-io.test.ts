import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  bm25Retriever,
  containsAnswer,
  type Doc,
  JsonlError,
  loadCorpusJsonl,
  loadQuestionsJsonl,
  measureRecall,
  type QaExample,
  recallTableMarkdown,
  writeJsonlAtomic,
} from '../src/tasks/multihop-qa/data/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'multihop-io-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
};

describe('JSONL loaders (FlashRAG / Search-R1 layout)', () => {
  it('loads questions with golden_answers', () => {
    const p = file(
      'q.jsonl',
      '{"id": "q1", "question": "Who wrote Hamlet?", "golden_answers": ["Shakespeare", "William Shakespeare"], "hops": 2}\n\n' +
        '{"question": "Capital of France?", "golden_answers": ["Paris"], "hops": 1}\n',
    );
    const qs = loadQuestionsJsonl(p);
    expect(qs).toHaveLength(2);
    expect(qs[0]).toMatchObject({
      id: 'q1',
      answers: ['Shakespeare', 'William Shakespeare'],
      kind: 'user',
      hops: 2,
    });
    expect(qs[1]).toMatchObject({ id: 'q-3', answers: ['Paris'], hops: 1, supportingDocs: [] });
  });

  it('loads corpora, taking the title from a quoted first line', () => {
    const p = file(
      'c.jsonl',
      '{"id": "0", "contents": "\\"Paris\\"\\nParis is the capital of France."}\n{"id": 7, "contents": "no title", "title": "T"}\n',
    );
    expect(loadCorpusJsonl(p)).toEqual([
      { id: '0', title: 'Paris', contents: 'Paris is the capital of France.' },
      { id: '7', title: 'T', contents: 'no title' },
    ]);
  });

  it('names the file and line of malformed input', () => {
    const bad = (name: string, text: string, load: (p: string) => unknown, re: RegExp) => {
      const p = file(name, text);
      expect(() => load(p)).toThrow(JsonlError);
      expect(() => load(p)).toThrow(re);
      try {
        load(p);
      } catch (e) {
        expect((e as Error).message.startsWith(`${p}:`)).toBe(true);
      }
    };
    const ok = '{"question": "a?", "golden_answers": ["b"]}\n';
    bad('json.jsonl', `${ok}{"question": "x",\n`, loadQuestionsJsonl, /json\.jsonl:2: invalid JSON/);
    bad('arr.jsonl', '[1, 2]\n', loadQuestionsJsonl, /arr\.jsonl:1: expected a JSON object/);
    bad(
      'noq.jsonl',
      `${ok}${ok}{"golden_answers": ["b"]}\n`,
      loadQuestionsJsonl,
      /noq\.jsonl:3: .*"question"/,
    );
    bad(
      'noa.jsonl',
      '{"question": "a?", "golden_answers": []}\n',
      loadQuestionsJsonl,
      /noa\.jsonl:1: .*golden_answers/,
    );
    bad(
      'dup.jsonl',
      '{"id":1,"question":"a","golden_answers":["b"]}\n{"id":"1","question":"c","golden_answers":["d"]}\n',
      loadQuestionsJsonl,
      /dup\.jsonl:2: duplicate id "1"/,
    );
    bad('cid.jsonl', '{"contents": "x"}\n', loadCorpusJsonl, /cid\.jsonl:1: missing field "id"/);
    bad(
      'cc.jsonl',
      '{"id": "a", "contents": "x"}\n{"id": "b"}\n',
      loadCorpusJsonl,
      /cc\.jsonl:2: missing string field "contents"/,
    );
    expect(() => loadCorpusJsonl(join(tmp, 'missing.jsonl'))).toThrow(/cannot read .*missing\.jsonl/);
  });

  it('writes JSONL atomically and round-trips', () => {
    const docs: Doc[] = [{ id: 'a', title: 'A', contents: 'line "one"\nline two' }];
    const p = join(tmp, 'sub', 'out.jsonl');
    writeJsonlAtomic(p, docs);
    expect(readFileSync(p, 'utf8').split('\n')).toHaveLength(2);
    expect(loadCorpusJsonl(p)).toEqual(docs);
    expect(readdirSync(join(tmp, 'sub'))).toEqual(['out.jsonl']); // no temporary file left
  });
});

describe('single-retrieval recall measurement', () => {
  const corpus: Doc[] = [
    { id: 'cap', title: 'Freedonia (capital)', contents: 'The capital of Freedonia is Fredville.' },
    { id: 'cur', title: 'Freedonia (currency)', contents: 'Freedonia uses the Freedonian ducat (FRD).' },
    { id: 'riv', title: 'Glimmer', contents: 'Glimmer: a river. Glimmer is located in Freedonia.' },
    { id: 'cap2', title: 'Sylvania (capital)', contents: 'The capital of Sylvania is Sylvaburg.' },
  ];
  const q = (
    id: string,
    question: string,
    answers: string[],
    hops: number,
    supportingDocs: string[],
  ): QaExample => ({
    id,
    question,
    answers,
    hops,
    kind: 'user',
    supportingDocs,
  });
  const qs = [
    q('a', 'What is the capital of Freedonia?', ['Fredville'], 1, ['cap']),
    q('b', 'What is the capital of Sylvania?', ['Sylvaburg'], 1, ['cap2']),
    q('c', 'What currency is used in the country where the river Glimmer is located?', ['ducat'], 2, [
      'riv',
      'cur',
    ]),
  ];

  it('ranks by BM25', () => {
    const r = bm25Retriever(corpus);
    expect(r('Glimmer river', 1)[0].id).toBe('riv');
    expect(r('capital Sylvania', 2).map((x) => x.id)).toEqual(['cap2', 'cap']);
    expect(r('nothing matches zzz', 3)).toEqual([]);
  });

  it('computes answer and support recall@k per hop count', () => {
    const rows = measureRecall(qs, bm25Retriever(corpus), { ks: [1, 2, 4] });
    expect(rows.map((r) => r.group)).toEqual(['hops=1', 'hops=2']);
    expect(rows[0]).toMatchObject({ count: 2, answerRecall: { 1: 1, 2: 1, 4: 1 }, supportRecall: { 1: 1 } });
    // the 2-hop question's single retrieval finds the river page, not the currency page
    expect(rows[1].answerRecall[1]).toBe(0);
    expect(rows[1].supportRecall[1]).toBe(0);
    expect(rows[1].answerRecall[4]).toBe(1);
    expect(recallTableMarkdown(rows, [1, 2, 4])).toContain('| hops=2 | 1 | 0.000 |');
  });

  it('matches answers as whole words, ignoring case and accents', () => {
    expect(containsAnswer('The capital is Bogotá.', ['bogota'])).toBe(true);
    expect(containsAnswer('Parisian style', ['Paris'])).toBe(false);
    expect(containsAnswer('anything', ['  '])).toBe(false);
  });
});
