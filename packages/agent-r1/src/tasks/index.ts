/** Tasks: the interface a task implements, and the registry that finds one by `config.task`. */
export {
  type AgentTask,
  type EntityRenaming,
  type PretrainedVocabulary,
  type ResultRow,
  type TaskContext,
  type TaskDefinition,
  type TaskFactory,
  type TaskVocabulary,
  type TrainingStage,
  defineTask,
} from './task.js';
export { pretrainedChat } from './pretrained-chat.js';
export { createTask, registerTask, resolveTaskOptions, taskDefinition, taskNames } from './registry.js';
