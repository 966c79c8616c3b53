import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildMultihopDataset,
  containsAnswer,
  type Doc,
  hopGroup,
  loadKnowledgeSources,
  type MultihopDataset,
  parseWordNetData,
  type QaExample,
} from '../src/tasks/multihop-qa/data/index.js';
import { MULTIHOP_SNIPPET_CHARS } from '../src/tasks/multihop-qa/index.js';
import { formatSearchHits } from '../src/tasks/multihop-qa/search/index.js';

const all = (d: MultihopDataset): QaExample[] => [
  ...d.questions.train,
  ...d.questions.validation,
  ...d.questions.test,
];

describe('multi-hop QA dataset (WordNet + world-countries)', () => {
  let d: MultihopDataset;
  let byId: Map<string, Doc>;
  const tmp = mkdtempSync(join(tmpdir(), 'multihop-data-'));

  beforeAll(() => {
    d = buildMultihopDataset({ seed: 0, sources: loadKnowledgeSources() });
    byId = new Map(d.corpus.map((x) => [x.id, x]));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('has a real corpus and all question kinds in every hop count', () => {
    expect(d.corpus.length).toBeGreaterThan(8000);
    expect(byId.size).toBe(d.corpus.length); // unique ids
    for (const doc of d.corpus) expect(doc.contents.length).toBeGreaterThan(10);
    const kinds = new Set(all(d).map((q) => q.kind));
    for (const k of [
      'capital',
      'place_country',
      'capital_currency',
      'place_capital',
      'compare_area',
    ] as const)
      expect(kinds).toContain(k);
    const hops = new Set(all(d).map((q) => q.hops));
    expect([...hops].sort()).toEqual([1, 2, 3]);
    expect(d.questions.train.length).toBeGreaterThan(1500);
    expect(d.questions.test.length).toBeGreaterThan(200);
    expect(d.questions.validation.length).toBeGreaterThan(200);
    expect(new Set(all(d).map((q) => q.id)).size).toBe(all(d).length);
  });

  it('is deterministic from the seed', () => {
    const again = buildMultihopDataset({ seed: 0 });
    expect(again).toEqual(d);
    const other = buildMultihopDataset({ seed: 1 });
    expect(other.corpus).toEqual(d.corpus); // the corpus does not depend on the seed
    expect(other.questions.test.map((q) => q.id)).not.toEqual(d.questions.test.map((q) => q.id));
  });

  it('keeps test (and validation) entities out of training questions', () => {
    const ents = (qs: QaExample[]) =>
      new Set(qs.flatMap((q) => (q.entities ?? []).map((e) => e.toLowerCase())));
    const train = ents(d.questions.train);
    const val = ents(d.questions.validation);
    const test = ents(d.questions.test);
    for (const e of test) {
      expect(train.has(e), e).toBe(false);
      expect(val.has(e), e).toBe(false);
    }
    for (const e of val) expect(train.has(e), e).toBe(false);
    // every question lists the entities it names
    for (const q of all(d)) expect(q.entities?.length ?? 0).toBeGreaterThan(0);
  });

  it('needs one distinct document per hop, each holding its hop fact', () => {
    for (const q of all(d)) {
      expect(q.supportingDocs.length, q.id).toBe(q.hops);
      expect(new Set(q.supportingDocs).size, q.id).toBe(q.hops);
      expect(q.evidence?.length, q.id).toBe(q.hops);
      q.supportingDocs.forEach((id, i) => {
        const doc = byId.get(id);
        expect(doc, `${q.id}: ${id}`).toBeDefined();
        expect(
          containsAnswer(`${doc?.title} ${doc?.contents}`, [q.evidence?.[i] ?? '']),
          `${q.id} hop ${i}`,
        ).toBe(true);
      });
      // the last hop's document holds an answer (comparisons: one of the two named countries)
      if (!q.kind.startsWith('compare_')) {
        const last = byId.get(q.supportingDocs[q.hops - 1]) as Doc;
        expect(containsAnswer(`${last.title} ${last.contents}`, q.answers), q.id).toBe(true);
      }
      // in a multi-hop bridge/chain question, the first document does not already hold the answer
      if (q.hops > 1 && !q.kind.startsWith('compare_')) {
        const first = byId.get(q.supportingDocs[0]) as Doc;
        expect(containsAnswer(first.contents, q.answers), q.id).toBe(false);
      }
    }
  });

  it("shows each fact a multi-hop question reads before its last hop within the search tool's default snippet", () => {
    // A bridge entity (or a comparison's area / landlocked sentence) beyond the cut is invisible to a policy.
    const shown = (q: QaExample, i: number): boolean => {
      const doc = byId.get(q.supportingDocs[i]) as Doc;
      const snippet = formatSearchHits([{ ...doc, score: 0 }], MULTIHOP_SNIPPET_CHARS);
      if (q.kind === 'compare_landlocked') return /is (not )?landlocked/.test(snippet);
      return containsAnswer(snippet, [q.evidence?.[i] ?? '']);
    };
    const fraction = (questions: readonly QaExample[]): number => {
      let facts = 0;
      let visible = 0;
      for (const q of questions) {
        if (q.hops === 1) continue;
        const read = q.kind.startsWith('compare_') ? q.hops : q.hops - 1;
        for (let i = 0; i < read; i++) {
          facts++;
          if (shown(q, i)) visible++;
        }
      }
      return visible / facts;
    };
    expect(fraction(d.questions.test)).toBe(1);
    expect(fraction(d.questions.validation)).toBe(1);
    expect(fraction(d.questions.train)).toBeGreaterThan(0.99);
  });

  it('has sane answers and aliases', () => {
    for (const q of all(d)) {
      expect(q.question.trim().length).toBeGreaterThan(10);
      expect(q.answers.length, q.id).toBeGreaterThan(0);
      for (const a of q.answers) expect(a, q.id).toBe(a.trim());
      expect(q.answers.every((a) => a.length > 0)).toBe(true);
      expect(new Set(q.answers.map((a) => a.toLowerCase())).size, q.id).toBe(q.answers.length);
      if (q.kind.startsWith('compare_')) expect(containsAnswer(q.question, [q.answers[0]]), q.id).toBe(true);
      else expect(containsAnswer(q.question, q.answers), q.id).toBe(false);
    }
    const fr = all(d).find((q) => q.id === 'capital-FRA');
    if (fr !== undefined) expect(fr.answers).toEqual(['Paris']);
    const cur = all(d).find((q) => q.id === 'currency-DEU');
    if (cur !== undefined) expect(cur.answers).toEqual(['Euro', 'EUR']);
  });

  it('groups hop counts for the recall report', () => {
    const q = all(d).find((x) => x.kind === 'compare_area') as QaExample;
    expect(hopGroup(q)).toBe('2-hop comparison');
    expect(hopGroup({ ...q, kind: 'place_mid_capital', hops: 3 })).toBe('3-hop chain');
  });

  it('caches to disk as JSONL and reloads the same data', () => {
    const a = buildMultihopDataset({ seed: 0, cacheDir: tmp });
    expect(a).toEqual(d);
    const folders = readdirSync(tmp);
    expect(folders).toHaveLength(1);
    const files = readdirSync(join(tmp, folders[0])).sort();
    expect(files).toEqual(['corpus.jsonl', 'meta.json', 'test.jsonl', 'train.jsonl', 'validation.jsonl']);
    expect(existsSync(join(tmp, folders[0], 'meta.json'))).toBe(true);
    const b = buildMultihopDataset({ seed: 0, cacheDir: tmp }); // from the cache
    expect(b).toEqual(d);
  });

  it('bridgeTypes: a part-of sentence names the type of an ambiguous place as its title does; nothing else changes', () => {
    const typed = buildMultihopDataset({ seed: 0, sources: loadKnowledgeSources(), bridgeTypes: true });
    expect(typed.questions).toEqual(d.questions);
    // `American state Massachusetts` → `Massachusetts`, for each title with a facet (`Massachusetts (American state)`).
    const typedNames = new Map<string, string>();
    for (const { title } of d.corpus) {
      const m = /^(.*) \(([^()]*)\)$/.exec(title);
      if (m) typedNames.set(`${m[2]} ${m[1]}`, m[1]);
    }
    let named = 0;
    for (const [i, doc] of typed.corpus.entries()) {
      const plain = d.corpus[i];
      expect(doc.id).toBe(plain.id);
      if (doc.contents === plain.contents) continue;
      // `X is part of the American state Massachusetts.` where the plain corpus says `X is part of Massachusetts.`
      const untyped = doc.contents.replace(/ is part of the (.+?)\./g, (whole, place: string) => {
        const name = typedNames.get(place);
        return name === undefined ? whole : ` is part of ${name}.`;
      });
      expect(untyped).toBe(plain.contents);
      named++;
    }
    expect(named).toBeGreaterThan(100);
    const tmpTyped = mkdtempSync(join(tmpdir(), 'multihop-typed-'));
    buildMultihopDataset({ seed: 0, cacheDir: tmpTyped, bridgeTypes: true });
    expect(readdirSync(tmpTyped)[0]).toMatch(/-types$/);
    rmSync(tmpTyped, { recursive: true, force: true });
  });
});

describe('WordNet data parser', () => {
  it('parses words, pointers and glosses, skipping the licence header', () => {
    const text = [
      '  1 This software and database is being provided to you, the LICENSEE, by  ',
      '08956420 15 n 02 Lyon 0 Lyons 0 003 @i 08542298 n 0000 #p 08949695 n 0000 #p 08964883 n 0000 | a city in east-central France on the Rhone River  ',
      '',
    ].join('\n');
    const m = parseWordNetData(text);
    expect(m.size).toBe(1);
    const s = m.get('08956420');
    expect(s?.words).toEqual(['Lyon', 'Lyons']);
    expect(s?.lexFile).toBe(15);
    expect(s?.pointers.map((p) => p.symbol)).toEqual(['@i', '#p', '#p']);
    expect(s?.gloss).toBe('a city in east-central France on the Rhone River');
  });
});
