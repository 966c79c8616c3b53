/**
 * The `agent-r1` command line: subcommands train, eval, seeds, chat, serve-search and compare-traces, the shared
 * options --config / --preset / --backend / --checkpoint, and trailing `key.sub=value` config overrides.
 * It parses, resolves the config and dispatches to handlers; what the commands do lives in the handlers.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { stringify as toYaml } from 'yaml';
import { ConfigError, presets, resolveConfig } from '../trainer/config.js';
import { savedConfig } from '../checkpoints/agent-files.js';
import { loadTaskModule } from './task-module.js';
import { libraryVersion } from '../version.js';
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

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be an integer from 0 to 65535.');
  return n;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * For `eval` and `chat` without --preset or --config: the config saved in the checkpoint folder they are
 * given (`eval`: the first --policy; both: --checkpoint), so that a folder alone is enough.
 */
function describedConfig(command: CommandName, options: CommandOptions) {
  if (command !== 'eval' && command !== 'chat') return undefined;
  const policy = command === 'eval' ? options.policies?.[0] : undefined;
  const dirs = [policy?.slice(policy.indexOf('=') + 1), options.checkpoint];
  for (const dir of dirs) {
    const saved = dir ? savedConfig(dir) : null;
    if (saved) return saved;
  }
  return undefined;
}

function parseSplit(value: string): 'test' | 'validation' {
  if (value !== 'test' && value !== 'validation')
    throw new InvalidArgumentError('must be test or validation.');
  return value;
}

const OVERRIDES_HELP = `
Config:
  resolved as defaults <- --preset <- --config file <- --backend/--checkpoint <- overrides.
  Overrides are trailing key.sub=value arguments; a value is JSON when it parses as JSON, else a string.

Examples:
  $ agent-r1 train --preset smoke
  $ agent-r1 train --config run.yaml algorithm.name=ppo train.lr=3e-4 rollout.n=4
  $ agent-r1 eval --preset multihop --policy grpo=runs/multihop/checkpoints/policy
  $ agent-r1 eval --preset multihop --questions q.jsonl --corpus c.jsonl --policy grpo=<dir>
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
    .version(libraryVersion(), '-V, --version')
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
      .option(
        '--task-module <file>',
        'a module that registers a task of your own (registerTask, or export default defineTask(...)); repeatable',
        collect,
      )
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
        policies: opts.policy as string[] | undefined,
        out: opts.out as string | undefined,
        split: opts.split as 'test' | 'validation' | undefined,
        imitation: opts.imitation as boolean | undefined,
        episodes: opts.episodes as boolean | undefined,
        runs: opts.run as string[] | undefined,
        reference: opts.reference as string | undefined,
      };
      for (const file of (opts.taskModule as string[] | undefined) ?? []) await loadTaskModule(file);
      const flags: string[] = [];
      if (options.backend !== undefined) flags.push(`backend=${options.backend}`);
      if (options.checkpoint !== undefined) flags.push(`checkpoint.dir=${options.checkpoint}`);
      // A task without these options refuses them (an unknown key of its options), rather than ignore them.
      if (opts.questions !== undefined) flags.push(`taskOptions.questions=${opts.questions}`);
      if (opts.corpus !== undefined) flags.push(`taskOptions.corpus=${opts.corpus}`);
      const config = resolveConfig({
        base:
          options.preset === undefined && options.config === undefined
            ? describedConfig(name, options)
            : undefined,
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
  define('eval', 'the results table: baselines and policies on the held-out test split')
    .option(
      '--policy <name=dir>',
      'a policy checkpoint folder to evaluate, as a table row (repeatable)',
      collect,
    )
    .option('--out <dir>', 'where results.md, results.json and curves.svg go (default: log.dir)')
    .option('--split <split>', 'test or validation (default: test)', parseSplit)
    .option(
      '--questions <file>',
      'JSONL questions {"question", "golden_answers"} (sets taskOptions.questions)',
    )
    .option('--corpus <file>', 'JSONL corpus {"id", "contents"} to search (sets taskOptions.corpus)')
    .option(
      '--imitation',
      "also how closely each policy imitates the scripted searcher's successful demonstrations, token by token",
    )
    .option(
      '--episodes',
      "also write each policy's greedy episodes (turns as text, answer, scores) to <out>/episodes/<method>.jsonl",
    )
    .action(run('eval', (h, ctx) => h.eval(ctx)));
  define(
    'seeds',
    "one results table over runs under several seeds: each cell's mean and spread, and the gains over the warm start, paired seed by seed",
  )
    .option('--run <dir>', "a run's log.dir, holding its results.json (repeatable; at least two)", collect)
    .option('--reference <method>', 'the row gains are measured from', 'supervised (warm start)')
    .option('--out <dir>', 'where results-seeds.md goes (default: log.dir)')
    .action(run('seeds', (h, ctx) => h.seeds(ctx)));
  define('chat', 'talk to a checkpoint, with its tools, in the terminal').action(
    run('chat', (h, ctx) => h.chat(ctx)),
  );
  const serve = define('serve-search', 'serve the search tool over HTTP for rollouts')
    .option('--port <number>', 'the port to listen on', parsePort, 8765)
    .option('--host <address>', 'the address to listen on', '127.0.0.1')
    .option('--corpus <file>', 'JSONL corpus {"id", "contents"} to serve instead of the built-in one');
  // The corpus is serve-search's own option, not a task option: it does not go into the config.
  serve.action(async (overrides: string[], { corpus, ...opts }: Record<string, unknown>) =>
    run('serve-search', (h, ctx) =>
      h.serveSearch({
        ...ctx,
        command: 'serve-search',
        port: opts.port as number,
        host: opts.host as string,
        corpus: corpus as string | undefined,
      } satisfies ServeSearchContext),
    )(overrides, opts),
  );

  program
    .command('keys')
    .description("every config key with its type, default and doc, and each task's options")
    .option('--task <name>', 'only the options of this task (no trainer keys)')
    .option(
      '--task-module <file>',
      'a module that registers a task of your own (its options are listed too); repeatable',
      collect,
    )
    .action(async (opts: { task?: string; taskModule?: string[] }) => {
      for (const file of opts.taskModule ?? []) await loadTaskModule(file);
      const { configReferenceText } = await import('../trainer/config-docs.js');
      stdout.write(configReferenceText(opts.task));
    });

  program
    .command('compare-traces')
    .description('where two kernel traces (log.traceKernels) part: exit code 0 if they agree, 1 if not')
    .argument('<a>', 'a trace file')
    .argument('<b>', 'the trace file to compare it with')
    .action(async (a: string, b: string) => {
      const { compareTraceFiles } = await import('./compare-traces.js');
      const { report, diverged } = compareTraceFiles(a, b);
      stdout.write(report);
      if (diverged) exitCode = 1;
    });

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
