/**
 * The README's guide, run as a new user would run it: the three packages packed and installed from their
 * tarballs into a scratch project outside the workspace, examples/calculator copied there, then the
 * README's own commands: train through the library (the agent must learn to use its calculator), load the
 * trained agent back and ask it, evaluate and chat through the installed `agent-r1` bin with
 * `--task-module`, and a short `agent-r1 train` of the task. The README's code blocks are checked against
 * the example's files, so neither can change without the other.
 */
import { execSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const packagesDir = fileURLToPath(new URL('../../', import.meta.url));
const agentDir = join(packagesDir, 'agent-r1');
const exampleDir = join(agentDir, 'examples', 'calculator');
const readme = readFileSync(join(agentDir, 'README.md'), 'utf8');
const PACKAGES = ['tensor', 'nn', 'agent-r1'];
const scratch = mkdtempSync(join(tmpdir(), 'agent-r1-calculator-'));

/** The workspace's own compiler, for the API map's check. */
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const TSC_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  skipLibCheck: true,
  noEmit: true,
};

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The README's commands, run as written (some with arguments added at the end). */
const TRAIN = 'npx tsx train.ts';
const ASK = 'npx tsx ask.ts runs/calculator/checkpoints "What is 37 + 48?"';
const EVAL =
  'npx agent-r1 eval --task-module ./calculator-task.ts --policy "warm start=runs/calculator/checkpoints/warm-start" --policy GRPO=runs/calculator/checkpoints/policy';
const CHAT = 'npx agent-r1 chat --task-module ./calculator-task.ts --checkpoint runs/calculator/checkpoints';
const CLI_TRAIN = 'npx agent-r1 train --task-module ./calculator-task.ts --config calculator.yaml';

interface Ran {
  code: number;
  out: string;
}

/** Runs a command line in the scratch project; its exit code and its stdout and stderr together. */
function sh(command: string, input = ''): Ran {
  // Nothing of the test runner's Node options (loaders, conditions) reaches the user's commands.
  const { NODE_OPTIONS: _, ...env } = process.env;
  try {
    const out = execSync(`${command} 2>&1`, { cwd: scratch, encoding: 'utf8', input, env, shell: '/bin/sh' });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status?: number; stdout?: string };
    return { code: err.status ?? -1, out: err.stdout ?? String(e) };
  }
}

function expectOk(ran: Ran, command: string): string {
  expect(ran.code, `${command}\n${ran.out}`).toBe(0);
  return ran.out;
}

/** The newest modification time under `dir` (files only), in ms. */
function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return t;
}

/**
 * The README's fenced blocks marked `<!-- from examples/calculator/<file> -->` on the line before: each
 * must be a part of that file, verbatim, where a line `// …` (or `# …`) stands for lines left out.
 */
function markedBlocks(): { file: string; lang: string; body: string }[] {
  const blocks: { file: string; lang: string; body: string }[] = [];
  // A block inside a list item is indented; its lines lose that indent.
  for (const m of readme.matchAll(/^( *)<!-- from (\S+) -->\n\1```(\w*)\n([\s\S]*?)\n\1```$/gm)) {
    const indent = new RegExp(`^${m[1]}`, 'gm');
    blocks.push({ file: m[2], lang: m[3], body: m[4].replace(indent, '') });
  }
  return blocks;
}

/** The names the README's API map puts in backticks. */
function apiNames(): string[] {
  const start = readme.indexOf('## The package at a glance');
  const table = readme.slice(start).split('\n\n')[2] ?? '';
  return [...new Set([...table.matchAll(/`([A-Za-z]\w*)`/g)].map((m) => m[1]))];
}

describe('the calculator example, installed from the packed packages', () => {
  beforeAll(() => {
    for (const name of PACKAGES) {
      const dir = join(packagesDir, name);
      if (!existsSync(join(dir, 'dist', 'index.js')))
        throw new Error(`${name}/dist is missing: run npm run build first`);
      if (newest(join(dir, 'src')) > statSync(join(dir, 'dist', 'index.js')).mtimeMs)
        throw new Error(`${name}/dist is older than ${name}/src: run npm run build first`);
      execSync('npm pack --silent --pack-destination "$DEST"', {
        cwd: dir,
        env: { ...process.env, DEST: scratch },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    }
    cpSync(exampleDir, scratch, {
      recursive: true,
      filter: (src) => !/(^|\/)(runs|node_modules)(\/|$)/.test(relative(exampleDir, src)),
    });
    const tarballs = readdirSync(scratch).filter((f) => f.endsWith('.tgz'));
    expect(tarballs).toHaveLength(3);
    // The example's package.json brings tsx; the tarballs stand in for the registry's packages.
    const install = `npm install --prefer-offline --no-audit --no-fund ${tarballs.map((t) => `./${t}`).join(' ')}`;
    expectOk(sh(install), install);
  }, 180_000);

  it("the README's code is the example's code, and its API map names the package's exports", () => {
    const blocks = markedBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    for (const { file, lang, body } of blocks) {
      const source = readFileSync(join(agentDir, file), 'utf8');
      const elision = lang === 'yaml' ? '# …' : '// …';
      let from = 0;
      for (const part of body.split(new RegExp(`^\\s*${elision}\\s*$`, 'm'))) {
        const text = part.replace(/^\n+|\n+$/g, '');
        if (text === '') continue;
        const at = source.indexOf(text, from);
        expect(
          at,
          `README block from ${file}: not found in order in the file:\n${text}`,
        ).toBeGreaterThanOrEqual(0);
        from = at + text.length;
      }
    }
    // Every TypeScript block of the README is one of the example's.
    const tsBlocks = [...readme.matchAll(/```ts\n/g)].length;
    expect(blocks.filter((b) => b.lang === 'ts')).toHaveLength(tsBlocks);
    for (const command of [TRAIN, ASK, EVAL, CHAT, CLI_TRAIN]) expect(readme).toContain(command);

    // A name the installed package does not export fails to compile (values and types alike).
    const names = apiNames();
    expect(names.length).toBeGreaterThan(40);
    writeFileSync(
      join(scratch, 'api-check.ts'),
      `import { ${names.map((n) => `type ${n}`).join(', ')} } from '@agent-r1/agent';\n`,
    );
    const tsconfig = { compilerOptions: { ...TSC_OPTIONS }, files: ['api-check.ts'] };
    writeFileSync(join(scratch, 'tsconfig.api.json'), JSON.stringify(tsconfig));
    const ran = sh(`"${process.execPath}" "${tsc}" -p tsconfig.api.json`);
    expect(ran.out).toBe('');
  }, 60_000);

  it('trains through the library: GRPO lifts greedy validation EM and tool use well above the warm start', () => {
    const out = expectOk(sh(TRAIN), TRAIN);
    const records = readFileSync(join(scratch, 'runs/calculator/metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, number>);
    const validation = records.filter((r) => r.valEm !== undefined);
    const steps = records.filter((r) => r.step > 0);
    const mean = (rs: Record<string, number>[], key: string) =>
      rs.reduce((s, r) => s + r[key], 0) / rs.length;
    const tools = (label: string) => Number(new RegExp(`^${label}: .*tools ([\\d.]+)$`, 'm').exec(out)?.[1]);
    const figures = {
      warmStartEm: validation[0].valEm,
      trainedEm: validation.at(-1)!.valEm,
      warmStartTools: tools('warm start'),
      trainedTools: tools('after GRPO'),
      sampledToolsFirst8: mean(steps.slice(0, 8), 'toolCalls'),
      sampledToolsLast8: mean(steps.slice(-8), 'toolCalls'),
    };
    console.log('calculator example:', JSON.stringify(figures));
    expect(validation[0].step).toBe(0);
    expect(steps).toHaveLength(40);
    expect(figures.trainedEm).toBeGreaterThan(figures.warmStartEm + 0.5);
    expect(figures.trainedTools).toBeGreaterThan(0.8);
    expect(figures.trainedTools).toBeGreaterThan(figures.warmStartTools + 0.5);
    expect(figures.sampledToolsLast8).toBeGreaterThan(figures.sampledToolsFirst8 + 0.2);
  }, 180_000);

  it('loads the trained agent back from its folder and answers with the calculator', () => {
    const questions = ['What is 12 + 30?', 'What is 64 + 29?', 'What is 55 + 71?'];
    const command = `${ASK} ${questions.map((q) => `"${q}"`).join(' ')}`;
    const out = expectOk(sh(command), command);
    const answers = [...out.matchAll(/^What is (\d+) \+ (\d+)\?\n {2}(.*)\n {2}(.*)\n {2}reward (\S+)$/gm)];
    expect(answers, out).toHaveLength(4);
    for (const [, a, b, call] of answers)
      expect(call).toBe(`<calc>${a}+${b}</calc>  →  <result>${+a + +b}</result>`);
    const right = answers.filter(([, a, b, , answer]) => answer === `<answer>${+a + +b}</answer>`);
    expect(right.length, out).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('evaluates and chats through the installed agent-r1 bin with --task-module', () => {
    expectOk(sh(EVAL), EVAL);
    const rows = JSON.parse(readFileSync(join(scratch, 'runs/calculator/results.json'), 'utf8')) as {
      method: string;
      scores: { em: number };
    }[];
    const em = Object.fromEntries(rows.map((r) => [r.method, r.scores.em]));
    expect(em.GRPO).toBeGreaterThan(em['warm start'] + 0.5);

    const chat = expectOk(sh(CHAT, 'What is 37 + 48?\nWhat is 12 + 30?\n'), CHAT);
    expect(chat).toContain('task calculator');
    expect(chat).toContain('action: <calc>37+48</calc>');
    expect(chat).toContain('observation: <result>42</result>');
  }, 60_000);

  it('trains through the installed agent-r1 bin with --task-module, the task options on the command line', () => {
    const short =
      'sft.steps=20 train.steps=2 eval.examples=10 checkpoint.dir=runs/cli/checkpoints log.dir=runs/cli';
    const command = `${CLI_TRAIN} taskOptions.toolDemos=5 ${short}`;
    const out = expectOk(sh(command), command);
    expect(out).toContain('warm start: 20 steps on 256 demonstrations');
    expect(out).toMatch(/^final validation: reward \S+, em \S+, tools \S+$/m);
    const agent = JSON.parse(readFileSync(join(scratch, 'runs/cli/checkpoints/policy/agent.json'), 'utf8'));
    expect(agent.task).toBe('calculator');
    expect(agent.taskOptions).toEqual({ digits: 2, operations: '+', toolDemos: 5 });

    // A wrong option stops the run with the line the README quotes.
    const errors = [
      ['taskOptions.toolDemo=5', 'agent-r1: config: unknown key "taskOptions.toolDemo"'],
      ['taskOptions.toolDemos=11', 'agent-r1: config: "taskOptions.toolDemos" must be'],
    ];
    for (const [override, start] of errors) {
      const quoted = readme.split('\n').find((line) => line.startsWith(start));
      expect(quoted, `the README quotes the error of ${override}`).toBeDefined();
      const wrong = sh(`${CLI_TRAIN} ${override} ${short}`);
      expect(wrong.code, wrong.out).toBe(2);
      expect(wrong.out.trim()).toBe(quoted);
    }
  }, 60_000);
});
