/**
 * `agent-r1 chat`: a loaded policy answers the questions typed (or piped) one a line, until an empty line,
 * `exit` or the end of the input (Ctrl-D). Lines are read with readline's async iterator, which buffers the
 * lines that arrive while an answer is computed and ends at the end of the input; `question()` of
 * readline/promises never settles there, so the command used to die with Node's exit code 13.
 */
import { createInterface } from 'node:readline';
import type { TransformerLM } from '@agent-r1/nn';
import type { CliOutput } from './handlers.js';
import { totalReward } from '../mdp/trajectory.js';
import type { RolloutLimits } from '../rollout/config.js';
import type { AgentTask } from '../tasks/task.js';
import { evaluate } from '../evaluation/evaluate.js';

export interface ChatSession<E> {
  task: AgentTask<E>;
  policy: TransformerLM;
  limits: RolloutLimits;
  /** The checkpoint folder the policy was loaded from, named in the greeting. */
  checkpoint: string;
}

export interface ChatIO {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: CliOutput;
}

const PROMPT = 'question> ';

/** Answers each line of `io.input` until an empty line, `exit` or the input's end; returns how many it answered. */
export async function chat<E>(session: ChatSession<E>, io: ChatIO): Promise<number> {
  const { task, policy, limits } = session;
  const fromQuestion = task.fromQuestion?.bind(task);
  if (!fromQuestion) throw new Error(`task "${task.name}" cannot turn a typed question into an episode`);
  const write = (s: string) => io.output.write(s);
  write(
    `chat: policy ${session.checkpoint}, task ${task.name}\n` +
      'One question a line; an empty line, "exit" or Ctrl-D (end of input) quits.\n',
  );
  // At a terminal readline edits the line and shows the prompt; piped input is echoed after the prompt
  // instead, so a transcript shows which question each answer is for.
  const terminal = Boolean(io.input.isTTY && io.output.isTTY);
  const rl = createInterface({
    input: io.input,
    output: terminal ? (io.output as NodeJS.WritableStream) : undefined,
    terminal,
    prompt: PROMPT,
  });
  const ask = () => (terminal ? rl.prompt() : undefined);
  let answered = 0;
  let quit = false;
  try {
    ask();
    for await (const line of rl) {
      const question = line.trim();
      if (!terminal) write(`${PROMPT}${line}\n`);
      if (question === '' || question === 'exit') {
        quit = true;
        break;
      }
      let example: E;
      try {
        example = fromQuestion(question);
      } catch (e) {
        write(`${e instanceof Error ? e.message : String(e)}\n`);
        ask();
        continue;
      }
      const [t] = (await evaluate(policy, task, [example], limits)).trajectories;
      for (const turn of t.turns) {
        write(`action: ${task.codec.decode(t.tokens.slice(turn.actionStart, turn.actionEnd))}\n`);
        const obs = task.codec.decode(t.tokens.slice(turn.observationStart, turn.observationEnd));
        if (obs) write(`observation: ${obs.trim()}\n`);
      }
      write(`reward ${totalReward(t)}\n`);
      answered++;
      ask();
    }
  } finally {
    rl.close();
  }
  // Ctrl-D leaves the cursor after the prompt.
  if (terminal && !quit) write('\n');
  return answered;
}
