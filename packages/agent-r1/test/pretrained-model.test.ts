/**
 * Training from a pretrained Hugging Face model (`model.from`), on the tiny random checkpoints that
 * packages/nn/test/fixtures/hf/make-reference.py writes in the Hub's layout: the episode is the
 * conversation the model's own chat template writes, the policy starts from the folder's weights, the run
 * ends with a Hugging Face folder of the trained policy, and the checkpoint alone gives the agent back.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatMessage, HfTokenizer, type TransformerLM, loadHfModel } from '@agent-r1/nn';
import { memory, tensor } from '@agent-r1/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { loadHandlers } from '../src/cli/handlers.js';
import { runCli } from '../src/cli/run.js';
import { loadAgent } from '../src/checkpoints/load-agent.js';
import { runTextEpisode } from '../src/mdp/text-episode.js';
import { MULTIHOP_CHAT_INSTRUCTION } from '../src/tasks/multihop-qa/env.js';
import type { QaExample } from '../src/tasks/multihop-qa/data/types.js';
import calculatorTask, { type Question } from '../examples/calculator/calculator-task.js';
import { createTask, registerTask } from '../src/tasks/index.js';
import type { AgentTask } from '../src/tasks/task.js';
import { chatTools } from '../src/tools/formats/chat.js';
import { type TrainConfig, resolveConfig } from '../src/trainer/config.js';
import { HF_EXPORT_DIR, trainAgent } from '../src/trainer/trainer.js';
import { Capture } from './support/capture.js';

const FIXTURES = join(import.meta.dirname, '../../nn/test/fixtures/hf/models');
const root = mkdtempSync(join(tmpdir(), 'agent-r1-pretrained-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = (name: string, from: string, extra: string[] = []): TrainConfig =>
  resolveConfig({
    overrides: [
      'task=multihop-qa',
      `model.from=${from}`,
      'threads=1',
      // The fixtures' 320-token vocabulary spells the template's tool declaration in about 700 tokens.
      'model.maxLength=1600',
      'rollout.maxLength=1600',
      'rollout.maxTurns=2',
      'rollout.maxTokensPerTurn=6',
      'rollout.maxObservationTokens=16',
      'rollout.n=2',
      'sft.steps=2',
      'sft.demonstrations=4',
      'sft.batchSize=2',
      'train.steps=1',
      'train.promptsPerStep=1',
      'train.miniBatchSize=2',
      'train.microBatchSize=2',
      'eval.every=0',
      'eval.examples=1',
      `checkpoint.dir=${join(root, name, 'checkpoints')}`,
      `log.dir=${join(root, name)}`,
      'log.progress=none',
      ...extra,
    ],
  });

function logits(model: TransformerLM, ids: number[]): number[] {
  const input = tensor(Int32Array.from(ids), { shape: [1, ids.length] });
  const { logits } = model.forward(input);
  const out = [...(logits.dataSync() as Float32Array)];
  logits.dispose();
  input.dispose();
  return out;
}

describe('chatTools: an episode is the conversation the model’s chat template writes', () => {
  const tools = [
    {
      name: 'search',
      description: 'Searches.',
      parameters: { type: 'object' as const, properties: { query: { type: 'string' as const } } },
      execute: async () => ({ content: '', success: true }),
    },
  ];

  for (const model of ['qwen2', 'qwen3']) {
    it(`${model}: prompt + actions + observations equal the template's rendering of the dialogue`, async () => {
      const tokenizer = await HfTokenizer.load(join(FIXTURES, model));
      const chat = chatTools(tokenizer, model);
      const calls = [
        { name: 'search', args: { query: 'Bhutan capital' } },
        { name: 'search', args: { query: 'Thimphu <population>' } },
      ];
      const responses = ['Doc 1 (Bhutan): Its capital is Thimphu.', 'Doc 1 (Thimphu): about 100,000 people.'];
      let episode = chat.prompt(MULTIHOP_CHAT_INSTRUCTION, 'What is the capital of Bhutan?', tools);
      const dialogue: ChatMessage[] = [
        { role: 'system', content: MULTIHOP_CHAT_INSTRUCTION },
        { role: 'user', content: 'What is the capital of Bhutan?' },
      ];
      calls.forEach((call, i) => {
        const action = chat.format.renderCall(call);
        episode += action + chat.format.renderObservation([responses[i]]);
        dialogue.push({ role: 'assistant', content: action }, { role: 'tool', content: responses[i] });
      });
      const declared = tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      expect(episode).toBe(
        tokenizer.applyChatTemplate(dialogue, { tools: declared, addGenerationPrompt: true }),
      );
      // Calls are written as the templates write an assistant's tool_calls (json.dumps's spacing), and parse back.
      expect(chat.format.renderCall(calls[0])).toBe(
        '<tool_call>\n{"name": "search", "arguments": {"query": "Bhutan capital"}}\n</tool_call>',
      );
      expect(chat.format.parse(chat.format.renderCall(calls[1])).calls).toEqual([calls[1]]);
      expect(chat.stopTokens).toContain(tokenizer.tokenId('<|im_end|>'));
    });
  }

  it('refuses a template that does not write tool responses as <tool_response> blocks, naming the model', async () => {
    const llama = await HfTokenizer.load(join(FIXTURES, 'llama'));
    expect(() => chatTools(llama, 'fixtures/llama')).toThrow(
      /^fixtures\/llama: its chat template renders a tool message as .*Qwen2\.5, Qwen3\)$/,
    );
  });
});

describe('model.from: training a pretrained Hugging Face model', () => {
  it('the multi-hop task takes the model’s tokenizer, template and tool-call format; demonstrations follow them', async () => {
    const from = join(FIXTURES, 'qwen2');
    const task = (await createTask(config('task', from, ['rollout.maxTurns=4']))) as AgentTask<QaExample>;
    const reference = await HfTokenizer.load(from);
    expect(task.tokenizer).toBeInstanceOf(HfTokenizer);
    expect(task.vocabSize).toBe(320);
    expect(task.stopTokens).toEqual([reference.tokenId('<|im_end|>')]);
    const example = task.train.find((q) => q.hops === 2)!;
    const episode = await runTextEpisode(task.makeEnv(), example, task.scripted!(example, 0));
    expect(episode.info).toMatchObject({ reason: 'answer', em: 1, toolCallCount: 2 });
    expect(episode.context).toMatch(/^<\|im_start\|>system\nAnswer the question\./);
    expect(episode.context).toContain(
      '<|im_start|>assistant\n<tool_call>\n{"name": "search", "arguments": {"query": ',
    );
    expect(episode.context).toContain('</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nDoc 1 (');
    expect(episode.context).toMatch(/<\|im_start\|>assistant\n<answer>[^<]+<\/answer>$/);
  });

  it('with taskOptions.compareTool the template declares both tools and an area comparison calls compare in its format', async () => {
    const from = join(FIXTURES, 'qwen2');
    const overrides = ['rollout.maxTurns=4', 'taskOptions.compareTool=true'];
    const task = (await createTask(config('compare', from, overrides))) as AgentTask<QaExample>;
    const example = task.train.find((q) => q.kind === 'compare_area')!;
    const episode = await runTextEpisode(task.makeEnv(), example, task.scripted!(example, 0));
    expect(episode.info).toMatchObject({ reason: 'answer', em: 1, toolCallCount: 3 });
    expect(episode.toolCalls.map((c) => c.name)).toEqual(['search', 'search', 'compare']);
    expect(episode.prompt).toContain('"name": "compare"');
    expect(episode.context).toContain('<tool_call>\n{"name": "compare", "arguments": {"values": ');
    expect(episode.context).toContain('<tool_response>\nLargest: ');
  });

  it('starts from the folder’s weights, trains, writes the policy back as a Hugging Face folder, and reloads from the checkpoint alone', async () => {
    const before = memory().tensors;
    // A copy of the model, removed before the agent is loaded again: the checkpoint must not need it.
    const from = join(root, 'qwen2-copy');
    cpSync(join(FIXTURES, 'qwen2'), from, { recursive: true });
    const prompt = [5, 17, 42, 99, 120, 7];
    const untrained = config('untrained', from, ['sft.steps=0', 'train.steps=0']);
    const start = await trainAgent(untrained, await createTask(untrained));
    // Compared after the run set up its kernels (WebAssembly), so both sides compute alike.
    const original = await loadHfModel(from);
    const startLogits = logits(original.model, prompt);
    original.model.dispose();
    expect(logits(start.policy, prompt)).toEqual(startLogits);
    start.policy.dispose();

    const c = config('trained', from);
    const lines: string[] = [];
    const result = await trainAgent(c, await createTask(c), { log: (l) => lines.push(l) });
    expect(lines.some((l) => l.startsWith(`loaded ${from}: qwen2, `))).toBe(true);
    expect(result.metrics).toHaveLength(1);
    expect(Number.isFinite(result.metrics[0].policyLoss)).toBe(true);
    const trainedLogits = logits(result.policy, prompt);
    expect(trainedLogits).not.toEqual(startLogits);

    const exported = join(c.checkpoint.dir, HF_EXPORT_DIR);
    const back = await loadHfModel(exported);
    expect(back.architecture).toBe('qwen2');
    expect(logits(back.model, prompt)).toEqual(trainedLogits);
    back.model.dispose();
    const policyDir = join(c.checkpoint.dir, 'policy');
    for (const file of ['tokenizer.json', 'tokenizer_config.json'])
      expect(existsSync(join(policyDir, file))).toBe(true);

    rmSync(from, { recursive: true });
    const agent = await loadAgent<QaExample>(c.checkpoint.dir);
    expect(logits(agent.policy, prompt)).toEqual(trainedLogits);
    const answer = await agent.ask('In which country is the city Apeldoorn located?');
    const { tokens, promptLength } = answer.trajectory;
    expect(agent.task.codec.decode(tokens.slice(0, promptLength))).toContain(
      '<|im_start|>user\nIn which country is the city Apeldoorn located?<|im_end|>\n<|im_start|>assistant\n',
    );
    agent.dispose();
    result.policy.dispose();
    expect(memory().tensors).toBe(before);
    // `agent-r1 eval` on the folder alone builds the task from the checkpoint's tokenizer too.
    const stdout = new Capture();
    const stderr = new Capture();
    const out = join(root, 'trained-eval');
    const code = await runCli(
      ['eval', '--policy', `GRPO=${policyDir}`, '--out', out, 'eval.testExamples=2', 'log.progress=none'],
      loadHandlers,
      { stdout, stderr },
    );
    expect(stderr.text).toBe('');
    expect(code).toBe(0);
    expect(existsSync(join(out, 'results.json'))).toBe(true);
  }, 120_000);

  it('PPO with a separate critic: both start from the folder, the critic with a fresh value head', async () => {
    const c = config('ppo', join(FIXTURES, 'qwen3'), ['algorithm.name=ppo', 'critic.shareTrunk=false']);
    const lines: string[] = [];
    const result = await trainAgent(c, await createTask(c), { log: (l) => lines.push(l) });
    expect(lines.some((l) => /^loaded .*qwen3: qwen3, /.test(l))).toBe(true);
    expect(Number.isFinite(result.metrics[0].valueLoss)).toBe(true);
    expect(existsSync(join(c.checkpoint.dir, HF_EXPORT_DIR, 'model.safetensors'))).toBe(true);
    result.policy.dispose();
  }, 120_000);

  it('a task of one’s own takes the model too: the calculator example speaks its template and trains', async () => {
    registerTask(calculatorTask);
    const c = config('calculator', join(FIXTURES, 'qwen2'), ['task=calculator', 'rollout.maxTurns=2']);
    const task = (await createTask(c)) as AgentTask<Question>;
    const question = task.train[0];
    const episode = await runTextEpisode(task.makeEnv(), question, task.scripted!(question, 0));
    expect(episode.info).toMatchObject({ em: 1, toolCallCount: 1 });
    expect(episode.context).toContain(
      `<tool_call>\n{"name": "calculator", "arguments": {"expression": "${question.a}${question.op}${question.b}"}}\n</tool_call><|im_end|>`,
    );
    expect(episode.context).toContain(`<tool_response>\n${question.answer}\n</tool_response>`);
    const result = await trainAgent(c, task);
    expect(result.metrics).toHaveLength(1);
    result.policy.dispose();
  }, 120_000);

  it("model.chatVariables reach the chat template: Qwen3's enable_thinking=false opens each turn with an empty think block", async () => {
    const from = join(FIXTURES, 'qwen3');
    const promptOf = async (extra: string[]) => {
      const task = (await createTask(config('qwen3-vars', from, extra))) as AgentTask<QaExample>;
      return task.makeEnv().reset(task.train[0]);
    };
    expect(await promptOf([])).toMatch(/<\|im_start\|>assistant\n$/);
    expect(await promptOf(['model.chatVariables.enable_thinking=false'])).toMatch(
      /<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n$/,
    );
  });

  it('refuses a task that keeps its own tokenizer, and a copy head on a pretrained model', async () => {
    const from = join(FIXTURES, 'qwen2');
    await expect(createTask(config('reveal', from, ['task=reveal']))).rejects.toThrow(
      /task "reveal" cannot start from a pretrained model: it keeps its own tokenizer/,
    );
    expect(() => config('copy', from, ['model.copyHead=true'])).toThrow(
      /"model\.copyHead" cannot be added to a pretrained model \("model\.from"\)/,
    );
  });
});
