/**
 * The `agent-r1` command line: subcommands train, eval, chat and serve-search, the shared options
 * --config / --preset / --backend / --checkpoint, and trailing `key.sub=value` config overrides. It parses,
 * resolves the config and dispatches to handlers; what the commands do lives in the handlers.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { stringify as toYaml } from 'yaml';
import { ConfigError, presets, resolveConfig } from '../trainer/config.js';
import type {
  CliOutput,
  CommandContext,
  CommandHandlers,
  CommandName,
  CommandOptions,
  ServeSearchContext,
} from './handlers.js';

export interface CliIo {
  stdout?: CliOutput;
  stderr?: CliOutput;
}

/** The handlers, or a function that loads them (called only when a command is about to run). */
export type HandlersSource = CommandHandlers | (() => CommandHandlers | Promise<CommandHandlers>);

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be an integer from 0 to 65535.');
  return n;
}

const OVERRIDES_HELP = `
Config:
  resolved as defaults <- --preset <- --config file <- --backend/--checkpoint <- overrides.
  Overrides are trailing key.sub=value arguments; a value is JSON when it parses as JSON, else a string.

Examples:
  $ agent-r1 train --preset smoke
  $ agent-r1 train --config run.yaml algorithm.name=ppo train.lr=3e-4 rollout.n=4
  $ agent-r1 eval --checkpoint runs/agent-r1/checkpoints eval.examples=200
  $ agent-r1 train --preset smoke --print-config`;

/**
 * Runs the command line `argv` (the user's arguments, without node and the script) and returns the exit
 * code: 0 on success (and for --help / --version), 2 for usage and config errors, 1 when a command
 * fails, or what a handler returned.
 */
export async function runCli(
  argv: readonly string[],
  handlers: HandlersSource,
  io: CliIo = {},
): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  let exitCode = 0;

  const program = new Command('agent-r1')
    .description('Agent-R1: reinforcement learning for tool-using LLM agents.')
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => stdout.write(s),
      writeErr: (s) => stderr.write(s),
      getOutHelpWidth: () => (stdout as { columns?: number }).columns ?? 100,
      getErrHelpWidth: () => (stderr as { columns?: number }).columns ?? 100,
    })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', OVERRIDES_HELP);

  const resolveHandlers = async (): Promise<CommandHandlers> =>
    typeof handlers === 'function' ? await handlers() : handlers;

  const define = (name: CommandName, description: string): Command =>
    program
      .command(name)
      .description(description)
      .argument('[overrides...]', 'config overrides as key.sub=value (e.g. train.lr=3e-4 rollout.n=4)')
      .option('-c, --config <file>', 'a JSON or YAML config file')
      .option('-p, --preset <name>', `a named preset (${Object.keys(presets).join(', ')})`)
      .option('-b, --backend <name>', 'the tensor backend (sets backend)')
      .option('--checkpoint <dir>', 'the checkpoint directory (sets checkpoint.dir)')
      .option('--print-config', 'print the resolved config as YAML and exit')
      .addHelpText('after', OVERRIDES_HELP);

  const run =
    (name: CommandName, call: (h: CommandHandlers, ctx: CommandContext) => unknown) =>
    async (overrides: string[], opts: Record<string, unknown>): Promise<void> => {
      const options: CommandOptions = {
        config: opts.config as string | undefined,
        preset: opts.preset as string | undefined,
        backend: opts.backend as string | undefined,
        checkpoint: opts.checkpoint as string | undefined,
        overrides,
      };
      const flags: string[] = [];
      if (options.backend !== undefined) flags.push(`backend=${options.backend}`);
      if (options.checkpoint !== undefined) flags.push(`checkpoint.dir=${options.checkpoint}`);
      const config = resolveConfig({
        preset: options.preset,
        file: options.config,
        overrides: [...flags, ...overrides],
      });
      if (opts.printConfig) {
        stdout.write(toYaml(config));
        return;
      }
      const h = await resolveHandlers();
      const result = await call(h, { command: name, config, options, stdout, stderr });
      if (typeof result === 'number') exitCode = result;
    };

  define('train', 'train a policy with RL (GRPO, PPO, REINFORCE++, RLOO) on a task').action(
    run('train', (h, ctx) => h.train(ctx)),
  );
  define('eval', 'evaluate a checkpoint on the task').action(run('eval', (h, ctx) => h.eval(ctx)));
  define('chat', 'talk to a checkpoint, with its tools, in the terminal').action(
    run('chat', (h, ctx) => h.chat(ctx)),
  );
  const serve = define('serve-search', 'serve the search tool over HTTP for rollouts')
    .option('--port <number>', 'the port to listen on', parsePort, 8765)
    .option('--host <address>', 'the address to listen on', '127.0.0.1');
  serve.action(async (overrides: string[], opts: Record<string, unknown>) =>
    run('serve-search', (h, ctx) =>
      h.serveSearch({
        ...ctx,
        command: 'serve-search',
        port: opts.port as number,
        host: opts.host as string,
      } satisfies ServeSearchContext),
    )(overrides, opts),
  );

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander has written its message (or the help / version) already.
      return e.exitCode === 0 ? 0 : 2;
    }
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof ConfigError) {
      stderr.write(`agent-r1: ${message}\n`);
      return 2;
    }
    const text = message.startsWith('agent-r1') ? message : `agent-r1: ${message}`;
    stderr.write(`${text}\n`);
    if (e instanceof Error && e.stack && process.env.AGENT_R1_DEBUG) stderr.write(`${e.stack}\n`);
    return 1;
  }
}
