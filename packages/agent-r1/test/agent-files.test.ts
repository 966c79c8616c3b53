import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODEL_FILE } from '@agent-r1/nn';
import { memory, wasmKernelsEnabled } from '@agent-r1/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { loadHandlers } from '../src/cli/handlers.js';
import { createTask } from '../src/tasks/index.js';
import { AGENT_FILE, TOKENIZER_FILE, readAgentDescription } from '../src/checkpoints/agent-files.js';
import { type TrainConfig, resolveConfig } from '../src/trainer/config.js';
import { evaluate } from '../src/evaluation/evaluate.js';
import { loadAgent } from '../src/checkpoints/load-agent.js';
import { type AgentFileContents, agentFromFiles } from '../src/checkpoints/agent-from-files.js';
import { loadPolicyFrom } from '../src/evaluation/report.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { Capture } from './support/capture.js';
import { TINY_MODEL } from './support/tiny-model.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-agent-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const tiny = (name: string, task: string, extra: string[] = []): TrainConfig =>
  resolveConfig({
    overrides: [
      `task=${task}`,
      'threads=1',
      ...TINY_MODEL,
      'model.maxLength=64',
      'rollout.maxTurns=3',
      'rollout.maxTokensPerTurn=8',
      'rollout.maxLength=64',
      'rollout.maxObservationTokens=16',
      'sft.steps=3',
      'sft.demonstrations=8',
      'sft.batchSize=4',
      'train.steps=1',
      'train.promptsPerStep=2',
      'train.miniBatchSize=8',
      'train.microBatchSize=4',
      'eval.every=0',
      'eval.examples=4',
      `checkpoint.dir=${join(root, name, 'checkpoints')}`,
      `log.dir=${join(root, name)}`,
      'log.progress=none',
      ...extra,
    ],
  });

describe('self-describing checkpoints', () => {
  it('a trained policy folder alone gives back the agent: its config, task, weights and greedy answers', async () => {
    const config = tiny('reveal', 'reveal', ['seed=3']);
    const task = await createTask(config);
    const trained = await trainAgent(config, task);
    const dir = join(config.checkpoint.dir, 'policy');
    for (const stage of ['policy', 'warm-start'])
      expect(existsSync(join(config.checkpoint.dir, stage, AGENT_FILE))).toBe(true);
    const description = readAgentDescription(dir)!;
    expect(description).toMatchObject({ task: 'reveal', taskOptions: {}, config: { seed: 3 } });
    expect(description.library).toMatch(/^@agent-r1\/agent \d+\.\d+\.\d+/);
    expect(description.model).toMatchObject({ dModel: 16, layers: 1, vocabSize: task.vocabSize });
    // The run's folder or its policy folder: the same agent.
    const agent = await loadAgent(config.checkpoint.dir);
    expect(agent.dir).toBe(dir);
    expect(agent.config).toEqual(config);
    const examples = task.validation.slice(0, 6);
    const tokens = async (policy: typeof trained.policy) =>
      (await evaluate(policy, task, examples, config.rollout)).trajectories.map((t) => t.tokens);
    expect(await tokens(agent.policy)).toEqual(await tokens(trained.policy));
    const answer = await agent.ask('7');
    expect(answer.turns.length).toBeGreaterThan(0);
    expect(answer.finalAction).toBe(answer.turns.at(-1)!.action);
    agent.dispose();
    trained.policy.dispose();
  }, 60_000);

  it('sets up the backend it is given, as the command line does', async () => {
    const ts = tiny('ts-kernels', 'reveal', ['cpuKernels=typescript', 'train.steps=0']);
    (await trainAgent(ts, await createTask(ts))).policy.dispose();
    expect(wasmKernelsEnabled()).toBe(false);
    const wasm = tiny('wasm-kernels', 'reveal', ['cpuKernels=wasm', 'train.steps=0']);
    const lines: string[] = [];
    (await trainAgent(wasm, await createTask(wasm), { log: (l) => lines.push(l) })).policy.dispose();
    expect(wasmKernelsEnabled()).toBe(true);
    expect(lines[0]).toBe('backend: cpu, WebAssembly SIMD kernels on 1 thread(s)');
  }, 60_000);

  it('keeps the tokenizer with the weights, and a policy with another task or tokenizer is refused in one line', async () => {
    const config = tiny('secret', 'secret-number', ['train.steps=0']);
    const task = await createTask(config);
    (await trainAgent(config, task)).policy.dispose();
    const dir = join(config.checkpoint.dir, 'warm-start');
    const saved = JSON.parse(readFileSync(join(dir, TOKENIZER_FILE), 'utf8'));
    expect(saved).toEqual(JSON.parse(JSON.stringify(task.tokenizer!.toJSON())));
    const reveal = await createTask(tiny('other', 'reveal'));
    await expect(loadPolicyFrom(dir, config, reveal)).rejects.toThrow(
      `policy ${dir}: trained on task "secret-number", not "reveal"`,
    );
    writeFileSync(join(dir, TOKENIZER_FILE), JSON.stringify({ ...saved, merges: saved.merges.slice(1) }));
    await expect(loadPolicyFrom(dir, config, task)).rejects.toThrow(
      `policy ${dir}: task "secret-number" built another tokenizer than the one it was trained with`,
    );
    writeFileSync(join(dir, AGENT_FILE), '{"format": "something else"}');
    expect(() => readAgentDescription(dir)).toThrow(
      `${join(dir, AGENT_FILE)}: not a version-1 agent-r1-agent description`,
    );
  }, 60_000);

  it('agentFromFiles: the folder read as text and bytes is the agent loadAgent gives; bad files are refused in one line', async () => {
    const config = tiny('from-files', 'secret-number', ['train.steps=0']);
    const task = await createTask(config);
    (await trainAgent(config, task)).policy.dispose();
    const dir = join(config.checkpoint.dir, 'warm-start');
    const files: AgentFileContents = {
      source: dir,
      agent: readFileSync(join(dir, AGENT_FILE), 'utf8'),
      tokenizer: readFileSync(join(dir, TOKENIZER_FILE), 'utf8'),
      model: new Uint8Array(readFileSync(join(dir, MODEL_FILE))),
    };
    const fromFiles = await agentFromFiles(files, { task: () => task });
    const fromFolder = await loadAgent(dir);
    expect(fromFiles.description).toEqual(fromFolder.description);
    expect(fromFiles.config).toEqual(fromFolder.config);
    for (const example of task.validation.slice(0, 4)) {
      const [a, b] = [await fromFiles.run(example), await fromFolder.run(example)];
      expect(a.trajectory.tokens).toEqual(b.trajectory.tokens);
      expect(a.turns).toEqual(b.turns);
    }
    fromFolder.dispose();
    fromFiles.dispose();
    // The tokenizer is compared as JSON, not as text: a file laid out otherwise is the same tokenizer.
    const laidOut = JSON.stringify(JSON.parse(files.tokenizer!), null, 2);
    (await agentFromFiles({ ...files, tokenizer: laidOut }, { task: () => task })).dispose();
    const live = memory().tensors;
    await expect(
      agentFromFiles({ ...files, model: files.model.slice(0, 100) }, { task: () => task }),
    ).rejects.toThrow(`policy ${dir}: cannot read ${MODEL_FILE}: safetensors: ${dir}/${MODEL_FILE}:`);
    await expect(agentFromFiles({ ...files, agent: '{ not json' }, { task: () => task })).rejects.toThrow(
      `${dir}/${AGENT_FILE}: not valid JSON`,
    );
    await expect(agentFromFiles({ ...files, tokenizer: '[]' }, { task: () => task })).rejects.toThrow(
      `${dir}/${TOKENIZER_FILE}`,
    );
    const reveal = await createTask(tiny('other-task', 'reveal'));
    await expect(agentFromFiles(files, { task: () => reveal })).rejects.toThrow(
      `policy ${dir}: trained on task "secret-number", not "reveal"`,
    );
    // Weights of another model: a reveal policy's, under this agent.json.
    const revealConfig = tiny('other-model', 'reveal', ['train.steps=0', 'model.dModel=8', 'model.heads=2']);
    (await trainAgent(revealConfig, reveal)).policy.dispose();
    const otherModel = new Uint8Array(
      readFileSync(join(revealConfig.checkpoint.dir, 'warm-start', MODEL_FILE)),
    );
    await expect(agentFromFiles({ ...files, model: otherModel }, { task: () => task })).rejects.toThrow(
      `policy ${dir}: the checkpoint does not fit this model's config (`,
    );
    const badConfig = JSON.stringify({ ...JSON.parse(files.agent), config: { rollout: { n: 0 } } });
    await expect(agentFromFiles({ ...files, agent: badConfig }, { task: () => task })).rejects.toThrow(
      `${dir}/${AGENT_FILE}: config: "rollout.n" must be`,
    );
    // Nothing a refused load made is left allocated.
    expect(memory().tensors).toBe(live);
  }, 60_000);

  it('eval needs only the checkpoint folder: no preset, the config comes from the folder', async () => {
    const config = tiny('eval-alone', 'reveal', ['train.steps=0']);
    (await trainAgent(config, await createTask(config))).policy.dispose();
    const [stdout, stderr] = [new Capture(), new Capture()];
    const out = join(root, 'eval-alone-out');
    const code = await runCli(
      [
        'eval',
        '--policy',
        `warm=${join(config.checkpoint.dir, 'warm-start')}`,
        '--out',
        out,
        '--split',
        'validation',
        '--episodes',
      ],
      () => loadHandlers(),
      { stdout, stderr },
    );
    expect(stderr.text).toBe('');
    expect(code).toBe(0);
    // The reveal task's validation split holds 100 examples.
    expect(stdout.text).toContain('reveal: validation split (100 examples)');
    expect(stdout.text).toMatch(/\| warm \| [01]\.\d{3} \|/);
    // --episodes works for any task: one line per example, its turns as text and its scores.
    const episodes = readFileSync(join(out, 'episodes', 'warm.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(episodes).toHaveLength(100);
    const first = JSON.parse(episodes[0]);
    expect(first.index).toBe(0);
    expect(first.turns[0].action.length).toBeGreaterThan(0);
    expect(Object.keys(first.scores)).toEqual(['em']);
    // Two methods that would share an episode file are refused before anything is evaluated.
    const warm = join(config.checkpoint.dir, 'warm-start');
    const clash = new Capture();
    const refused = await runCli(
      ['eval', '--policy', `Warm=${warm}`, '--policy', `warm!=${warm}`, '--out', out, '--episodes'],
      () => loadHandlers(),
      { stdout: new Capture(), stderr: clash },
    );
    expect(refused).not.toBe(0);
    expect(clash.text).toContain('the methods "Warm" and "warm!" would share the file warm.jsonl');
  }, 60_000);
});
