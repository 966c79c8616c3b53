/**
 * A task of your own: arithmetic questions ("What is 37 + 48?") that the policy answers with the help of
 * the calculator tool. It brings its examples, its environment (a ToolEnv with the tool and a tag format),
 * a tiny vocabulary, scripted demonstrations for the warm start and its own options. `agent-r1 train
 * --task-module ./calculator-task.ts` registers the definition this module exports; a script calls
 * `registerTask` with it.
 */
import {
  type AgentTask,
  type TextCodec,
  TagsFormat,
  ToolEnv,
  ToolRegistry,
  defineTask,
  exactMatch,
  int,
  oneOf,
  section,
} from '@agent-r1/agent';
import { Generator } from '@agent-r1/tensor';
import { calculator } from './calculator-tool.js';

export interface Question {
  a: number;
  op: string;
  b: number;
  answer: number;
}

/** `<calc>37+48</calc>` calls the calculator; its result comes back as `<result>85</result>`. */
const format = new TagsFormat({
  tags: [{ tag: 'calc', tool: 'calculator', argument: 'expression' }],
  observationPrefix: '',
  observationSuffix: '',
});

/**
 * The vocabulary: each tag is one token, and so are "What is", each digit and each sign; what it cannot
 * spell, it skips. 22 tokens keep the policy tiny and its training fast.
 */
const TAGS = ['<calc>', '</calc>', '<result>', '</result>', '<answer>', '</answer>'];
const VOCAB = [...TAGS, 'What is', ...' ?+-*0123456789'];
const PIECE = new RegExp(VOCAB.map((t) => t.replace(/[?+*]/g, '\\$&')).join('|'), 'g');

export const codec: TextCodec = {
  encode: (text) => [...text.matchAll(PIECE)].map((m) => VOCAB.indexOf(m[0])),
  decode: (ids) => Array.from(ids, (id) => VOCAB[id] ?? '').join(''),
};

export const question = (q: Question) => `What is ${q.a} ${q.op} ${q.b}?`;

function solve(a: number, op: string, b: number): Question {
  return { a, op, b, answer: op === '+' ? a + b : op === '-' ? a - b : a * b };
}

/** `count` distinct questions with operands of `digits` digits, drawn from a seeded generator. */
function questions(count: number, digits: number, operations: string, seed: number): Question[] {
  const generator = new Generator(seed);
  const low = 10 ** (digits - 1);
  const operand = () => low + Math.floor(generator.random() * (10 ** digits - low));
  const drawn = new Map<string, Question>();
  while (drawn.size < count) {
    const q = solve(operand(), operations[Math.floor(generator.random() * operations.length)], operand());
    drawn.set(question(q), q);
  }
  return [...drawn.values()];
}

export const options = section('The calculator task.', {
  digits: int(2, 'Digits of each operand.', { min: 2, max: 3 }),
  operations: oneOf(['+', '+-', '+-*'], '+', 'The operations the questions ask for.'),
  toolDemos: int(3, 'Of every 10 demonstrations, those that use the calculator.', { min: 0, max: 10 }),
});

export default defineTask({
  name: 'calculator',
  description: 'arithmetic questions, answered with a calculator tool',
  options,
  create: (config, { digits, operations, toolDemos }): AgentTask<Question> => {
    // One draw, cut in two, so that no validation question is a training one.
    const all = questions(600, digits, operations, config.seed);
    const tools = new ToolRegistry().register(calculator);
    return {
      name: 'calculator',
      train: all.slice(100),
      validation: all.slice(0, 100),
      makeEnv: () =>
        new ToolEnv<Question>({
          tools,
          format,
          maxTurns: config.rollout.maxTurns,
          // A pretrained LLM would read `systemPrompt` (the tools and their tags) before the question; a
          // policy trained from scratch learns the format from the demonstrations, so the question is all.
          buildPrompt: (q) => question(q),
          score: (q, answer) => {
            const em = exactMatch(answer, [String(q.answer)]);
            return { reward: em, info: { em } };
          },
          onNoAction: 'end',
        }),
      codec,
      vocabSize: VOCAB.length,
      stopTokens: [VOCAB.indexOf('</calc>'), VOCAB.indexOf('</answer>')],
      stopStrings: format.stop,
      answerMetrics: ['em'],
      // The warm start's teacher: it uses the calculator in `toolDemos` of every 10 demonstrations and
      // answers from memory in the rest. A tiny policy cannot add in its head, so RL has something to learn.
      scripted: (q, index) => (context) => {
        const result = /<result>(-?\d+)<\/result>$/.exec(context);
        if (result) return format.renderAnswer(result[1]);
        if (index % 10 < toolDemos)
          return format.renderCall({ name: 'calculator', args: { expression: `${q.a}${q.op}${q.b}` } });
        return format.renderAnswer(String(q.answer));
      },
      // For `agent.ask(...)` and `agent-r1 chat`: a typed question becomes an example.
      fromQuestion: (text) => {
        const match = /(\d+)\s*([-+*])\s*(\d+)/.exec(text);
        if (!match) throw new Error('calculator: ask e.g. "What is 37 + 48?"');
        return solve(Number(match[1]), match[2], Number(match[3]));
      },
    };
  },
});
