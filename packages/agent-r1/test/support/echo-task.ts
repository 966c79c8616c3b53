/** A task module of a user's, for `--task-module` tests: a task with options, exported as the default. */
import { defineTask, int, section, str } from '../../src/index.js';

export default defineTask({
  name: 'echo',
  description: 'repeat a word a number of times',
  options: section('Options of the echo task.', {
    word: str('hello', 'The word to repeat.', { nonEmpty: true }),
    times: int(2, 'How often.', { min: 1 }),
  }),
  create: () => {
    throw new Error('the echo task is for option tests only');
  },
});
