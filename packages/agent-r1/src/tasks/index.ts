/** The built-in tasks, registered by name for `config.task` / `agent-r1 train task=…`. */
import { revealTask } from './reveal/index.js';
import { secretNumberAgentTask } from './secret-number/agent-task.js';
import { registerTask } from './task.js';

registerTask('reveal', (config) => revealTask(config));
registerTask('secret-number', (config) => secretNumberAgentTask(config));

export { type AgentTask, type TaskFactory, createTask, registerTask } from './task.js';
