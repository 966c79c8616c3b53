/** The built-in tasks, registered by name for `config.task` / `agent-r1 train task=…`. */
import { multihopQaTask } from './multihop-qa/task.js';
import { revealTask } from './reveal/index.js';
import { secretNumberAgentTask } from './secret-number/agent-task.js';
import { registerTask } from './task.js';

registerTask('reveal', (config) => revealTask(config));
registerTask('secret-number', (config) => secretNumberAgentTask(config));
registerTask('multihop-qa', (config) => multihopQaTask(config));

export { type AgentTask, type TaskFactory, createTask, registerTask } from './task.js';
