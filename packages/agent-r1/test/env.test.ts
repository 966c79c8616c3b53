import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  exactMatch,
  f1Score,
  HermesFormat,
  runTextEpisode,
  TagsFormat,
  type Tool,
  ToolEnv,
  type ToolEnvConfig,
  type ToolCallFormat,
  ToolRegistry,
} from '../src/index.js';

interface QA {
  question: string;
  answers: string[];
}

const example: QA = { question: 'Where is the Eiffel Tower?', answers: ['Paris'] };

const schema: Tool['parameters'] = {
  type: 'object',
  properties: { query: { type: 'string', minLength: 1 } },
  required: ['query'],
  additionalProperties: false,
};

function searchTool(overrides: Partial<Tool> = {}): Tool {
  return {
    name: 'search',
    description: 'Searches.',
    parameters: schema,
    execute: async (args) => ({ content: `results for ${String(args.query)}`, success: true }),
    ...overrides,
  };
}

const tags = new TagsFormat({ tags: [{ tag: 'search', tool: 'search', argument: 'query' }] });
const hermes = new HermesFormat();

function makeEnv(config: Partial<ToolEnvConfig<QA>> = {}, tools: Tool[] = [searchTool()]): ToolEnv<QA> {
  return new ToolEnv<QA>({
    tools: new ToolRegistry(tools),
    format: tags,
    maxTurns: 4,
    buildPrompt: (ex, system) => `${system}\n\nQuestion: ${ex.question}\n`,
    score: (ex, answer) => ({
      reward: exactMatch(answer, ex.answers),
      info: { em: exactMatch(answer, ex.answers), f1: f1Score(answer, ex.answers) },
    }),
    ...config,
  });
}

describe('ToolEnv', () => {
  it('reset builds the prompt with the format system prompt', () => {
    const env = makeEnv();
    const prompt = env.reset(example);
    expect(prompt).toContain('<search>query</search> calls search: Searches.');
    expect(prompt.endsWith('Question: Where is the Eiffel Tower?\n')).toBe(true);
  });

  it('an answer ends the episode with the outcome reward and info', async () => {
    const env = makeEnv({ formatReward: 0.1 });
    env.reset(example);
    const r = await env.step('<think>known</think><answer>the Paris</answer>', [1, 2]);
    expect(r.done).toBe(true);
    expect(r.observation).toBeNull();
    expect(r.rewards).toEqual([
      { value: 1, kind: 'outcome' },
      { value: 0.1, kind: 'format' },
    ]);
    expect(r.info).toMatchObject({ answer: 'the Paris', em: 1, f1: 1, reason: 'answer', turns: 1 });
    await expect(env.step('<answer>x</answer>', [])).rejects.toThrow(/after the episode ended/);
  });

  it('a wrong answer gets 0; an answer next to a malformed part gets the penalty, not the bonus', async () => {
    const env = makeEnv({ formatReward: 0.1, formatPenalty: 0.2 });
    env.reset(example);
    expect((await env.step('<answer>Rome</answer>', [])).rewards).toEqual([
      { value: 0, kind: 'outcome' },
      { value: 0.1, kind: 'format' },
    ]);
    env.reset(example);
    const r = await env.step('<search>x <answer>Paris</answer>', []);
    expect(r.rewards).toEqual([
      { value: 1, kind: 'outcome' },
      { value: -0.2, kind: 'format' },
    ]);
  });

  it('a tool call runs and its response comes back as the observation', async () => {
    const env = makeEnv({ formatPenalty: 0.5 });
    env.reset(example);
    const r = await env.step('<search>Eiffel Tower</search>', []);
    expect(r).toEqual({
      observation: '\n<result>results for Eiffel Tower</result>\n',
      rewards: [],
      done: false,
      toolCalls: [
        {
          name: 'search',
          args: { query: 'Eiffel Tower' },
          content: 'results for Eiffel Tower',
          success: true,
        },
      ],
      info: { turns: 1, toolCallCount: 1, formatErrorTurns: 0 },
    });
    const end = await env.step('<answer>Paris</answer>', []);
    expect(end.info).toMatchObject({ turns: 2, toolCallCount: 1, em: 1 });
  });

  it('a malformed call gives an error observation and the format penalty', async () => {
    const env = makeEnv({ format: hermes, formatPenalty: 0.1 });
    env.reset(example);
    const r = await env.step('<tool_call>{"name": "search", "arguments": {</tool_call>', []);
    expect(r.done).toBe(false);
    expect(r.rewards).toEqual([{ value: -0.1, kind: 'format' }]);
    expect(r.observation).toMatch(/^\n<tool_response>\nError: tool call 1: invalid JSON/);
    expect(r.observation).toContain('Error: no tool call or answer found');
    expect(r.toolCalls).toEqual([]);
  });

  it('an unknown tool gives an error naming the available ones, and the penalty', async () => {
    const typo = new TagsFormat({
      tags: [
        { tag: 'search', tool: 'search', argument: 'query' },
        { tag: 'serch', tool: 'serch', argument: 'query' },
      ],
    });
    const env = makeEnv({ format: typo, formatPenalty: 0.1 });
    env.reset(example);
    const r = await env.step('<serch>Eiffel</serch>', []);
    expect(r.observation).toBe('\n<result>Error: unknown tool "serch"; available: search</result>\n');
    expect(r.rewards).toEqual([{ value: -0.1, kind: 'format' }]);
    expect(r.toolCalls).toEqual([
      {
        name: 'serch',
        args: { query: 'Eiffel' },
        content: 'Error: unknown tool "serch"; available: search',
        success: false,
      },
    ]);
    expect(r.info).toMatchObject({ formatErrorTurns: 1 });
  });

  it('invalid arguments give an error and the penalty; the valid call of the same action still runs', async () => {
    const env = makeEnv({ format: hermes, formatPenalty: 0.1 });
    env.reset(example);
    const r = await env.step(
      hermes.renderCall({ name: 'search', args: { query: 'ok' } }) +
        hermes.renderCall({ name: 'search', args: { q: 'bad' } }),
      [],
    );
    expect(r.rewards).toEqual([{ value: -0.1, kind: 'format' }]);
    expect(r.toolCalls.map((c) => c.success)).toEqual([true, false]);
    expect(r.observation).toBe(
      '\n<tool_response>\nresults for ok\n</tool_response>\n<tool_response>\n' +
        'Error: invalid arguments for tool "search": missing required property "query"; unexpected property "q"' +
        '\n</tool_response>\n',
    );
  });

  it('a tool that throws or fails costs no penalty', async () => {
    const env = makeEnv({ formatPenalty: 0.1 }, [
      searchTool({
        execute: async () => {
          throw new Error('index offline');
        },
      }),
    ]);
    env.reset(example);
    const r = await env.step('<search>x</search>', []);
    expect(r.rewards).toEqual([]);
    expect(r.observation).toBe('\n<result>Error: tool "search" failed: index offline</result>\n');
    expect(r.toolCalls[0].success).toBe(false);
  });

  it('no call and no answer: a penalty and a nudge (default), or the end', async () => {
    const env = makeEnv({ formatPenalty: 0.1 });
    env.reset(example);
    const r = await env.step('I think it is Paris.', []);
    expect(r.done).toBe(false);
    expect(r.rewards).toEqual([{ value: -0.1, kind: 'format' }]);
    expect(r.observation).toBe(`\n<result>${tags.usageHint()}</result>\n`);
    const ending = makeEnv({ formatPenalty: 0.1, onNoAction: 'end' });
    ending.reset(example);
    const e = await ending.step('I think it is Paris.', []);
    expect(e.done).toBe(true);
    expect(e.rewards).toEqual([
      { value: 0, kind: 'outcome' },
      { value: -0.1, kind: 'format' },
    ]);
    expect(e.info).toMatchObject({ reason: 'no_action', answer: null });
  });

  it('reaching maxTurns ends the episode with zero outcome reward', async () => {
    let calls = 0;
    const env = makeEnv({ maxTurns: 2 }, [
      searchTool({
        execute: async () => {
          calls++;
          return { content: 'r', success: true };
        },
      }),
    ]);
    env.reset(example);
    expect((await env.step('<search>a</search>', [])).done).toBe(false);
    const last = await env.step('<search>b</search>', []);
    expect(last).toMatchObject({ done: true, observation: null, rewards: [{ value: 0, kind: 'outcome' }] });
    expect(last.info).toMatchObject({ reason: 'max_turns', turns: 2 });
    expect(calls).toBe(1);
    // reset starts a fresh episode on the same environment.
    env.reset(example);
    expect(env.turn).toBe(0);
    expect((await env.step('<answer>Paris</answer>', [])).rewards).toEqual([{ value: 1, kind: 'outcome' }]);
  });

  it('the calls of one action run concurrently', async () => {
    let inFlight = 0;
    let peak = 0;
    const release: (() => void)[] = [];
    const slow = searchTool({
      execute: async (args) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        // Each call waits until all three have started: sequential execution would never finish.
        await new Promise<void>((resolve) => {
          release.push(resolve);
          if (release.length === 3) for (const r of release) r();
        });
        inFlight--;
        return { content: String(args.query), success: true };
      },
    });
    const env = makeEnv({}, [slow]);
    env.reset(example);
    const r = await env.step('<search>a</search><search>b</search><search>c</search>', []);
    expect(peak).toBe(3);
    expect(r.observation).toBe('\n<result>a</result>\n<result>b</result>\n<result>c</result>\n');
  });

  it('uses executeBatch for all calls of one tool, in order', async () => {
    const batches: unknown[][] = [];
    const batched = searchTool({
      execute: async () => {
        throw new Error('execute should not be called');
      },
      executeBatch: async (calls) => {
        batches.push(calls);
        return calls.map((c) => ({ content: `#${String(c.query)}`, success: true }));
      },
    });
    const env = makeEnv({}, [batched]);
    env.reset(example);
    const r = await env.step('<search>a</search><search>b</search>', []);
    expect(batches).toEqual([[{ query: 'a' }, { query: 'b' }]]);
    expect(r.toolCalls.map((c) => c.content)).toEqual(['#a', '#b']);
  });

  it('process rewards are credited only when on; records keep them either way', async () => {
    const rewarding = searchTool({ execute: async () => ({ content: 'hit', success: true, reward: 0.25 }) });
    for (const processRewards of [true, false]) {
      const env = makeEnv({ processRewards }, [rewarding]);
      env.reset(example);
      const r = await env.step('<search>a</search><search>b</search>', []);
      expect(r.rewards).toEqual(
        processRewards
          ? [
              { value: 0.25, kind: 'process' },
              { value: 0.25, kind: 'process' },
            ]
          : [],
      );
      expect(r.toolCalls.map((c) => c.reward)).toEqual([0.25, 0.25]);
    }
  });

  it("the task's callReward sees each successful call with the episode's earlier ones, when process rewards are on", async () => {
    const seen: string[][] = [];
    const callReward = (ex: QA, call: { content: string }, earlier: readonly { content: string }[]) => {
      seen.push([ex.question, call.content, ...earlier.map((e) => e.content)]);
      return call.content.endsWith('b') ? 0.5 : 0;
    };
    const failing = searchTool({
      execute: async (args) =>
        args.query === 'x'
          ? { content: 'no index', success: false }
          : { content: `results for ${String(args.query)}`, success: true },
    });
    const env = makeEnv({ processRewards: true, callReward }, [failing]);
    env.reset(example);
    const first = await env.step('<search>a</search><search>x</search>', []);
    expect(first.rewards).toEqual([]);
    const second = await env.step('<search>b</search>', []);
    expect(second.rewards).toEqual([{ value: 0.5, kind: 'process' }]);
    // The failed call is neither judged nor remembered; a reset forgets the episode's calls.
    expect(seen).toEqual([
      [example.question, 'results for a'],
      [example.question, 'results for b', 'results for a'],
    ]);
    env.reset(example);
    await env.step('<search>b</search>', []);
    expect(seen.at(-1)).toEqual([example.question, 'results for b']);
    const off = makeEnv({ processRewards: false, callReward }, [failing]);
    off.reset(example);
    expect((await off.step('<search>b</search>', [])).rewards).toEqual([]);
  });

  it('cuts each response to maxObservationChars', async () => {
    const long = searchTool({ execute: async () => ({ content: 'x'.repeat(50), success: true }) });
    const env = makeEnv({ maxObservationChars: 10 }, [long]);
    env.reset(example);
    const r = await env.step('<search>a</search>', []);
    expect(r.observation).toBe(`\n<result>${'x'.repeat(10)}...</result>\n`);
    expect(r.toolCalls[0].content).toHaveLength(50);
  });

  it('refuses step before reset and a bad maxTurns', async () => {
    await expect(makeEnv().step('x', [])).rejects.toThrow(/before reset/);
    expect(() => makeEnv({ maxTurns: 0 })).toThrow(/maxTurns/);
  });

  it('never throws on random actions (property)', async () => {
    const fragments = [
      '<search>',
      '</search>',
      '<answer>',
      '</answer>',
      '<tool_call>',
      '</tool_call>',
      '{"name":',
    ];
    const action = fc
      .array(fc.oneof(fc.string(), fc.constantFrom(...fragments)), { maxLength: 8 })
      .map((p) => p.join(''));
    const formats: ToolCallFormat[] = [tags, hermes];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...formats),
        fc.array(action, { minLength: 1, maxLength: 4 }),
        async (format, actions) => {
          const env = makeEnv({ format, maxTurns: 3, formatPenalty: 0.1 });
          env.reset(example);
          for (const a of actions) {
            const r = await env.step(a, []);
            expect(typeof r.done).toBe('boolean');
            for (const x of r.rewards) expect(Number.isFinite(x.value)).toBe(true);
            if (r.done) break;
            expect(typeof r.observation).toBe('string');
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('runTextEpisode plays a scripted policy', async () => {
    const env = makeEnv();
    const ep = await runTextEpisode(env, example, (ctx) =>
      ctx.includes('results for') ? '<answer>Paris</answer>' : '<search>Eiffel Tower</search>',
    );
    expect(ep.done).toBe(true);
    expect(ep.total).toBe(1);
    expect(ep.actions).toEqual(['<search>Eiffel Tower</search>', '<answer>Paris</answer>']);
    expect(
      ep.context.endsWith(
        '<search>Eiffel Tower</search>\n<result>results for Eiffel Tower</result>\n<answer>Paris</answer>',
      ),
    ).toBe(true);
    expect(ep.toolCalls).toHaveLength(1);
    expect(ep.toolCalls[0].turn).toBe(0);
  });
});
