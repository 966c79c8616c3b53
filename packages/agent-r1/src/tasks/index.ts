/** Tasks: the interface a task implements, and the registry that finds one by `config.task`. */
export {
  type AgentTask,
  type EntityRenaming,
  type ResultRow,
  type TaskDefinition,
  type TaskFactory,
  type TrainingStage,
  defineTask,
} from './task.js';
export { createTask, registerTask, resolveTaskOptions, taskDefinition, taskNames } from './registry.js';
