/**
 * Loads a trained calculator agent from its checkpoint folder and asks it questions, showing each turn.
 * Run: npx tsx ask.ts runs/calculator/checkpoints "What is 37 + 48?"
 */
import { loadAgent, registerTask } from '@agent-r1/agent';
import calculatorTask from './calculator-task.js';

registerTask(calculatorTask);
const [dir = 'runs/calculator/checkpoints', ...questions] = process.argv.slice(2);
const agent = await loadAgent(dir);
for (const question of questions.length > 0 ? questions : ['What is 37 + 48?']) {
  const { turns, reward } = await agent.ask(question);
  console.log(question);
  for (const { action, observation } of turns)
    console.log(`  ${action}${observation && `  →  ${observation}`}`);
  console.log(`  reward ${reward}`);
}
agent.dispose();
