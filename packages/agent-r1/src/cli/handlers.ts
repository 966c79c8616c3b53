/**
 * What the `agent-r1` commands call: one handler per subcommand, given the resolved config. The real
 * handlers live in `src/cli/commands.ts`, loaded lazily by `loadHandlers()` so that `--help` and
 * argument errors work without them.
 */
import type { TrainConfig } from '../trainer/config.js';

export type CommandName = 'train' | 'eval' | 'chat' | 'serve-search' | 'seeds';

/** Where a command writes (process.stdout / process.stderr, or a capture in tests). */
export interface CliOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** The options as given on the command line (before they were merged into `config`). */
export interface CommandOptions {
  /** --config <file> */
  config?: string;
  /** --preset <name> */
  preset?: string;
  /** --backend <name> (also applied to `config.backend`) */
  backend?: string;
  /** --checkpoint <dir> (also applied to `config.checkpoint.dir`) */
  checkpoint?: string;
  /** The trailing `key.sub=value` overrides. */
  overrides: string[];
  /** eval: --policy name=dir (repeatable): the policies of the results table. */
  policies?: string[];
  /** eval: --out <dir>, where results.md / results.json / curves.svg go (default: log.dir). */
  out?: string;
  /** eval: --split test|validation (default: test where the task has one). */
  split?: 'test' | 'validation';
  /** eval: --imitation, also each policy's token-by-token imitation of the scripted demonstrations. */
  imitation?: boolean;
  /** eval: --episodes, also each policy's greedy episodes as JSON lines (`<out>/episodes/<method>.jsonl`). */
  episodes?: boolean;
  /** seeds: --run <dir> (repeatable): runs of one pipeline under different seeds, each with results.json. */
  runs?: string[];
  /** seeds: --reference <method>, the row the gains are measured from (default: the warm start's). */
  reference?: string;
}

export interface CommandContext {
  command: CommandName;
  /** defaults ← preset ← file ← --backend / --checkpoint ← overrides, validated. */
  config: TrainConfig;
  options: CommandOptions;
  stdout: CliOutput;
  stderr: CliOutput;
}

export interface ServeSearchContext extends CommandContext {
  command: 'serve-search';
  port: number;
  host: string;
  /** A JSONL corpus to serve (`--corpus`) instead of the built-in one. */
  corpus?: string;
}

/** A handler's result: nothing (success) or a process exit code. */
export type HandlerResult = void | number | Promise<void | number>;

export interface CommandHandlers {
  train(ctx: CommandContext): HandlerResult;
  eval(ctx: CommandContext): HandlerResult;
  chat(ctx: CommandContext): HandlerResult;
  serveSearch(ctx: ServeSearchContext): HandlerResult;
  seeds(ctx: CommandContext): HandlerResult;
}

export const HANDLERS_NOT_BUILT = 'agent-r1: command handlers are not built yet';

const COMMANDS_MODULE = './commands.js';

function isMissingModule(e: unknown, specifier: string): boolean {
  const err = e as { code?: unknown; message?: unknown };
  const message = typeof err?.message === 'string' ? err.message : '';
  const code = typeof err?.code === 'string' ? err.code : '';
  const missing =
    code === 'ERR_MODULE_NOT_FOUND' ||
    code === 'MODULE_NOT_FOUND' ||
    /Cannot find module|Failed to load url|Failed to resolve import/i.test(message);
  // Only the commands module itself missing, not something it imports: look before "imported from".
  const stem = specifier.replace(/^.*\//, '').replace(/\.[cm]?[jt]s$/, '');
  const missingWhat = message.split(/ imported from | in \//)[0];
  return missing && missingWhat.includes(stem);
}

/**
 * Imports the real handlers from `./commands.js`, which exports `handlers` (a CommandHandlers), a
 * `createHandlers()` returning them, or a default export of either. Throws
 * 'agent-r1: command handlers are not built yet' when that module does not exist.
 */
export async function loadHandlers(specifier: string = COMMANDS_MODULE): Promise<CommandHandlers> {
  let mod: Record<string, unknown>;
  try {
    mod = await import(/* @vite-ignore */ specifier);
  } catch (e) {
    if (isMissingModule(e, specifier)) throw new Error(HANDLERS_NOT_BUILT);
    throw e;
  }
  const candidate = mod.handlers ?? mod.createHandlers ?? mod.default;
  const handlers = typeof candidate === 'function' ? await (candidate as () => unknown)() : candidate;
  const h = handlers as Partial<CommandHandlers> | undefined;
  if (
    !h ||
    typeof h.train !== 'function' ||
    typeof h.eval !== 'function' ||
    typeof h.chat !== 'function' ||
    typeof h.serveSearch !== 'function'
  )
    throw new Error(
      `agent-r1: ${specifier} must export "handlers" with train, eval, chat and serveSearch functions`,
    );
  return h as CommandHandlers;
}
