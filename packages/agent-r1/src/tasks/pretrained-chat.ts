/**
 * A task built for a pretrained chat model (`model.from`): the model's tokenizer as the task's codec, its
 * chat template's tool conventions (`chatTools`), the end of an assistant turn as the stop token, and the
 * model's embedding rows as the vocabulary. A task of one's own calls this with its `TaskContext.pretrained`.
 */
import { type ChatTools, type ChatToolsOptions, chatTools } from '../tools/formats/chat.js';
import type { PretrainedVocabulary, TaskVocabulary } from './task.js';

export function pretrainedChat(
  pretrained: PretrainedVocabulary,
  options: ChatToolsOptions = {},
): { chat: ChatTools; vocabulary: TaskVocabulary } {
  const { tokenizer } = pretrained;
  const chat = chatTools(tokenizer, pretrained.source, {
    ...options,
    variables: { ...pretrained.chatVariables, ...options.variables },
  });
  return {
    chat,
    vocabulary: {
      codec: { encode: (t) => tokenizer.encode(t), decode: (ids) => tokenizer.decode(ids) },
      vocabSize: pretrained.vocabSize,
      tokenizer,
      stopTokens: chat.stopTokens,
      stopStrings: chat.format.stop,
    },
  };
}
