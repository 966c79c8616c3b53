/**
 * Trains the calculator agent through the library: a warm start on the scripted demonstrations, then GRPO,
 * with the settings of calculator.yaml (and any key=value given on the command line); prints the greedy
 * validation before and after RL. Run: npx tsx train.ts [key=value ...]
 */
import { fileURLToPath } from 'node:url';
import { createTask, describeEvaluation, registerTask, resolveConfig, trainAgent } from '@agent-r1/agent';
import calculatorTask from './calculator-task.js';

registerTask(calculatorTask);
const config = resolveConfig({
  file: fileURLToPath(new URL('calculator.yaml', import.meta.url)),
  overrides: process.argv.slice(2),
});
const task = await createTask(config);
const { evaluations, policy } = await trainAgent(config, task, { log: console.log });
policy.dispose();
console.log(`warm start: ${describeEvaluation(evaluations[0].evaluation)}`);
console.log(`after GRPO: ${describeEvaluation(evaluations.at(-1)!.evaluation)}`);
console.log(`the agent: ${config.checkpoint.dir}/policy (try: npx tsx ask.ts ${config.checkpoint.dir})`);
