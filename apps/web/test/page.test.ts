/**
 * The page in real headless Chromium, served as `npm run demo` serves it (the shipped policy, the corpus
 * and test split as JSON): on SwiftShader's WebGPU and with WebGPU unavailable (the WebAssembly kernels),
 * the Ask panel's greedy episodes for test questions (each action, each search and the documents it
 * returned, the answer and its verdict) equal the Node agent's for the same checkpoint (loadAgent, then
 * run); bad input (an empty or a 10,000-character question, a corrupt checkpoint, another model's weights,
 * a missing file) gets a message on the page, and the page still answers afterwards. The Train panel's
 * reveal run (WebAssembly kernels) draws the curve of `trainAgent`'s run in Node to the bit, its reward
 * rises, and Stop stops it. A screenshot of each panel is written (to apps/web/screenshots/, which the
 * README shows, with UPDATE_SCREENSHOTS=1). Skips with one line where no Chromium
 * is installed; under REQUIRE_BROWSER=1 (CI) a missing Chromium fails instead.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTask, loadAgent, resolveConfig, trainAgent } from '@agent-r1/agent';
import type { LoadedAgent, QaExample } from '@agent-r1/agent/browser';
import { TransformerLM, serializeSafetensors, stateDict } from '@agent-r1/nn';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WEBGPU_FLAGS, chromiumForTests } from '../../../packages/tensor/test/browser/chromium.js';
import { SHIPPED_POLICY, WEB_ROOT, type Site, buildPage, serveSite, writeSiteData } from '../scripts/site.js';
import { callArgumentsText } from '../src/call-text.js';

const chromium = chromiumForTests('web page');
/**
 * Test questions (indices into the test split): a 1-hop one the shipped policy answers right, a 3-hop chain
 * it gets wrong (both verdicts are shown), an area comparison it answers with the compare tool, and a 3-hop
 * chain it answers right (the screenshot).
 */
const QUESTIONS = [1, 38, 100, 16];
/** A question typed by the user (no gold answer): the page asks it as `agent.ask` does. */
const TYPED = 'What currency is used in the country whose capital is Lima?';
/**
 * Where the panels' screenshots go: apps/web/screenshots/ (the README's) with UPDATE_SCREENSHOTS=1, else a
 * temporary folder, so that a test run leaves the work tree as it was (the pixels differ from run to run).
 */
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(WEB_ROOT, 'screenshots')
    : mkdtempSync(join(tmpdir(), 'agent-r1-web-screenshots-'));

/** An episode as the page shows it, or as the Node agent ran it. */
interface Episode {
  actions: string[];
  searches: { query: string; titles: string[] }[];
  answer: string | null;
  /** Against the gold answer; 'none' for a typed question, which has none. */
  verdict: 'right' | 'wrong' | 'none';
}

const titlesOf = (content: string) =>
  content
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => /^Doc \d+ \((.+?)\): /.exec(l)?.[1] ?? '');

/** A test question (run) or a typed one (ask) in Node. */
function nodeEpisode(agent: LoadedAgent<QaExample>, question: QaExample | string): Promise<Episode> {
  const answer = typeof question === 'string' ? agent.ask(question) : agent.run(question);
  return answer.then(({ turns, trajectory }) => ({
    actions: turns.map((t) => t.action),
    searches: trajectory.toolCalls.map((c) => ({
      query: callArgumentsText(c.args),
      titles: titlesOf(c.content),
    })),
    answer: typeof trajectory.info.answer === 'string' ? trajectory.info.answer : null,
    verdict: typeof question === 'string' ? 'none' : trajectory.info.em === 1 ? 'right' : 'wrong',
  }));
}

async function openPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 900 });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(
    () => ['ready', 'error'].includes(document.getElementById('policy')?.dataset.state ?? ''),
    { timeout: 60_000 },
  );
  return { page, errors };
}

/** Submits the form and waits for the episode to end; the message shown, if any. */
async function submit(page: Page): Promise<string | null> {
  await page.$eval('#episode', (e) => {
    (e as HTMLElement).dataset.state = 'idle';
  });
  await page.click('#ask-button');
  await page.waitForFunction(
    () => {
      const state = document.getElementById('episode')?.dataset.state;
      const message = document.getElementById('ask-message');
      return state === 'done' || state === 'error' || (message && !message.hidden);
    },
    { timeout: 60_000 },
  );
  return page.$eval('#ask-message', (e) => ((e as HTMLElement).hidden ? null : e.textContent));
}

/** The episode the page shows. */
function shownEpisode(page: Page): Promise<Episode> {
  return page.$eval('#episode', (root) => ({
    actions: [...root.querySelectorAll('.turn .action')].map((e) => e.textContent ?? ''),
    searches: [...root.querySelectorAll('.search-call')].map((call) => ({
      query: call.querySelector('.query')?.textContent ?? '',
      titles: [...call.querySelectorAll('li')].map((li) => li.querySelector('.doc-title')?.textContent ?? ''),
    })),
    answer:
      (root.querySelector('.final-answer') as HTMLElement | null)?.dataset.answered === 'true'
        ? root.querySelector('.final-answer')!.textContent
        : null,
    verdict: (root.querySelector('.verdict') as HTMLElement).dataset.verdict as Episode['verdict'],
  }));
}

async function askTestQuestion(page: Page, index: number): Promise<Episode> {
  await page.select('#test-question', String(index));
  expect(await submit(page)).toBe(null);
  return shownEpisode(page);
}

async function askTyped(page: Page, question: string): Promise<Episode> {
  await page.select('#test-question', '');
  await page.$eval(
    '#question',
    (e, value) => {
      (e as HTMLTextAreaElement).value = value;
    },
    question,
  );
  expect(await submit(page)).toBe(null);
  return shownEpisode(page);
}

describe.skipIf(chromium.skip)('the page in headless Chromium', () => {
  const out = mkdtempSync(join(tmpdir(), 'agent-r1-web-page-'));
  let site: Site;
  let expected: Episode[];
  let expectedTyped: Episode;
  let questions: QaExample[];

  beforeAll(async () => {
    await buildPage(out);
    await writeSiteData(out, SHIPPED_POLICY);
    site = await serveSite(out);
    const agent = await loadAgent<QaExample>(SHIPPED_POLICY);
    questions = JSON.parse(readFileSync(join(out, 'data', 'questions.json'), 'utf8'));
    expected = [];
    for (const i of QUESTIONS) expected.push(await nodeEpisode(agent, questions[i]));
    expectedTyped = await nodeEpisode(agent, TYPED);
    agent.dispose();
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await site?.close();
    rmSync(out, { recursive: true, force: true });
  });

  // Node 20 has no relaxed SIMD: the WebAssembly page keeps to SIMD128 (`?simd=128`) to match it bit for bit.
  const backends = [
    { name: 'SwiftShader WebGPU', flags: WEBGPU_FLAGS, kind: 'webgpu', label: 'WebGPU', query: '' },
    {
      name: 'WebGPU unavailable',
      flags: ['--disable-gpu'],
      kind: 'wasm',
      label: 'WebAssembly',
      query: '?simd=128',
    },
  ];
  for (const backend of backends)
    test(`on ${backend.name}: the page's greedy episodes equal the Node agent's`, async () => {
      const browser = await puppeteer.launch({
        executablePath: chromium.executable(),
        headless: true,
        args: ['--no-sandbox', '--disable-dev-shm-usage', ...backend.flags],
      });
      try {
        const { page, errors } = await openPage(browser, `${site.url}${backend.query}`);
        expect(await page.$eval('#policy', (e) => (e as HTMLElement).dataset.state)).toBe('ready');
        expect(await page.$eval('#backend', (e) => (e as HTMLElement).dataset.state)).toBe(backend.kind);
        console.log(await page.$eval('#backend', (e) => e.textContent));
        expect(await askTyped(page, TYPED), `typed: ${TYPED}`).toEqual(expectedTyped);
        for (const [k, i] of QUESTIONS.entries()) {
          const got = await askTestQuestion(page, i);
          expect(got, `test question ${i}: ${questions[i].question}`).toEqual(expected[k]);
          const speed = await page.$eval('.speed', (e) => e.textContent ?? '');
          expect(speed).toMatch(new RegExp(`tokens/s on ${backend.label}$`));
          console.log(
            `${backend.name}: "${questions[i].question}" → ${got.answer} (${got.verdict}); ${speed}`,
          );
        }
        expect(expected.map((e) => e.verdict)).toEqual(expect.arrayContaining(['right', 'wrong']));
        // The compare call shows the figures the policy wrote, as a search shows its query.
        expect(expected.flatMap((e) => e.searches.map((c) => c.query))).toContainEqual(
          expect.stringMatching(/^\S.* [\d,]+ ; \S.* [\d,]+$/),
        );
        await page.screenshot({ path: join(SCREENSHOTS, `ask-${backend.kind}.png`) });
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }
    }, 120_000);

  test("Train in the tab (WebGPU unavailable): the reveal run's curve is trainAgent's in Node, its reward rises, and Stop stops it", async () => {
    const logs = mkdtempSync(join(tmpdir(), 'agent-r1-web-train-'));
    const config = resolveConfig({
      preset: 'reveal',
      overrides: [`checkpoint.dir=${join(logs, 'checkpoints')}`, `log.dir=${logs}`, 'log.progress=none'],
    });
    const node = await trainAgent(config, await createTask(config));
    node.policy.dispose();
    rmSync(logs, { recursive: true, force: true });
    const browser = await puppeteer.launch({
      executablePath: chromium.executable(),
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
    try {
      const { page, errors } = await openPage(browser, `${site.url}?simd=128`);
      await page.click('button[data-panel="train"]');
      const finished = () =>
        page.waitForFunction(
          () =>
            ['done', 'stopped', 'error'].includes(
              document.getElementById('train-status')?.dataset.state ?? '',
            ),
          { timeout: 60_000 },
        );
      const series = (selector: string) =>
        page.$eval(selector, (e) =>
          (e.getAttribute('data-values') ?? '').split(',').filter(Boolean).map(Number),
        );
      await page.click('#train-start');
      await finished();
      const status = await page.$eval('#train-status', (e) => e.textContent ?? '');
      console.log(status);
      expect(await page.$eval('#train-status', (e) => (e as HTMLElement).dataset.state)).toBe('done');
      const rewards = await series('#rl-curve polyline.reward');
      expect(rewards).toEqual(node.metrics.map((m) => m.reward));
      expect(await series('#rl-curve polyline.tools')).toEqual(node.metrics.map((m) => m.toolCalls));
      expect(await series('#rl-curve g.val-em')).toEqual(node.evaluations.map((e) => e.evaluation.scores.em));
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      expect(mean(rewards.slice(-10)) - mean(rewards.slice(0, 10))).toBeGreaterThan(0.3);
      await page.screenshot({ path: join(SCREENSHOTS, 'train-wasm.png') });

      // Stop: a long run stopped during GRPO ends after the step in progress.
      await page.$eval('#train-steps', (e) => {
        (e as HTMLInputElement).value = '500';
      });
      await page.click('#train-start');
      await page.waitForFunction(() => document.getElementById('train-status')?.dataset.state === 'rl', {
        timeout: 60_000,
      });
      await page.click('#train-stop');
      await finished();
      expect(await page.$eval('#train-status', (e) => (e as HTMLElement).dataset.state)).toBe('stopped');
      const taken = (await series('#rl-curve polyline.reward')).length;
      expect(taken).toBeGreaterThan(0);
      expect(taken).toBeLessThan(500);
      expect(await page.$eval('#train-status', (e) => e.textContent)).toMatch(
        new RegExp(`^Stopped after GRPO step ${taken} `),
      );
      expect(await page.$eval('#train-start', (e) => (e as HTMLButtonElement).disabled)).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 120_000);

  test('by default the WebAssembly kernels use relaxed SIMD, which Chromium has, and the page answers', async () => {
    const browser = await puppeteer.launch({
      executablePath: chromium.executable(),
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
    try {
      const { page, errors } = await openPage(browser, site.url);
      expect(await page.$eval('#backend', (e) => e.textContent)).toMatch(
        /^Computing on WebAssembly relaxed SIMD kernels on \d+ thread\(s\)/,
      );
      const got = await askTestQuestion(page, QUESTIONS[0]);
      expect(['right', 'wrong']).toContain(got.verdict);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 120_000);

  test('bad input gets a message on the page, and the page still answers', async () => {
    const browser = await puppeteer.launch({
      executablePath: chromium.executable(),
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
    const files = mkdtempSync(join(tmpdir(), 'agent-r1-web-files-'));
    try {
      const { page, errors } = await openPage(browser, `${site.url}?simd=128`);
      const setQuestion = (text: string) =>
        page.$eval(
          '#question',
          (e, value) => {
            (e as HTMLTextAreaElement).value = value;
          },
          text,
        );
      await setQuestion('   ');
      expect(await submit(page)).toBe('Type a question first, or pick one of the test split.');
      await setQuestion('Where is Paris? '.repeat(625));
      expect(await submit(page)).toMatch(
        /^The question is too long for this policy: with its prompt it is [\d,]+ tokens, and the policy reads at most 384 in all/,
      );

      const policy = (file: string) => readFileSync(join(SHIPPED_POLICY, file));
      const choose = async (contents: Record<string, Uint8Array | string>) => {
        const dir = mkdtempSync(join(files, 'pick-'));
        for (const [name, body] of Object.entries(contents)) writeFileSync(join(dir, name), body);
        await page.$eval('#ask-message', (e) => {
          (e as HTMLElement).hidden = true;
        });
        const input = await page.$('input#checkpoint-files');
        await (input as unknown as { uploadFile(...paths: string[]): Promise<void> }).uploadFile(
          ...Object.keys(contents).map((name) => join(dir, name)),
        );
        await page.waitForFunction(() => !document.getElementById('ask-message')?.hidden, {
          timeout: 30_000,
        });
        return page.$eval('#ask-message', (e) => e.textContent);
      };
      const good = { 'agent.json': policy('agent.json'), 'tokenizer.json': policy('tokenizer.json') };
      // A corrupt model file: the first kilobyte only.
      expect(
        await choose({ ...good, 'model.safetensors': policy('model.safetensors').subarray(0, 1024) }),
      ).toMatch(
        /^The checkpoint did not load: policy the chosen files: cannot read model\.safetensors: safetensors: the chosen files\/model\.safetensors: /,
      );
      // Another model's weights under this agent.json.
      const description = JSON.parse(policy('agent.json').toString());
      const other = new TransformerLM({
        ...description.model,
        dModel: 32,
        heads: 2,
        kvHeads: 1,
        ffnHidden: 64,
      });
      const otherBytes = serializeSafetensors(stateDict(other));
      other.dispose();
      expect(await choose({ ...good, 'model.safetensors': otherBytes })).toMatch(
        /^The checkpoint did not load: policy the chosen files: the checkpoint does not fit this model's config \(/,
      );
      expect(await choose({ 'agent.json': good['agent.json'], 'model.safetensors': otherBytes })).toBe(
        'The checkpoint did not load: choose the three files of a policy folder: tokenizer.json is missing',
      );
      expect(
        await choose({
          ...good,
          'agent.json': '{"format": "agent-r1-agent"',
          'model.safetensors': otherBytes,
        }),
      ).toMatch(/^The checkpoint did not load: the chosen files\/agent\.json: not valid JSON/);
      // The policy loaded first is still there and answers.
      expect(await page.$eval('#policy', (e) => (e as HTMLElement).dataset.state)).toBe('ready');
      expect(await askTestQuestion(page, QUESTIONS[0])).toEqual(expected[0]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      rmSync(files, { recursive: true, force: true });
    }
  }, 120_000);
});
