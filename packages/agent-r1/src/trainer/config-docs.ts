/**
 * The config reference, written from the schemas alone: the trainer's keys and each registered task's
 * options. `agent-r1 keys` prints it; docs/config.md is this text (a test keeps it so).
 */
import { markdownReference, textReference } from '../options/docs.js';
import { taskDefinition, taskNames } from '../tasks/registry.js';
import { TrainConfigSchema } from './config-definition.js';

/** The reference for the terminal: every trainer key and every task's options, or `task`'s options alone. */
export function configReferenceText(task?: string): string {
  const tasks = task === undefined ? taskNames() : [taskDefinition(task).name];
  const parts = task === undefined ? [textReference(TrainConfigSchema)] : [];
  for (const name of tasks) {
    const d = taskDefinition(name);
    const head = `\ntask "${name}"${d.description ? `: ${d.description}` : ''}`;
    parts.push(d.options ? `${head}\n${textReference(d.options, 'taskOptions')}` : `${head} (no options)`);
  }
  return `${parts.join('\n')}\n`;
}

/** The reference as markdown (docs/config.md). */
export function configReferenceMarkdown(): string {
  const out = [
    '# Config reference',
    '',
    '<!-- Written by `npm run docs:config` from the schemas in packages/agent-r1/src (trainer/config-definition.ts and each',
    "task's options); a test fails when this page and the schemas differ. Do not edit by hand. -->",
    '',
    'A run is configured as defaults ← `--preset` ← `--config` file ← `key.sub=value` overrides; `agent-r1 keys`',
    'prints this reference in the terminal. See [the agent](agent.md) for what the stages do.',
    '',
    '## Trainer keys',
    '',
    markdownReference(TrainConfigSchema),
    "## Tasks' options",
    '',
    'Set under `taskOptions` for the task that `task` names (`taskOptions.rlHops=2,3`).',
    '',
  ];
  for (const name of taskNames()) {
    const d = taskDefinition(name);
    out.push(`### Task \`${name}\``, '');
    if (d.description) out.push(`${d.description[0].toUpperCase()}${d.description.slice(1)}.`, '');
    out.push(
      d.options
        ? markdownReference(d.options, 'taskOptions').replaceAll('\n### ', '\n#### ')
        : 'No options.\n',
    );
  }
  return `${out.join('\n').trimEnd()}\n`;
}
