import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  type CommandContext,
  type CommandHandlers,
  HANDLERS_NOT_BUILT,
  loadHandlers,
  type ServeSearchContext,
} from '../src/cli/handlers.js';
import { runCli } from '../src/cli/run.js';
import { DEFAULT_CONFIG } from '../src/trainer/config.js';
import { Capture } from './support/capture.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-r1-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakes(result?: number) {
  const calls: { name: string; ctx: CommandContext }[] = [];
  const record = (name: string) => (ctx: CommandContext) => {
    calls.push({ name, ctx });
    return result;
  };
  const handlers: CommandHandlers = {
    train: record('train'),
    eval: record('eval'),
    chat: record('chat'),
    serveSearch: record('serveSearch') as (ctx: ServeSearchContext) => number | undefined,
    seeds: record('seeds'),
  };
  return { handlers, calls };
}

async function cli(argv: string[], handlers: Parameters<typeof runCli>[1] = fakes().handlers) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runCli(argv, handlers, { stdout, stderr });
  return { code, out: stdout.text, err: stderr.text };
}

describe('runCli dispatch', () => {
  it('dispatches each subcommand to its handler with the resolved config', async () => {
    for (const [cmd, handler] of [
      ['train', 'train'],
      ['eval', 'eval'],
      ['chat', 'chat'],
      ['serve-search', 'serveSearch'],
      ['seeds', 'seeds'],
    ]) {
      const { handlers, calls } = fakes();
      const r = await cli([cmd], handlers);
      expect(r).toEqual({ code: 0, out: '', err: '' });
      expect(calls.map((c) => c.name)).toEqual([handler]);
      expect(calls[0].ctx.command).toBe(cmd);
      expect(calls[0].ctx.config).toEqual(DEFAULT_CONFIG);
    }
  });

  it('applies --preset, --config, --backend, --checkpoint and trailing overrides, in that order', async () => {
    const file = join(dir, 'run.yaml');
    writeFileSync(file, 'train:\n  steps: 9\n  lr: 0.01\nbackend: file-backend\n');
    const { handlers, calls } = fakes();
    const r = await cli(
      [
        'train',
        '--preset',
        'smoke',
        '--config',
        file,
        'algorithm.name=ppo',
        '--backend',
        'webgpu',
        'train.lr=3e-4',
        '--checkpoint',
        'ckpt/here',
        'rollout.n=4',
      ],
      handlers,
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const { config, options } = calls[0].ctx;
    expect(options).toEqual({
      config: file,
      preset: 'smoke',
      backend: 'webgpu',
      checkpoint: 'ckpt/here',
      overrides: ['algorithm.name=ppo', 'train.lr=3e-4', 'rollout.n=4'],
    });
    expect(config.algorithm.name).toBe('ppo');
    expect(config.train.lr).toBe(3e-4);
    expect(config.train.steps).toBe(9);
    expect(config.rollout.n).toBe(4);
    expect(config.backend).toBe('webgpu');
    expect(config.checkpoint.dir).toBe('ckpt/here');
    expect(config.model.dModel).toBe(32); // smoke
    // An explicit override beats --backend.
    const again = fakes();
    await cli(['eval', '-b', 'webgpu', 'backend=cpu', '-p', 'smoke'], again.handlers);
    expect(again.calls[0].ctx.config.backend).toBe('cpu');
  });

  it('passes --port and --host to serve-search', async () => {
    const { handlers, calls } = fakes();
    expect((await cli(['serve-search', '--port', '9000', '--host', '0.0.0.0'], handlers)).code).toBe(0);
    const ctx = calls[0].ctx as ServeSearchContext;
    expect([ctx.port, ctx.host]).toEqual([9000, '0.0.0.0']);
    const bad = await cli(['serve-search', '--port', 'http'], handlers);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("option '--port <number>' argument 'http' is invalid");
  });

  it('passes --corpus to serve-search as its own option, not into the config', async () => {
    const { handlers, calls } = fakes();
    expect(await cli(['serve-search', '--corpus', 'c.jsonl'], handlers)).toEqual({
      code: 0,
      out: '',
      err: '',
    });
    const ctx = calls[0].ctx as ServeSearchContext;
    expect(ctx.corpus).toBe('c.jsonl');
    expect(ctx.config).toEqual(DEFAULT_CONFIG);
    await cli(['serve-search'], handlers);
    expect((calls[1].ctx as ServeSearchContext).corpus).toBeUndefined();
  });

  it("returns a handler's exit code, and 1 with the message when it throws", async () => {
    expect((await cli(['train'], fakes(3).handlers)).code).toBe(3);
    const throwing: CommandHandlers = {
      ...fakes().handlers,
      eval: async () => {
        throw new Error('checkpoint not found');
      },
    };
    const r = await cli(['eval'], throwing);
    expect(r.code).toBe(1);
    expect(r.err).toBe('agent-r1: checkpoint not found\n');
  });

  it('loads lazy handlers only when a command runs', async () => {
    let loads = 0;
    const { handlers, calls } = fakes();
    const lazy = async () => {
      loads++;
      return handlers;
    };
    await cli(['--help'], lazy);
    await cli(['train', 'rollout.n=0'], lazy);
    expect(loads).toBe(0);
    await cli(['chat'], lazy);
    expect(loads).toBe(1);
    expect(calls).toHaveLength(1);
  });

  it('prints the resolved config with --print-config, without running the command', async () => {
    const { handlers, calls } = fakes();
    const r = await cli(['train', '--preset', 'smoke', '--print-config', 'train.steps=3'], handlers);
    expect(r.code).toBe(0);
    expect(calls).toHaveLength(0);
    const printed = parseYaml(r.out);
    expect(printed.train.steps).toBe(3);
    expect(printed.model.dModel).toBe(32);
  });
});

describe('runCli errors and help', () => {
  it('rejects an unknown command with a suggestion', async () => {
    const { handlers, calls } = fakes();
    const r = await cli(['trian'], handlers);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error: unknown command 'trian'");
    expect(r.err).toContain('train');
    expect(calls).toHaveLength(0);
  });

  it('rejects an unknown option and a missing option value', async () => {
    const r = await cli(['train', '--lr', '3']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error: unknown option '--lr'");
    const m = await cli(['train', '--config']);
    expect(m.code).toBe(2);
    expect(m.err).toContain("option '-c, --config <file>' argument missing");
  });

  it('reports config errors with the key path and exit code 2', async () => {
    const { handlers, calls } = fakes();
    const cases: [string[], string][] = [
      [['train', 'train.lrr=1'], 'agent-r1: config: unknown key "train.lrr" (did you mean "train.lr"?)\n'],
      [['train', 'rollout.n=0'], 'agent-r1: config: "rollout.n" must be an integer >= 1, got 0\n'],
      [
        ['train', 'notanoverride'],
        'agent-r1: config: override "notanoverride" must look like key.sub=value\n',
      ],
      [
        ['eval', '--preset', 'big'],
        'agent-r1: config: unknown preset "big"; known: default, reveal, multihop, smoke\n',
      ],
    ];
    for (const [argv, err] of cases) expect(await cli(argv, handlers)).toEqual({ code: 2, out: '', err });
    const missing = join(dir, 'missing.yaml');
    const r = await cli(['train', '--config', missing], handlers);
    expect(r.err).toContain(`agent-r1: config: cannot read "${missing}"`);
    expect(calls).toHaveLength(0);
  });

  it('prints help for the program and for each command', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    expect(top.err).toBe('');
    for (const word of ['Usage: agent-r1', 'train', 'eval', 'chat', 'serve-search', 'key.sub=value'])
      expect(top.out).toContain(word);
    const sub = await cli(['train', '--help']);
    expect(sub.code).toBe(0);
    for (const word of [
      '--config <file>',
      '--preset <name>',
      '--backend <name>',
      '--checkpoint <dir>',
      'smoke',
    ])
      expect(sub.out).toContain(word);
    const serve = await cli(['help', 'serve-search']);
    expect(serve.out).toContain('--port <number>');
    const version = await cli(['--version']);
    expect(version.out).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('shows usage on stderr with no command', async () => {
    const r = await cli([]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('Usage: agent-r1');
  });
});

describe('loadHandlers', () => {
  it("says the handlers are not built when the module doesn't exist", async () => {
    await expect(loadHandlers('../trainer/no-such-commands.js')).rejects.toThrow(HANDLERS_NOT_BUILT);
    expect(HANDLERS_NOT_BUILT).toBe('agent-r1: command handlers are not built yet');
    const r = await cli(['train'], () => loadHandlers('../trainer/no-such-commands.js'));
    expect(r).toEqual({ code: 1, out: '', err: `${HANDLERS_NOT_BUILT}\n` });
  });

  it('loads handlers from a module exporting them', async () => {
    const mod = join(dir, 'commands.mjs');
    writeFileSync(
      mod,
      'const ok = () => 7;\nexport const handlers = { train: ok, eval: ok, chat: ok, serveSearch: ok };\n',
    );
    const h = await loadHandlers(mod);
    expect(await h.train({} as CommandContext)).toBe(7);
    const wrong = join(dir, 'wrong.mjs');
    writeFileSync(wrong, 'export const handlers = { train() {} };\n');
    await expect(loadHandlers(wrong)).rejects.toThrow('must export "handlers"');
  });
});

describe('compare-traces', () => {
  const call = (seq: number, kernel: string, out: string, input = 'aaaaaaaa:4') =>
    `${seq} ${kernel} 0:2x2:${input}>${input} 1:2x2:00000000:4>${out}\n`;
  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('says the traces agree (exit 0), or where they part and why (exit 1)', async () => {
    const a = write('a.trace', call(0, 'matmul', '11111111:4') + call(1, 'unary/exp', '22222222:4'));
    const same = write('same.trace', call(0, 'matmul', '11111111:4') + call(1, 'unary/exp', '22222222:4'));
    expect(await cli(['compare-traces', a, same])).toMatchObject({
      code: 0,
      out: 'the traces agree over 2 calls\n',
    });
    // Same inputs, another result: the call itself is the culprit.
    const other = write('other.trace', call(0, 'matmul', '11111111:4') + call(1, 'unary/exp', '33333333:4'));
    const parted = await cli(['compare-traces', a, other]);
    expect(parted.code).toBe(1);
    expect(parted.out).toContain(
      'the traces part at call 1: operand(s) 1 differ while every input was equal',
    );
    expect(parted.out).toContain(`${other}: 1 unary/exp`);
    // Another input: the cause is earlier.
    const input = write('input.trace', call(0, 'matmul', '44444444:4', 'bbbbbbbb:4'));
    expect((await cli(['compare-traces', a, input])).out).toContain('so did an input: the cause is earlier');
    // A different kernel at the same place; and a shorter trace compared over its length.
    const kernel = write('kernel.trace', call(0, 'softmax', '11111111:4'));
    expect((await cli(['compare-traces', a, kernel])).out).toContain('call different kernels');
    const short = write('short.trace', call(0, 'matmul', '11111111:4'));
    expect((await cli(['compare-traces', a, short])).out).toContain(
      `the traces agree over the first 1 calls (${a}: 2, ${short}: 1)`,
    );
    // The longer trace's calls past the comparison are counted too, whichever side it is on.
    const longer = write(
      'longer.trace',
      call(0, 'matmul', '11111111:4') + call(1, 'unary/exp', '22222222:4').repeat(3),
    );
    expect((await cli(['compare-traces', longer, short])).out).toContain(`(${longer}: 4, ${short}: 1)`);
    expect((await cli(['compare-traces', short, longer])).out).toContain(`(${short}: 1, ${longer}: 4)`);
  });

  it('streams traces larger than its read buffer (lines cut across chunks)', async () => {
    const many = Array.from({ length: 40000 }, (_, i) => call(i, 'matmul', '11111111:4')).join('');
    expect(many.length).toBeGreaterThan(1 << 21); // two read buffers of 1 MiB
    const big = write('big.trace', many);
    const copy = write('big-copy.trace', many);
    expect((await cli(['compare-traces', big, copy])).out).toBe('the traces agree over 40000 calls\n');
    const last = write('big-last.trace', many.replace(/11111111:4\n$/, '99999999:4\n'));
    expect((await cli(['compare-traces', big, last])).out).toContain('part at call 39999');
  });

  it('names a file it cannot read, and the line it cannot parse', async () => {
    const a = write('ok.trace', call(0, 'matmul', '11111111:4'));
    const missing = await cli(['compare-traces', a, join(dir, 'nope.trace')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`compare-traces: cannot read ${join(dir, 'nope.trace')}`);
    // A bad line past the common part is still read (to count the calls) and named.
    const bad = write('bad.trace', `${call(0, 'matmul', '11111111:4')}1 matmul 0:2x2\n`);
    expect((await cli(['compare-traces', a, bad])).err).toContain(`${bad}:2: parseTracedCall: bad operand`);
    const badFirst = write('bad-first.trace', '0 matmul 0:2x2\n');
    expect((await cli(['compare-traces', a, badFirst])).err).toContain(`${badFirst}:1: parseTracedCall`);
  });
});
