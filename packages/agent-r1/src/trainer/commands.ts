/** The `agent-r1` subcommands over the trainer: train, eval, chat (serve-search comes with the QA task). */
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { loadCheckpoint } from '@agent-r1/nn';
import type { CommandContext, CommandHandlers } from '../cli/handlers.js';
import { createTask } from '../tasks/index.js';
import { serveMultihopSearch } from '../tasks/multihop-qa/serve.js';
import { evaluate } from './evaluate.js';
import { buildPolicy } from './models.js';
import { trainAgent } from './trainer.js';

async function loadPolicy(ctx: CommandContext) {
  const task = await createTask(ctx.config);
  const policy = buildPolicy(ctx.config, task.vocabSize);
  const dir = join(ctx.config.checkpoint.dir, 'policy');
  await loadCheckpoint(dir, { model: policy });
  return { task, policy };
}

export const handlers: CommandHandlers = {
  async train(ctx) {
    const task = await createTask(ctx.config);
    const line = (s: string) => ctx.stdout.write(`${s}\n`);
    const result = await trainAgent(ctx.config, task, { log: line });
    const last = result.evaluations.at(-1);
    if (last)
      line(
        `final validation: reward ${last.evaluation.reward.toFixed(3)}, EM ${last.evaluation.em.toFixed(3)}`,
      );
    line(
      `metrics: ${join(ctx.config.log.dir, 'metrics.jsonl')}, curves: ${join(ctx.config.log.dir, 'curves.svg')}`,
    );
    result.policy.dispose();
  },

  async eval(ctx) {
    const { task, policy } = await loadPolicy(ctx);
    const examples = task.validation.slice(0, ctx.config.eval.examples);
    const e = await evaluate(policy, task, examples, ctx.config.rollout);
    const fields = { reward: e.reward, EM: e.em, F1: e.f1, 'tool calls': e.toolCalls };
    const shown = Object.entries(fields).filter(([, v]) => Number.isFinite(v));
    ctx.stdout.write(
      `${task.name}: ${examples.length} examples, ${shown.map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}\n`,
    );
    policy.dispose();
  },

  async chat(ctx) {
    const { task, policy } = await loadPolicy(ctx);
    if (!task.fromQuestion)
      throw new Error(`task "${task.name}" cannot turn a typed question into an episode`);
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      for (;;) {
        const question = (await rl.question('question> ')).trim();
        if (question === '' || question === 'exit') break;
        const { trajectories } = await evaluate(
          policy,
          task,
          [task.fromQuestion(question)],
          ctx.config.rollout,
        );
        const t = trajectories[0];
        for (const turn of t.turns) {
          ctx.stdout.write(
            `action: ${task.codec.decode(t.tokens.slice(turn.actionStart, turn.actionEnd))}\n`,
          );
          const obs = task.codec.decode(t.tokens.slice(turn.observationStart, turn.observationEnd));
          if (obs) ctx.stdout.write(`observation: ${obs.trim()}\n`);
        }
        ctx.stdout.write(`reward ${t.rewards.reduce((s, r) => s + r.value, 0)}\n`);
      }
    } finally {
      rl.close();
      policy.dispose();
    }
  },

  async serveSearch(ctx) {
    await serveMultihopSearch({ host: ctx.host, port: ctx.port }, ctx.stdout);
  },
};
