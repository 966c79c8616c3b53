/**
 * What a resumed run reads back is checked: every field of state.json and of the checkpoint's metadata,
 * with errors that name the file and the field, and a failed load leaves no tensor alive.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPTIMIZER_FILE, parseSafetensors, serializeSafetensors } from '@agent-r1/nn';
import { memory } from '@agent-r1/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask } from '../src/tasks/index.js';
import { type TrainConfig, resolveConfig } from '../src/trainer/config.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { tinyRun } from './support/tiny-model.js';

const root = mkdtempSync(join(tmpdir(), 'agent-r1-resume-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = (dir: string, extra: string[] = []): TrainConfig =>
  resolveConfig({
    overrides: [...tinyRun(dir), 'train.steps=2', 'checkpoint.resume=true', ...extra],
  });

const train = async (c: TrainConfig) => (await trainAgent(c, await createTask(c))).policy.dispose();

describe('a resumed run checks what it reads back', () => {
  const done = join(root, 'done');
  const policy = join(done, 'checkpoints', 'policy');
  const stateFile = join(policy, 'state.json');
  let original = '';
  beforeAll(async () => {
    await train(config(done));
    original = readFileSync(stateFile, 'utf8');
  }, 60_000);

  /** Resumes the finished run with state.json edited by `edit`, and returns the error's message. */
  // biome-ignore lint/suspicious/noExplicitAny: the state file is edited into every wrong shape
  const resumeWith = async (edit: (state: Record<string, any>) => void) => {
    const state = JSON.parse(original);
    edit(state);
    writeFileSync(stateFile, JSON.stringify(state));
    try {
      await train(config(done));
    } catch (e) {
      return (e as Error).message;
    } finally {
      writeFileSync(stateFile, original);
    }
    throw new Error('resumed without an error');
  };

  it('the trainer state: its step and warm-start flag, typed and in range', async () => {
    expect(await resumeWith((s) => (s.state.step = 'abc'))).toBe(
      `resume: ${stateFile}: "state.step" must be a whole number >= 0, got "abc"`,
    );
    expect(await resumeWith((s) => (s.state.step = 1_000_000))).toBe(
      `resume: ${stateFile}: "state.step" is 1000000, past train.steps (2): raise train.steps to continue the run`,
    );
    expect(await resumeWith((s) => (s.state = null))).toBe(`resume: ${stateFile}: "state" must be an object`);
    expect(await resumeWith((s) => delete s.state.warmStarted)).toBe(
      `resume: ${stateFile}: "state.warmStarted" must be true or false`,
    );
  });

  it("the generators' positions and the checkpoint file's own fields", async () => {
    expect(await resumeWith((s) => (s.generators.rollout.counter = 'x'))).toBe(
      `loadCheckpoint: ${stateFile}: "generators.rollout.counter" must be a whole number >= 0`,
    );
    expect(await resumeWith((s) => (s.generators.data.counter = -1))).toBe(
      `loadCheckpoint: ${stateFile}: "generators.data.counter" must be a whole number >= 0`,
    );
    expect(await resumeWith((s) => (s.generators.rename.key = [1]))).toBe(
      `loadCheckpoint: ${stateFile}: "generators.rename.key" must be two 32-bit whole numbers`,
    );
    expect(await resumeWith((s) => (s.step = -2))).toBe(
      `loadCheckpoint: ${stateFile}: "step" must be null or a whole number >= 0`,
    );
  });

  it('a run started over from step 0 keeps one row of step 0 in metrics.jsonl', async () => {
    const dir = join(root, 'again');
    const c = config(dir, ['eval.every=1', 'eval.examples=4', 'checkpoint.every=0']);
    await train(c);
    // As if killed before its first RL checkpoint: the log has rows, the policy folder is not there.
    rmSync(join(dir, 'checkpoints', 'policy'), { recursive: true });
    await train(c);
    const steps = readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).step);
    expect(steps).toEqual([0, 1, 2]);
  }, 60_000);

  it('a policy folder without state.json stops the run instead of starting it over', async () => {
    const dir = join(root, 'no-state');
    mkdirSync(join(dir, 'checkpoints', 'policy'), { recursive: true });
    writeFileSync(join(dir, 'checkpoints', 'policy', 'model.safetensors'), '');
    await expect(train(config(dir))).rejects.toThrow(
      `resume: ${join(dir, 'checkpoints', 'policy')} holds no state.json, so it is no checkpoint of a run`,
    );
  });

  it('bad optimizer metadata names the file, and the failed load leaves no tensor alive', async () => {
    const file = join(policy, OPTIMIZER_FILE);
    const bytes = readFileSync(file);
    const parsed = parseSafetensors(bytes);
    const metadata = { ...parsed.metadata, optimizer: parsed.metadata.optimizer.slice(0, 40) };
    writeFileSync(file, serializeSafetensors(parsed.tensors, metadata));
    for (const t of Object.values(parsed.tensors)) t.dispose();
    const before = memory().tensors;
    try {
      await expect(train(config(done))).rejects.toThrow(
        `loadCheckpoint: ${file}: its 'optimizer' metadata is not valid JSON`,
      );
      expect(memory().tensors).toBe(before);
    } finally {
      writeFileSync(file, bytes);
    }
  });
});
