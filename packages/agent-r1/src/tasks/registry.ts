/**
 * Tasks by name, for `config.task`: the built-in ones (their factories load lazily, so that naming a task
 * costs nothing until it is built) and those a user registers (`registerTask`, or `agent-r1 --task-module`).
 * A task's options are resolved here: its schema's defaults ← `config.taskOptions`, validated.
 */
import { ConfigError, closest, completeOptions, show } from '../options/validate.js';
import type { TrainConfig } from '../trainer/config.js';
import { MultihopOptionsSchema } from './multihop-qa/options.js';
import { pretrainedVocabulary } from '../checkpoints/pretrained.js';
import type { AgentTask, TaskContext, TaskDefinition, TaskFactory } from './task.js';

const definitions = new Map<string, TaskDefinition>();

/**
 * Registers a task under its name (replacing one of that name): a definition with its options, or a name
 * and a factory for a task without options.
 */
export function registerTask<O>(definition: TaskDefinition<O>): void;
export function registerTask(name: string, factory: TaskFactory): void;
export function registerTask(nameOrDefinition: string | TaskDefinition<never>, factory?: TaskFactory): void {
  const definition =
    typeof nameOrDefinition === 'string' ? { name: nameOrDefinition, create: factory! } : nameOrDefinition;
  if (typeof definition.name !== 'string' || definition.name === '')
    throw new Error('registerTask: a task needs a non-empty name');
  if (typeof definition.create !== 'function')
    throw new Error(`registerTask: task "${definition.name}" needs a create(config, options) function`);
  definitions.set(definition.name, definition as TaskDefinition);
}

/** The names of the registered tasks. */
export function taskNames(): string[] {
  return [...definitions.keys()];
}

/** The definition of task `name`; an unknown name is a ConfigError that says how to add a task. */
export function taskDefinition(name: string): TaskDefinition {
  const found = definitions.get(name);
  if (found) return found;
  const near = taskNames().find((n) => name !== '' && n.startsWith(name)) ?? closest(name, taskNames());
  throw new ConfigError(
    `unknown task ${show(name)}${near ? ` (did you mean ${show(near)}?)` : ''}; registered: ${taskNames().join(', ')}. ` +
      'A task of your own: registerTask(...) in your code, or `agent-r1 <command> --task-module ./my-task.ts`',
    'task',
  );
}

/** The options of `config.task`: its defaults ← `config.taskOptions`, validated against its schema. */
export function resolveTaskOptions(
  config: Pick<TrainConfig, 'task' | 'taskOptions'>,
): Record<string, unknown> {
  const definition = taskDefinition(config.task);
  const given = config.taskOptions ?? {};
  const place = { prefix: 'taskOptions', owner: `task ${show(config.task)}` };
  if (!definition.options) {
    const extra = Object.keys(given);
    if (extra.length > 0)
      throw new ConfigError(
        `unknown key ${show(`taskOptions.${extra[0]}`)}: task ${show(config.task)} has no options`,
        `taskOptions.${extra[0]}`,
      );
    return {};
  }
  return completeOptions(definition.options, given, place);
}

/**
 * Builds `config.task` with its resolved options. A run from a pretrained model (`model.from`) gives the
 * task that model's tokenizer: `context.pretrained` when the caller has it (a checkpoint's own copy),
 * else read from the folder. A task that keeps its own vocabulary then is an error naming it.
 */
export async function createTask(config: TrainConfig, context: TaskContext = {}): Promise<AgentTask> {
  const definition = taskDefinition(config.task);
  const found =
    context.pretrained ??
    (config.model.from === '' ? undefined : await pretrainedVocabulary(config.model.from));
  const pretrained = found && { chatVariables: config.model.chatVariables, ...found };
  const task = await definition.create(config, resolveTaskOptions(config), { ...context, pretrained });
  if (pretrained && task.tokenizer !== pretrained.tokenizer)
    throw new ConfigError(
      `task ${show(config.task)} cannot start from a pretrained model: it keeps its own tokenizer instead of ${pretrained.source}'s (a task for model.from builds its codec with pretrainedChat(context.pretrained))`,
      'model.from',
    );
  return task;
}

registerTask({
  name: 'reveal',
  description: 'a toy: the answer is a digit that the reveal tool shows',
  create: async (config) => (await import('./reveal/index.js')).revealTask(config),
});
registerTask({
  name: 'secret-number',
  description: 'a toy: look up a key’s secret number with a tool and answer it',
  create: async (config) => (await import('./secret-number/agent-task.js')).secretNumberAgentTask(config),
});
registerTask({
  name: 'multihop-qa',
  description: 'multi-hop questions over WordNet and world-countries, answered with a BM25 search tool',
  options: MultihopOptionsSchema,
  create: async (config, options, context) =>
    (await import('./multihop-qa/task.js')).multihopQaTask(
      { ...config, taskOptions: options as Record<string, unknown> },
      {},
      context,
    ),
});
