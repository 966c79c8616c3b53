/**
 * The toy environment of the end-to-end RL tests: each episode hides a digit; the `<reveal>` tool shows it
 * (`<result>7</result>`), and the policy earns 1 for answering it (`<answer>7</answer>`). Guessing without
 * the tool is right one time in ten, so the reward rises exactly as far as the policy learns to use the tool
 * and to repeat what it returned. A word-level vocabulary of 17 tokens keeps the policy tiny.
 */
import type { AgentEnv, StepResult } from '../../mdp/env.js';
import type { TextCodec } from '../../rollout/config.js';
import type { AgentTask } from '../task.js';

export const WORDS = [
  '?',
  '<reveal>',
  '<result>',
  '</result>',
  '<answer>',
  '</answer>',
  '<eos>',
  ...'0123456789',
];
const PATTERN = new RegExp(WORDS.map((w) => w.replace(/[?]/g, '\\?')).join('|'), 'g');

export const codec: TextCodec = {
  encode: (text) => [...text.matchAll(PATTERN)].map((m) => WORDS.indexOf(m[0])),
  decode: (ids) => Array.from(ids, (i) => WORDS[i] ?? '').join(''),
};

export const STOP_TOKENS = [WORDS.indexOf('<reveal>'), WORDS.indexOf('</answer>'), WORDS.indexOf('<eos>')];

export interface RevealExample {
  secret: number;
}

export function examples(count: number, seed: number): RevealExample[] {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return { secret: Math.floor((s / 2 ** 32) * 10) };
  });
}

export class RevealEnv implements AgentEnv<RevealExample> {
  private secret = 0;

  reset(example: RevealExample): string {
    this.secret = example.secret;
    return '?';
  }

  async step(action: string): Promise<StepResult> {
    const answer = /<answer>(\d)<\/answer>/.exec(action);
    if (answer) {
      const em = Number(answer[1]) === this.secret ? 1 : 0;
      return {
        observation: null,
        rewards: [{ value: em, kind: 'outcome' }],
        done: true,
        toolCalls: [],
        info: { em },
      };
    }
    if (action.endsWith('<reveal>')) {
      const content = String(this.secret);
      return {
        observation: `<result>${content}</result>`,
        rewards: [],
        done: false,
        toolCalls: [{ name: 'reveal', args: {}, content, success: true }],
        info: {},
      };
    }
    return {
      observation: null,
      rewards: [{ value: 0, kind: 'outcome' }],
      done: true,
      toolCalls: [],
      info: { em: 0 },
    };
  }
}

/** A scripted policy: with the tool (reveal, then repeat what it showed), or a blind guess of `guess`. */
export function demoPolicy(useTool: boolean, guess: number) {
  return (context: string): string => {
    const shown = /<result>(\d)<\/result>$/.exec(context);
    if (shown) return `<answer>${shown[1]}</answer>`;
    return useTool ? '<reveal>' : `<answer>${guess}</answer>`;
  };
}

/**
 * The reveal task for the trainer: its scripted warm start uses the tool in 3 demonstrations of 10 and
 * guesses in the rest, so the warm-started policy mostly guesses and RL has to learn that the tool pays.
 */
export function revealTask(config: { seed: number }): AgentTask<RevealExample> {
  return {
    name: 'reveal',
    answerMetrics: ['em'],
    train: examples(512, config.seed + 1),
    validation: examples(100, config.seed + 2),
    makeEnv: () => new RevealEnv(),
    codec,
    vocabSize: WORDS.length,
    stopTokens: STOP_TOKENS,
    stopStrings: [],
    scripted: (_example, index) => demoPolicy(index % 10 < 3, (index * 7) % 10),
    // In chat the user is the one who hides the digit: "7" plays an episode whose <reveal> shows 7.
    fromQuestion: (question) => {
      const digits = question.match(/\d/g);
      if (digits?.length !== 1)
        throw new Error('reveal: type the one digit (0-9) for the <reveal> tool to hide');
      return { secret: Number(digits[0]) };
    },
  };
}
