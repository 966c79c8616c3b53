import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTextEpisode } from '../src/mdp/text-episode.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import {
  loadMultihopResources,
  makeMultihopEnv,
  MULTIHOP_SPECIAL_TOKENS,
  type MultihopResources,
  multihopQaTask,
  multihopTokenizer,
  naiveRagBaseline,
  readAnswer,
  scriptedSearcherBaseline,
  serveMultihopSearch,
  statedType,
  substringMatch,
} from '../src/tasks/multihop-qa/index.js';
import type { SearchServer } from '../src/tasks/multihop-qa/search/index.js';
import type { AgentTask } from '../src/tasks/task.js';
import { formatResultsTable, tableLayout } from '../src/evaluation/results.js';

/** `France (geography)` → `France`. */
const splitName = (title: string) => title.replace(/ \(geography\)$/, '');

/** Every n-th question of a list: a spread-out sample. */
const sample = (xs: readonly QaExample[], n: number) =>
  xs.filter((_, i) => i % Math.ceil(xs.length / n) === 0);

describe('multihop-qa task', () => {
  let r: MultihopResources;
  let task: AgentTask<QaExample>;
  const tmp = mkdtempSync(join(tmpdir(), 'multihop-task-'));
  beforeAll(async () => {
    r = loadMultihopResources();
    task = await multihopQaTask({ rollout: { maxTurns: 4 } });
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('builds: splits, an environment with the search tool, the tags format', async () => {
    expect(task.name).toBe('multihop-qa');
    expect(task.train.length).toBeGreaterThan(1000);
    expect(task.validation.length).toBeGreaterThan(100);
    expect(task.stopStrings).toEqual(['</search>', '</answer>']);
    const env = task.makeEnv();
    const ex = task.validation[0];
    const prompt = await env.reset(ex);
    expect(prompt).toContain(ex.question);
    expect(prompt.length).toBeLessThan(ex.question.length + 100);
    const step = await env.step('<search>France capital</search>', []);
    expect(step.observation).toMatch(/^\n<result>Doc 1 \(/);
    expect(step.observation?.match(/Doc \d/g)).toHaveLength(3);
    const end = await env.step(`<answer>the ${ex.answers[0]}</answer>`, []);
    expect(end.done).toBe(true);
    expect(end.info).toMatchObject({ em: 1, f1: 1, subEm: 1, hops: ex.hops });
    expect(end.rewards.reduce((s, x) => s + x.value, 0)).toBeCloseTo(1.1);
  });

  it('pretrains on the search corpus, every document as the search tool titles it', () => {
    const texts = task.pretrainTexts!();
    expect(texts).toHaveLength(r.dataset.corpus.length);
    expect(texts).toContain('Aruba (capital): The capital of Aruba is Oranjestad.');
    // A test question's bridge fact is there: the corpus is the knowledge, the questions are held out.
    const doc = r.docs.get(task.test![0].supportingDocs[0])!;
    expect(texts).toContain(`${doc.title}: ${doc.contents}`);
  });

  it('substring EM: a gold answer inside the normalised prediction', () => {
    expect(substringMatch('it is the Canadian dollar (CAD)', ['Canadian dollar'])).toBe(1);
    expect(substringMatch('dollars', ['dollar'])).toBe(0);
  });

  it('the scripted searcher reaches high EM through the real ToolEnv', async () => {
    const qs = sample(r.dataset.questions.test, 80);
    const rows = await scriptedSearcherBaseline(qs, task.makeEnv, r.docs);
    const all = rows.find((x) => x.group === 'all');
    expect(all?.n).toBe(qs.length);
    expect(all?.scores.em).toBeGreaterThan(0.85);
    const ex = r.dataset.questions.test.find((q) => q.hops === 3) as QaExample;
    const scripted = task.scripted?.(ex, 0);
    const ep = await runTextEpisode(task.makeEnv(), ex, scripted as (c: string) => string);
    expect(ep.toolCalls).toHaveLength(3);
  });

  it("the scripted searcher's first query names a typed place as the question does (type, then name)", async () => {
    expect(
      statedType(
        'What currency is used in the country where the American state Kansas is located?',
        'Kansas',
      ),
    ).toBe('American state');
    expect(statedType('In which country is the city Natal located?', 'Natal')).toBe('city');
    expect(
      statedType(
        'What is the capital of the country containing the city that the town Viborg is part of?',
        'Viborg',
      ),
    ).toBe('town');
    expect(
      statedType('What currency is used in the country where Panama Canal is located?', 'Panama Canal'),
    ).toBe(undefined);
    expect(
      statedType('What currency is used in the country whose capital is Basseterre?', 'Basseterre'),
    ).toBe(undefined);
    // Every typed place question of a split: the first query depends on the question alone (a policy
    // cannot see which documents' titles carry a facet).
    const typed = r.dataset.questions.validation.filter(
      (q) => /^place/.test(q.kind) && /(?:where|that|country is) the /.test(q.question),
    );
    expect(typed.length).toBeGreaterThan(20);
    for (const q of typed.slice(0, 40)) {
      const first = await task.scripted?.(q, 0)?.(q.question);
      // `<search> type Name</search>` for a question saying `the type Name`, whatever the place's title.
      const query = /^<search> (.*)<\/search>$/.exec(first ?? '')?.[1];
      expect(q.question, `${first}`).toContain(`the ${query} `);
    }
  });

  it('with taskOptions.bridgeTypes, every query of a scripted 3-hop chain copies text it has read', async () => {
    const typedTask = await multihopQaTask({ rollout: { maxTurns: 4 }, taskOptions: { bridgeTypes: true } });
    const chains = typedTask.test?.filter((q) => q.hops === 3) ?? [];
    expect(chains.length).toBeGreaterThan(20);
    let typedBridges = 0;
    for (const q of chains) {
      const { context: text, info } = await runTextEpisode(typedTask.makeEnv(), q, typedTask.scripted!(q, 0));
      expect(info.em, text).toBe(1);
      const queries = [...text.matchAll(/<search>([^<]*)<\/search>/g)].map((m) => m[1]);
      // Each later hop's query, as the question or an earlier result wrote it (after a space).
      for (const [i, query] of queries.entries()) {
        if (i === 0) continue;
        const before = text.slice(0, text.indexOf(`<search>${query}</search>`));
        const read = /^ (.+) (capital|currency|borders)$/.exec(query)?.[1] ?? query.slice(1);
        expect(before, query).toContain(` ${read}`);
        if (/^ (American|Canadian) /.test(query)) typedBridges++;
      }
    }
    // Some bridges need their type (a title such as `Massachusetts (American state)`): without the
    // option the query took it from a title the policy never sees.
    expect(typedBridges).toBeGreaterThan(5);
  });

  it("the reader answers a comparison from the geography pages' sentences, whichever page comes first", () => {
    const geography = (name: string) => r.docs.get(`country:${name}:geography`)!;
    const page = (code: string) => {
      const doc = geography(code);
      return `Doc 1 (${doc.title}): ${doc.contents}`;
    };
    const [fra, lux, che] = ['FRA', 'LUX', 'CHE'].map((c) => splitName(geography(c).title));
    for (const text of [`${page('FRA')}\n${page('LUX')}`, `${page('LUX')}\n${page('FRA')}`]) {
      expect(readAnswer(`Which country has the larger area, ${lux} or ${fra}?`, text)).toBe(fra);
      expect(readAnswer(`Which country has the larger area, ${fra} or ${lux}?`, text)).toBe(fra);
    }
    const landlocked = `${page('FRA')}\n${page('CHE')}`;
    expect(readAnswer(`Which of these two countries is landlocked, ${fra} or ${che}?`, landlocked)).toBe(che);
  });

  it('pays the retrieval reward once for each supporting document a search shows', async () => {
    const env = makeMultihopEnv(r.index, { retrievalReward: 0.3 }, r.docs)();
    const ex = r.dataset.questions.test.find((q) => q.kind === 'capital_currency') as QaExample;
    const scripted = task.scripted?.(ex, 0) as (c: string) => string;
    let context = '';
    const play = async (action: string) => {
      const step = await env.step(action, []);
      context += action + (step.observation ?? '');
      return step.rewards.filter((x) => x.kind === 'process').reduce((s, x) => s + x.value, 0);
    };
    // The scripted searcher's two searches each find one of the two documents; the answer earns none.
    context = await env.reset(ex);
    const first = scripted(context);
    expect(await play(first)).toBeCloseTo(0.15);
    expect(await play(scripted(context))).toBeCloseTo(0.15);
    expect(await play(scripted(context))).toBe(0);
    // The same search again finds nothing new; a search for something else finds nothing at all.
    context = await env.reset(ex);
    expect(await play(first)).toBeCloseTo(0.15);
    expect(await play(first)).toBe(0);
    expect(await play('<search> Zebra stripes</search>')).toBe(0);
    expect(() => makeMultihopEnv(r.index, { retrievalReward: 0.3 })).toThrow(/needs the corpus documents/);
  });

  it('naive RAG is much weaker than the scripted searcher on 2-hop questions', async () => {
    const qs = sample(
      r.dataset.questions.test.filter((q) => q.hops === 2),
      40,
    );
    const naive = await naiveRagBaseline(qs, r.index);
    const scripted = await scriptedSearcherBaseline(qs, task.makeEnv, r.docs);
    const em = (rows: typeof naive) => rows.find((x) => x.group === 2)?.scores.em ?? Number.NaN;
    expect(em(scripted) - em(naive)).toBeGreaterThan(0.4);
    const table = formatResultsTable([...naive, ...scripted], tableLayout(task));
    expect(table.split('\n')[0]).toBe('| method | hops | n | EM | F1 | subEM | same answer |');
    expect(table).toContain('| naive RAG | 2 |');
  });

  it('the tokenizer round-trips, keeps specials whole, and is deterministic and cached', async () => {
    const text = `${multihopPromptOf(task)}<search>Bhutan capital</search>\n<result>Doc 1 (Bhutan (capital)): The capital of Bhutan is Thimphu.</result>\n<answer>Thimphu</answer><eos>`;
    expect(task.codec.decode(task.codec.encode(text))).toBe(text);
    for (const s of MULTIHOP_SPECIAL_TOKENS) expect(task.codec.encode(s)).toHaveLength(1);
    expect(task.vocabSize).toBe(3000);
    const fresh = await multihopTokenizer(r, { cacheDir: tmp });
    const again = await multihopTokenizer(r, { cacheDir: tmp });
    expect(again.toJSON()).toEqual(fresh.toJSON());
    expect(fresh.encode(text)).toEqual(task.codec.encode(text));
    // Cached under the data seed of the resources it was trained on.
    expect(readdirSync(tmp).filter((f) => f.startsWith('tokenizer-'))).toEqual([
      expect.stringContaining(`-seed${r.dataSeed}-`),
    ]);
  });

  it('serve-search serves the corpus index on an ephemeral port and closes', async () => {
    const out: string[] = [];
    const stop = new AbortController();
    let server: SearchServer | undefined;
    const done = serveMultihopSearch(
      { host: '127.0.0.1', port: 0 },
      { write: (s: string) => out.push(s) },
      { signal: stop.signal, onStart: (s) => (server = s) },
    );
    await new Promise((res) => setTimeout(res, 50));
    while (server === undefined) await new Promise((res) => setTimeout(res, 20));
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health).toEqual({ status: 'ok', documents: r.dataset.corpus.length });
    const res = await fetch(`${server.url}/search`, {
      method: 'POST',
      body: JSON.stringify({ query: 'Bhutan capital', k: 1 }),
    });
    expect(((await res.json()) as { results: { contents: string }[] }).results[0].contents).toContain(
      'Thimphu',
    );
    stop.abort();
    await done;
    expect(server.server.listening).toBe(false);
    expect(out.join('')).toContain(server.url);
  });
});

function multihopPromptOf(task: AgentTask<QaExample>): string {
  return `Question: ${task.validation[0].question}\n`;
}
