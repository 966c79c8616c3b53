/**
 * A toy task for end-to-end RL tests: each question asks for the secret number of a key ("What is the
 * secret for key K7?"); only the `lookup` tool knows it ("K7: 42"), and the policy must then answer
 * `<answer>42</answer>`. Examples and secrets come from a seed; the reward is exact match.
 */
import type { EnvFactory } from '../../mdp/env.js';
import { ToolEnv } from '../../mdp/tool-env.js';
import { exactMatch, f1Score } from '../../rewards/qa.js';
import type { ToolCallFormat } from '../../tools/formats/format.js';
import { HermesFormat } from '../../tools/formats/hermes.js';
import { TagsFormat } from '../../tools/formats/tags.js';
import { ToolRegistry } from '../../tools/registry.js';
import type { Tool } from '../../tools/tool.js';
import { Generator } from '@agent-r1/tensor';

export interface SecretNumberExample {
  id: number;
  key: string;
  question: string;
  secret: number;
  /** Gold answers (the secret as text). */
  answers: string[];
}

export interface SecretNumberTaskOptions {
  seed: number;
  /** Number of examples. */
  count: number;
  /** Distinct keys: a count (keys K0, K1, …) or the key names (letters, digits, '_'). Default 10. */
  keys?: number | readonly string[];
  /** Secrets are integers in [0, maxSecret]; default 99. */
  maxSecret?: number;
  /** 'tags' (default: `<lookup>K7</lookup>`, responses in `<result>`), 'hermes', or any format. */
  format?: 'tags' | 'hermes' | ToolCallFormat;
  /** Default 4. */
  maxTurns?: number;
  maxObservationChars?: number;
  formatPenalty?: number;
  formatReward?: number;
  /** Process reward of each successful lookup; when set, process rewards are on. Default none. */
  lookupReward?: number;
  onNoAction?: 'nudge' | 'end';
  /** The prompt; default the question and a newline (short, for tiny models). */
  buildPrompt?(example: SecretNumberExample, systemPrompt: string): string;
}

export interface SecretNumberTask {
  examples: SecretNumberExample[];
  secrets: ReadonlyMap<string, number>;
  tools: ToolRegistry;
  format: ToolCallFormat;
  makeEnv: EnvFactory<SecretNumberExample>;
  /** The correct next action for a context (see `scriptedAction`), in this task's format. */
  scriptedAction(context: string): string;
}

export const LOOKUP_TOOL = 'lookup';

/** The default format: `<lookup>KEY</lookup>`. */
export function secretNumberTagsFormat(): TagsFormat {
  return new TagsFormat({ tags: [{ tag: LOOKUP_TOOL, tool: LOOKUP_TOOL, argument: 'key' }] });
}

/** Numbers uniform on [0, 1) from the tensor library's seeded generator. */
function mulberry32(seed: number): () => number {
  const generator = new Generator(seed);
  return () => generator.random();
}

const KEY_NAME = /^\w+$/;

export function secretNumberQuestion(key: string): string {
  return `What is the secret for key ${key}?`;
}

export function makeLookupTool(secrets: ReadonlyMap<string, number>, reward?: number): Tool<{ key: string }> {
  return {
    name: LOOKUP_TOOL,
    description: 'Returns the secret number of a key.',
    parameters: {
      type: 'object',
      properties: { key: { type: 'string', description: 'The key, e.g. K7.' } },
      required: ['key'],
      additionalProperties: false,
    },
    async execute({ key }) {
      const secret = secrets.get(key);
      if (secret === undefined)
        return { content: `no secret for key ${JSON.stringify(key)}`, success: false };
      return reward === undefined
        ? { content: `${key}: ${secret}`, success: true }
        : { content: `${key}: ${secret}`, success: true, reward };
    },
  };
}

export function makeSecretNumberTask(options: SecretNumberTaskOptions): SecretNumberTask {
  const { seed, count } = options;
  if (!Number.isInteger(count) || count < 0)
    throw new Error(`secret-number: count must be an integer ≥ 0, got ${count}`);
  const keySpec = options.keys ?? 10;
  const keys =
    typeof keySpec === 'number' ? Array.from({ length: keySpec }, (_, i) => `K${i}`) : [...new Set(keySpec)];
  if (keys.length === 0) throw new Error('secret-number: at least one key is needed');
  for (const k of keys)
    if (!KEY_NAME.test(k)) throw new Error(`secret-number: invalid key "${k}" (use letters, digits, _)`);
  const maxSecret = options.maxSecret ?? 99;
  if (!Number.isInteger(maxSecret) || maxSecret < 0)
    throw new Error(`secret-number: invalid maxSecret ${maxSecret}`);

  const rand = mulberry32(seed);
  const secrets = new Map<string, number>();
  for (const k of keys) secrets.set(k, Math.floor(rand() * (maxSecret + 1)));
  const examples: SecretNumberExample[] = Array.from({ length: count }, (_, id) => {
    const key = keys[Math.floor(rand() * keys.length)];
    const secret = secrets.get(key)!;
    return { id, key, question: secretNumberQuestion(key), secret, answers: [String(secret)] };
  });

  const format =
    options.format === 'hermes'
      ? new HermesFormat()
      : options.format === undefined || options.format === 'tags'
        ? secretNumberTagsFormat()
        : options.format;
  const tools = new ToolRegistry().register(makeLookupTool(secrets, options.lookupReward));
  const buildPrompt = options.buildPrompt ?? ((ex: SecretNumberExample) => `${ex.question}\n`);
  const makeEnv: EnvFactory<SecretNumberExample> = () =>
    new ToolEnv<SecretNumberExample>({
      tools,
      format,
      maxTurns: options.maxTurns ?? 4,
      maxObservationChars: options.maxObservationChars,
      formatPenalty: options.formatPenalty,
      formatReward: options.formatReward,
      processRewards: options.lookupReward !== undefined,
      onNoAction: options.onNoAction,
      buildPrompt,
      score: (ex, answer) => ({
        reward: exactMatch(answer, ex.answers),
        info: { em: exactMatch(answer, ex.answers), f1: f1Score(answer, ex.answers), gold: ex.answers[0] },
      }),
    });
  return {
    examples,
    secrets,
    tools,
    format,
    makeEnv,
    scriptedAction: (context) => scriptedAction(context, format),
  };
}

/**
 * The correct next action given the context so far (prompt, and the actions and observations after it):
 * look the key of the last question up, then, once its line "KEY: N" has come back, answer N.
 */
export function scriptedAction(context: string, format: ToolCallFormat = secretNumberTagsFormat()): string {
  const questions = [...context.matchAll(/secret for key (\w+)\?/g)];
  const last = questions.at(-1);
  if (!last) throw new Error('scriptedAction: no secret-number question in the context');
  const key = last[1];
  const after = context.slice((last.index ?? 0) + last[0].length);
  const found = new RegExp(`(?<!\\w)${key}: (\\d+)`).exec(after);
  if (found) return format.renderAnswer(found[1]);
  return format.renderCall({ name: LOOKUP_TOOL, args: { key } });
}
