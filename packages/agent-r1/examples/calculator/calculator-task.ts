/**
 * A task of your own: arithmetic questions ("What is 37 + 48?") that the policy answers with the help of
 * the calculator tool. It brings its examples, its environment (a ToolEnv with the tool and a tag format),
 * a tiny vocabulary, scripted demonstrations for the warm start and its own options; started from a
 * pretrained model (`model.from`), it speaks that model's chat template instead. `agent-r1 train
 * --task-module ./calculator-task.ts` registers the definition this module exports; a script calls
 * `registerTask` with it.
 */
import {
  type AgentTask,
  type TextCodec,
  TagsFormat,
  ToolEnv,
  ToolRegistry,
  type PretrainedVocabulary,
  type TaskVocabulary,
  type ToolCallFormat,
  defineTask,
  exactMatch,
  int,
  oneOf,
  pretrainedChat,
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

/** What the task's episodes are written in: the format of calls, the prompt, the vocabulary. */
interface Speech {
  format: ToolCallFormat;
  prompt: (q: Question) => string;
  vocabulary: TaskVocabulary;
}

/**
 * From scratch: the tiny vocabulary, the tags, the bare question. From a pretrained model: its tokenizer,
 * its chat template's prompt (the tools declared) and its tool-call format.
 */
function speechFor(pretrained: PretrainedVocabulary | undefined, tools: ToolRegistry): Speech {
  if (!pretrained)
    return {
      format,
      prompt: question,
      vocabulary: {
        codec,
        vocabSize: VOCAB.length,
        stopTokens: [VOCAB.indexOf('</calc>'), VOCAB.indexOf('</answer>')],
        stopStrings: format.stop,
      },
    };
  const { chat, vocabulary } = pretrainedChat(pretrained);
  const instruction = 'Use the calculator tool, then reply with the number within <answer></answer>.';
  return {
    format: chat.format,
    prompt: (q) => chat.prompt(instruction, question(q), tools.list()),
    vocabulary,
  };
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
  create: (config, { digits, operations, toolDemos }, context): AgentTask<Question> => {
    // One draw, cut in two, so that no validation question is a training one.
    const all = questions(600, digits, operations, config.seed);
    const tools = new ToolRegistry().register(calculator);
    const speech = speechFor(context?.pretrained, tools);
    return {
      name: 'calculator',
      train: all.slice(100),
      validation: all.slice(0, 100),
      makeEnv: () =>
        new ToolEnv<Question>({
          tools,
          format: speech.format,
          maxTurns: config.rollout.maxTurns,
          // A policy trained from scratch learns the format from the demonstrations, so the question is
          // all; a pretrained model reads the tools and their format in its template's system turn.
          buildPrompt: (q) => speech.prompt(q),
          score: (q, answer) => {
            const em = exactMatch(answer, [String(q.answer)]);
            return { reward: em, info: { em } };
          },
          onNoAction: 'end',
        }),
      ...speech.vocabulary,
      answerMetrics: ['em'],
      // The warm start's teacher: it uses the calculator in `toolDemos` of every 10 demonstrations and
      // answers from memory in the rest. A tiny policy cannot add in its head, so RL has something to learn.
      scripted: (q, index) => (episode) => {
        // The calculator's result, in either format's response tag.
        const result = /<(result|tool_response)>\s*(-?\d+)\s*<\/\1>/.exec(episode);
        if (result) return speech.format.renderAnswer(result[2]);
        if (index % 10 < toolDemos)
          return speech.format.renderCall({
            name: 'calculator',
            args: { expression: `${q.a}${q.op}${q.b}` },
          });
        return speech.format.renderAnswer(String(q.answer));
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
