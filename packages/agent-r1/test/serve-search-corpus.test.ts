/**
 * `serve-search --corpus c.jsonl` serves that corpus (issue #34 item 6): before, the option was accepted
 * and ignored, and /health still counted the 8,982 built-in documents.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServeSearchContext } from '../src/cli/handlers.js';
import { runCli } from '../src/cli/run.js';
import type { SearchServer } from '../src/tasks/multihop-qa/search/index.js';
import {
  corpusFileIndex,
  serveMultihopSearch,
  servedCorpus,
  servedTitleBoost,
} from '../src/tasks/multihop-qa/serve.js';
import { Capture } from './support/capture.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-r1-serve-corpus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n'));
  return path;
}

// FlashRAG's format: the title, quoted, on the first line of "contents"; or a "title" field; or none.
const CORPUS = file('c.jsonl', [
  JSON.stringify({ id: '1', contents: '"Zanzibar"\nZanzibar is an archipelago off the coast of Tanzania.' }),
  JSON.stringify({ id: 2, title: 'Kilimanjaro', contents: 'Kilimanjaro is the highest mountain in Africa.' }),
  JSON.stringify({ id: 'x', contents: 'A note about the quokka, a small marsupial.' }),
]);

describe('serve-search --corpus', () => {
  it('serves the given JSONL corpus, not the built-in one', async () => {
    const out: string[] = [];
    const stop = new AbortController();
    let server: SearchServer | undefined;
    const done = serveMultihopSearch(
      { host: '127.0.0.1', port: 0, corpus: CORPUS },
      { write: (s: string) => out.push(s) },
      { signal: stop.signal, onStart: (s) => (server = s) },
    );
    try {
      while (server === undefined) await new Promise((res) => setTimeout(res, 20));
      expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ status: 'ok', documents: 3 });
      const search = async (query: string) =>
        (
          (await (
            await fetch(`${server?.url}/search`, { method: 'POST', body: JSON.stringify({ query, k: 1 }) })
          ).json()) as { results: unknown[] }
        ).results;
      expect(await search('archipelago Tanzania')).toEqual([
        {
          id: '1',
          title: 'Zanzibar',
          contents: 'Zanzibar is an archipelago off the coast of Tanzania.',
          score: expect.any(Number),
        },
      ]);
      expect(await search('highest mountain')).toMatchObject([{ id: '2', title: 'Kilimanjaro' }]);
      // A document without a title is served without one.
      expect(await search('quokka')).toEqual([
        { id: 'x', contents: 'A note about the quokka, a small marsupial.', score: expect.any(Number) },
      ]);
      expect(out.join('')).toContain(`serving the corpus ${CORPUS}`);
    } finally {
      stop.abort();
      await done;
    }
  });

  it('refuses a corpus it cannot serve, naming the file (and line)', () => {
    expect(() => corpusFileIndex(join(dir, 'missing.jsonl'))).toThrow(/cannot read .*missing\.jsonl/);
    expect(() => corpusFileIndex(file('empty.jsonl', ['']))).toThrow(
      /empty\.jsonl: the file holds no documents/,
    );
    expect(() => corpusFileIndex(file('bad.jsonl', ['{"id": "a", "contents": "x"}', '{"id": "b"}']))).toThrow(
      /bad\.jsonl:2.*contents/,
    );
  });
});

describe('the corpus serve-search is given', () => {
  /** What the real handler would serve for these arguments (the CLI resolves them; the handler is not run). */
  async function served(
    argv: string[],
  ): Promise<{ code: number; corpus?: string; titleBoost?: number; err: string }> {
    let corpus: string | undefined;
    let titleBoost: number | undefined;
    const none = () => 0;
    const stderr = new Capture();
    const code = await runCli(
      argv,
      {
        train: none,
        eval: none,
        chat: none,
        seeds: none,
        serveSearch: (ctx: ServeSearchContext) => {
          corpus = servedCorpus(ctx);
          titleBoost = servedTitleBoost(ctx);
        },
      },
      { stdout: new Capture(), stderr },
    );
    return { code, corpus, titleBoost, err: stderr.text };
  }

  it("ranks titles as the task's searches do (taskOptions.searchTitleBoost)", async () => {
    expect(await served(['serve-search', '--preset', 'multihop'])).toMatchObject({ code: 0, titleBoost: 2 });
    expect(
      await served(['serve-search', '--preset', 'multihop', 'taskOptions.searchTitleBoost=1']),
    ).toMatchObject({ code: 0, titleBoost: 1 });
    expect(await served(['serve-search'])).toMatchObject({ code: 0, titleBoost: undefined });
  });

  it('is --corpus, or the multi-hop task option eval reads; never ignored', async () => {
    expect(await served(['serve-search'])).toEqual({ code: 0, corpus: undefined, err: '' });
    expect(await served(['serve-search', '--corpus', 'c.jsonl'])).toMatchObject({
      code: 0,
      corpus: 'c.jsonl',
    });
    expect(
      await served(['serve-search', '--preset', 'multihop', 'taskOptions.corpus=d.jsonl']),
    ).toMatchObject({ code: 0, corpus: 'd.jsonl' });
    expect(
      await served([
        'serve-search',
        '--preset',
        'multihop',
        '--corpus',
        'c.jsonl',
        'taskOptions.corpus=d.jsonl',
      ]),
    ).toMatchObject({ code: 0, corpus: 'c.jsonl' });
    // A key no task has is refused by the config, as before.
    expect(await served(['serve-search', 'eval.corpus=c.jsonl'])).toMatchObject({ code: 2 });
  });
});
