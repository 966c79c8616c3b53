/**
 * `agent-r1 chat` over a tiny reveal policy saved into a temp folder: the real executable with piped input
 * answers every line and exits 0 at the end of the input; the loop itself quits on `exit`, reports a line its
 * task cannot use and goes on; reveal's question is the digit its tool hides.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { saveCheckpoint } from '@agent-r1/nn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revealTask } from '../src/tasks/reveal/index.js';
import { createTask } from '../src/tasks/index.js';
import { prepareBackend } from '../src/trainer/backend-setup.js';
import { chat } from '../src/cli/chat.js';
import { resolveConfig } from '../src/trainer/config.js';
import { trainAgent } from '../src/trainer/trainer.js';
import { buildPolicy } from '../src/trainer/models.js';
import { loadPolicyFrom } from '../src/evaluation/report.js';
import { Capture } from './support/capture.js';
import { TINY_MODEL } from './support/tiny-model.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-r1-chat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OVERRIDES = [
  'task=reveal',
  ...TINY_MODEL,
  'rollout.maxTurns=3',
  'rollout.maxTokensPerTurn=4',
  'rollout.maxLength=16',
  'rollout.maxObservationTokens=4',
];
const config = resolveConfig({ overrides: [...OVERRIDES, 'backend=cpu', `checkpoint.dir=${dir}`] });
const policyDir = join(dir, 'policy');

beforeAll(async () => {
  await prepareBackend(config);
  const task = await createTask(config);
  const policy = buildPolicy(config, task.vocabSize);
  await saveCheckpoint(policyDir, { model: policy });
  policy.dispose();
});

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** The CLI as a user runs it, with `input` piped to its stdin (closed after it: end of input). */
function agentR1(args: string[], input: string) {
  const r = spawnSync(process.execPath, ['--import', TSX, '--conditions=@agent-r1/source', MAIN, ...args], {
    input,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const answers = (out: string) => out.match(/^reward -?\d/gm)?.length ?? 0;

describe('agent-r1 chat', () => {
  it('answers every piped line, says what it loaded and how to quit, and exits 0 at the end of input', () => {
    const r = agentR1(['chat', '--checkpoint', dir, '--backend', 'cpu', ...OVERRIDES], '3\n7\n');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`policy ${policyDir}, task reveal`);
    expect(r.out).toMatch(/empty line, "exit" or Ctrl-D/);
    expect(r.out).toContain('question> 3\n');
    expect(r.out).toContain('question> 7\n');
    expect(answers(r.out)).toBe(2);
  }, 120_000);

  it('needs only a self-describing checkpoint folder: no preset, no overrides', async () => {
    const run = join(dir, 'trained');
    const c = resolveConfig({
      overrides: [
        ...OVERRIDES,
        'threads=1',
        'sft.steps=2',
        'train.steps=0',
        `checkpoint.dir=${run}`,
        `log.dir=${run}`,
        'log.progress=none',
      ],
    });
    (await trainAgent(c, await createTask(c))).policy.dispose();
    const folder = join(run, 'warm-start');
    const r = agentR1(['chat', '--checkpoint', folder], '3\n');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`policy ${folder}, task reveal`);
    expect(answers(r.out)).toBe(1);
  }, 120_000);

  it('stops at "exit" and goes on after a line the task cannot use', async () => {
    const task = await createTask(config);
    const policy = await loadPolicyFrom(policyDir, config, task);
    const input = new PassThrough();
    const output = new Capture();
    input.end('no digit here\n4\n 5 \nexit\n6\n');
    try {
      const answered = await chat(
        { task, policy, limits: config.rollout, checkpoint: policyDir },
        { input, output },
      );
      expect(answered).toBe(2);
    } finally {
      policy.dispose();
    }
    expect(output.text).toContain('reveal: type the one digit');
    expect(answers(output.text)).toBe(2);
    expect(output.text).not.toContain('question> 6');
  });
});

describe('reveal in chat', () => {
  it('hides the digit the user typed', async () => {
    const task = revealTask({ seed: 0 });
    for (const digit of [0, 3, 9]) {
      const example = task.fromQuestion?.(String(digit));
      expect(example).toEqual({ secret: digit });
      const env = task.makeEnv();
      env.reset(example as { secret: number });
      expect((await env.step('<reveal>', task.codec.encode('<reveal>'))).observation).toBe(
        `<result>${digit}</result>`,
      );
    }
    expect(() => task.fromQuestion?.('what is it?')).toThrow(/one digit/);
    expect(() => task.fromQuestion?.('12')).toThrow(/one digit/);
  });
});
