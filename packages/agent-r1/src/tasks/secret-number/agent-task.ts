/**
 * The secret-number task for the trainer, with a byte-level BPE tokenizer trained on scripted episodes
 * (the tags and the answer markers are special tokens, so each is one token).
 */
import { trainBpe } from '@agent-r1/nn';
import { runTextEpisode } from '../../mdp/text-episode.js';
import type { AgentTask } from '../task.js';
import { type SecretNumberExample, makeSecretNumberTask } from './index.js';

const SPECIAL = ['<lookup>', '</lookup>', '<answer>', '</answer>', '<result>', '</result>', '<eos>'];

export async function secretNumberAgentTask(config: {
  seed: number;
  rollout: { maxTurns: number };
}): Promise<AgentTask<SecretNumberExample>> {
  const task = makeSecretNumberTask({
    seed: config.seed,
    count: 600,
    keys: 40,
    maxTurns: config.rollout.maxTurns,
  });
  const episodes = await Promise.all(
    task.examples.slice(0, 200).map((ex) => runTextEpisode(task.makeEnv(), ex, task.scriptedAction)),
  );
  const tokenizer = trainBpe(
    episodes.map((e) => e.context),
    { vocabSize: 512, specialTokens: SPECIAL },
  );
  return {
    name: 'secret-number',
    answerMetrics: ['em', 'f1'],
    train: task.examples.slice(0, 500),
    validation: task.examples.slice(500),
    makeEnv: () => task.makeEnv(),
    codec: { encode: (t) => tokenizer.encode(t), decode: (ids) => tokenizer.decode(ids) },
    vocabSize: tokenizer.vocabSize,
    tokenizer,
    stopTokens: [tokenizer.tokenId('<eos>')],
    stopStrings: task.format.stop,
    scripted: () => task.scriptedAction,
    fromQuestion: (question) => {
      const key = /key (\w+)/.exec(question)?.[1] ?? 'K0';
      const secret = task.secrets.get(key) ?? -1;
      return { id: -1, key, question, secret, answers: [String(secret)] };
    },
  };
}
