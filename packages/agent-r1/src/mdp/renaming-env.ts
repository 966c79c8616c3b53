/**
 * An environment seen through a renaming of its entities (see `AgentTask.renameEntities`): the policy reads
 * the prompt and every observation renamed, and its actions are restored before the real environment runs
 * and scores them. RL on training questions then cannot pay for recalling the training set's names, only
 * for reading them from the context, which is what held-out questions need.
 */
import type { EntityRenaming } from '../tasks/task.js';
import type { AgentEnv, StepResult } from './env.js';

export class RenamingEnv<Example> implements AgentEnv<Example> {
  private renaming: EntityRenaming | null = null;

  /** `renamingOf` gives an example's renaming, or null to leave that episode as it is. */
  constructor(
    private readonly inner: AgentEnv<Example>,
    private readonly renamingOf: (example: Example) => EntityRenaming | null,
  ) {}

  async reset(example: Example): Promise<string> {
    const prompt = await this.inner.reset(example);
    this.renaming = this.renamingOf(example);
    return this.renaming ? this.renaming.apply(prompt) : prompt;
  }

  /** The action's tokens go on as the policy sampled them; its text, restored, is what the inner env parses. */
  async step(actionText: string, actionTokens: readonly number[]): Promise<StepResult> {
    const renaming = this.renaming;
    if (!renaming) return this.inner.step(actionText, actionTokens);
    const result = await this.inner.step(renaming.restore(actionText), actionTokens);
    return {
      ...result,
      observation: result.observation === null ? null : renaming.apply(result.observation),
    };
  }
}
