/** The `agent-r1` subcommands over the trainer: train, eval, seeds, chat (serve-search comes with the QA task). */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MODEL_FILE, writeFileAtomicSync } from '@agent-r1/nn';
import type { CommandContext, CommandHandlers } from './handlers.js';
import { type Trajectory, totalReward } from '../mdp/trajectory.js';
import { createTask } from '../tasks/index.js';
import type { AgentTask } from '../tasks/task.js';
import {
  serveMultihopSearch,
  servedBridgeTypes,
  servedCorpus,
  servedTitleBoost,
} from '../tasks/multihop-qa/serve.js';
import { policyFolder } from '../checkpoints/agent-files.js';
import { checkpointTaskContext } from '../checkpoints/pretrained.js';
import { prepareBackend } from '../trainer/backend-setup.js';
import { chat } from './chat.js';
import { demonstrate } from '../trainer/demonstrations.js';
import { describeEvaluation } from '../evaluation/evaluate.js';
import { formatSeedTables, parseRunRows } from '../evaluation/seeds.js';
import { imitationReport, imitationTable } from '../evaluation/imitation.js';
import { checkEpisodeFiles, episodeRecords, writeEpisodes } from '../evaluation/episodes.js';
import {
  type TablePolicy,
  loadPolicyFrom,
  methodName,
  plotRunCurves,
  resultsAndKinds,
  tableExamples,
} from '../evaluation/report.js';
import type { KindRow } from '../evaluation/kinds.js';
import { type ResultRow, formatResultsMatrix, tableLayout, writeResults } from '../evaluation/results.js';
import { trainAgent } from '../trainer/trainer.js';
import { warmStartDir } from '../trainer/warm-start.js';

async function loadPolicy(ctx: CommandContext) {
  await prepareBackend(ctx.config);
  const dir = policyFolder(ctx.config.checkpoint.dir);
  const task = await createTask(ctx.config, await checkpointTaskContext(ctx.config, dir));
  const policy = await loadPolicyFrom(dir, ctx.config, task);
  return { task, policy, dir };
}

type TablePolicyDir = { method: string; dir: string };

/** `name=dir` → { method: name, dir }; a bare dir is its own row's name. */
function parsePolicyOption(spec: string): TablePolicyDir {
  const eq = spec.indexOf('=');
  if (eq === 0 || eq === spec.length - 1) throw new Error(`--policy "${spec}": expected name=dir`);
  return eq < 0 ? { method: spec, dir: spec } : { method: spec.slice(0, eq), dir: spec.slice(eq + 1) };
}

/** Prints the table; writes results.md, results.json and (when the runs have metrics) results-curves.svg. */
function publish(
  ctx: CommandContext,
  task: AgentTask,
  table: { rows: ResultRow[]; kinds: KindRow[] },
  out: string,
  title: string,
  runs: TablePolicyDir[],
) {
  const layout = tableLayout(task);
  const { temperature, samples } = ctx.config.eval;
  const heading =
    temperature > 0
      ? `${title}; policies sampled at temperature ${temperature}, ${samples} episode${samples === 1 ? '' : 's'} per example`
      : title;
  ctx.stdout.write(`\n${heading}\n\n${formatResultsMatrix(table.rows, layout)}\n\n`);
  const written = writeResults(out, table.rows, heading, layout, table.kinds);
  const curves = join(out, 'results-curves.svg');
  const plotted = plotRunCurves(curves, runs, task.answerMetrics?.[0]);
  const files = [written.md, written.json, written.kinds, plotted ? curves : undefined];
  ctx.stdout.write(`results: ${files.filter((f) => f !== undefined).join(', ')}\n`);
}

/** Each policy's imitation of the scripted searcher's successful demonstrations of `examples`. */
async function printImitation<E>(
  ctx: CommandContext,
  task: AgentTask<E>,
  runs: TablePolicyDir[],
  examples: readonly E[],
) {
  const { config } = ctx;
  if (!task.scripted) throw new Error(`eval --imitation: task "${task.name}" has no scripted demonstrations`);
  const demos: Trajectory[] = [];
  for (const [i, example] of examples.entries()) {
    const demo = await demonstrate(
      task.makeEnv(),
      example,
      task.scripted(example, i),
      task.codec,
      config.rollout,
    );
    if (totalReward(demo, ['outcome']) > 0) demos.push(demo);
  }
  for (const run of runs) {
    const policy = await loadPolicyFrom(run.dir, config, task);
    try {
      const report = await imitationReport(policy, demos, task.codec);
      ctx.stdout.write(`\n${run.method}: imitation of the scripted searcher\n\n${imitationTable(report)}\n`);
    } finally {
      policy.dispose();
    }
  }
}

export const handlers: CommandHandlers = {
  async train(ctx) {
    const { config } = ctx;
    const line = (s: string) => ctx.stdout.write(`${s}\n`);
    const task = await createTask(config);
    const result = await trainAgent(config, task, { log: line });
    const last = result.evaluations.at(-1);
    if (last) line(`final validation: ${describeEvaluation(last.evaluation)}`);
    line(`metrics: ${join(config.log.dir, 'metrics.jsonl')}, curves: ${join(config.log.dir, 'curves.svg')}`);
    // An RL run ends with the results table where the task has a held-out split: baselines, the policy the
    // RL stage started from (the warm start's, or `init`) and the trained one.
    if (task.test && config.eval.table && config.train.steps > 0) {
      const start = existsSync(join(warmStartDir(config), MODEL_FILE)) ? warmStartDir(config) : config.init;
      const policies: TablePolicy[] = [
        ...(start !== '' ? [{ method: 'supervised (warm start)', dir: start }] : []),
        { method: methodName(config), policy: result.policy },
      ];
      const table = await resultsAndKinds(task, config, policies, tableExamples(task, config));
      publish(ctx, task, table, config.log.dir, `${task.name}: ${task.testSource ?? 'test split'}`, [
        { method: methodName(config), dir: join(config.checkpoint.dir, 'policy') },
      ]);
    }
    result.policy.dispose();
  },

  async seeds(ctx) {
    const { config, options } = ctx;
    const dirs = options.runs ?? [];
    if (dirs.length < 2)
      throw new Error('seeds: give two --run folders or more, each holding a results.json');
    const runs = dirs.map((dir) => {
      const file = dir.endsWith('.json') ? dir : join(dir, 'results.json');
      if (!existsSync(file))
        throw new Error(`seeds: ${file} does not exist (is ${dir} a finished run's log.dir?)`);
      return parseRunRows(readFileSync(file, 'utf8'), file);
    });
    // The task only names the table's groups and metrics.
    const task = await createTask(config);
    const text = formatSeedTables(runs, tableLayout(task), { reference: options.reference });
    const out = join(options.out ?? config.log.dir, 'results-seeds.md');
    mkdirSync(dirname(out), { recursive: true });
    writeFileAtomicSync(out, `# ${task.name}: ${runs.length} seeds\n\n${text}`);
    ctx.stdout.write(`${text}\nresults: ${out}\n`);
  },

  async eval(ctx) {
    const { config, options } = ctx;
    await prepareBackend(config);
    const given = (options.policies ?? []).map(parsePolicyOption);
    const runs =
      given.length > 0 ? given : [{ method: methodName(config), dir: join(config.checkpoint.dir, 'policy') }];
    if (options.episodes) checkEpisodeFiles(runs.map((r) => r.method));
    // Policies from a pretrained model: the first one's saved tokenizer builds the task.
    const task = await createTask(config, await checkpointTaskContext(config, runs[0].dir));
    const split = options.split ?? (task.test ? 'test' : 'validation');
    const examples = tableExamples(task, config, split);
    const out = options.out ?? config.log.dir;
    const episodeFiles: string[] = [];
    const keepEpisodes = (method: string, trajectories: readonly Trajectory[]) =>
      episodeFiles.push(
        writeEpisodes(join(out, 'episodes'), method, episodeRecords(task, examples, trajectories)),
      );
    const table = await resultsAndKinds(
      task,
      config,
      runs,
      examples,
      options.episodes ? keepEpisodes : undefined,
    );
    const source = split === 'test' ? (task.testSource ?? 'test split') : 'validation split';
    publish(ctx, task, table, out, `${task.name}: ${source} (${examples.length} examples)`, runs);
    if (episodeFiles.length > 0) ctx.stdout.write(`episodes: ${episodeFiles.join(', ')}\n`);
    if (options.imitation) await printImitation(ctx, task, runs, examples);
  },

  async chat(ctx) {
    const { task, policy, dir } = await loadPolicy(ctx);
    try {
      await chat(
        { task, policy, limits: ctx.config.rollout, checkpoint: dir },
        { input: process.stdin, output: ctx.stdout },
      );
    } finally {
      policy.dispose();
    }
  },

  async serveSearch(ctx) {
    await serveMultihopSearch(
      {
        host: ctx.host,
        port: ctx.port,
        corpus: servedCorpus(ctx),
        bridgeTypes: servedBridgeTypes(ctx),
        titleBoost: servedTitleBoost(ctx),
      },
      ctx.stdout,
    );
  },
};
