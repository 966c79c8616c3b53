/**
 * A general tool-using environment: the policy's actions are parsed with a tool-call format; tool calls run
 * (validated against their schemas, concurrently, batched per tool when it can) and their responses come
 * back as the observation; an answer ends the episode with the task's outcome reward. A new tool is a
 * registry entry and a new task is a `buildPrompt` and a `score`: nothing in the trainer changes.
 *
 * Rewards, all credited to the action's last token:
 * - outcome: `score(example, answer).reward` when the action answers; 0 when the turns run out first.
 * - format: `-formatPenalty` once per action that had any format problem (malformed call, unclosed tag,
 *   unknown tool, invalid arguments, more calls than `maxToolCallsPerAction`, or neither a call nor an
 *   answer); `+formatReward` for a clean answer.
 * - process: each tool result's `reward`, and the task's own `callReward` of each successful call, when
 *   `processRewards` is on.
 * A tool that throws or answers `success: false` is not the policy's fault: no penalty, just its message.
 */
import type { ToolCallFormat, ToolCall } from '../tools/formats/format.js';
import { type ToolRegistry, unknownToolMessage } from '../tools/registry.js';
import type { Tool, ToolResult } from '../tools/tool.js';
import { validateArgs } from '../tools/validate.js';
import type { AgentEnv, StepResult } from './env.js';
import type { RewardKind, ToolCallRecord } from './trajectory.js';

export interface ScoreResult {
  reward: number;
  info: Record<string, unknown>;
}

export interface ToolEnvConfig<Example> {
  tools: ToolRegistry;
  format: ToolCallFormat;
  /** Most actions in an episode; an action at this limit that does not answer ends it with outcome 0. */
  maxTurns: number;
  /**
   * Most tool calls one action may make; default 16 (`DEFAULT_MAX_TOOL_CALLS_PER_ACTION`). The first ones
   * run; the rest do not, and one error line in the observation says so (with the format penalty).
   */
  maxToolCallsPerAction?: number;
  /** Each tool response is cut to this many characters (then `truncationMarker` is added). Default: no limit. */
  maxObservationChars?: number;
  /** Added after a cut response (default '...'). */
  truncationMarker?: string;
  /** Magnitude of the format penalty (the reward is `-formatPenalty`); default 0 (none). */
  formatPenalty?: number;
  /** Bonus for a final answer given in an action with no format problem; default 0 (none). */
  formatReward?: number;
  /** The prompt text of an example, given the format's system prompt for the registered tools. */
  buildPrompt(example: Example, systemPrompt: string): string;
  /**
   * The outcome reward of an answer (e.g. exact match) and what to report about it (EM, F1, …), given the
   * episode's successful tool calls (for a reward that asks what the answer rests on).
   */
  score(example: Example, answer: string, calls: readonly CallRecord[]): ScoreResult | Promise<ScoreResult>;
  /** Credit the tools' own rewards (and `callReward`'s) as process rewards (default false). */
  processRewards?: boolean;
  /**
   * The task's process reward for a successful tool call, which only the task can judge (e.g. a search
   * that showed a fact the question needs): given the example, the call and the episode's earlier calls.
   */
  callReward?(example: Example, call: CallRecord, earlier: readonly CallRecord[]): number;
  /**
   * When an action has neither a tool call nor an answer: 'nudge' (default, as in Search-R1) answers with
   * the format's usage hint as an error observation and goes on; 'end' ends the episode with outcome 0.
   * Either way the action gets the format penalty.
   */
  onNoAction?: 'nudge' | 'end';
}

export const DEFAULT_MAX_TOOL_CALLS_PER_ACTION = 16;

/** A tool call as the environment ran it. */
export type CallRecord = Omit<ToolCallRecord, 'turn'>;

interface CallOutcome {
  record: CallRecord;
  /** The policy's fault (unknown tool, invalid arguments): earns the format penalty. */
  formatError: boolean;
}

function errorResult(message: string): ToolResult {
  return { content: `Error: ${message}`, success: false };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class ToolEnv<Example = unknown> implements AgentEnv<Example> {
  readonly config: ToolEnvConfig<Example>;
  #example: Example | undefined;
  #started = false;
  #done = false;
  #turn = 0;
  #penalised = 0;
  #calls = 0;
  /** This episode's successful calls, for `callReward` and `score`. */
  #history: CallRecord[] = [];

  constructor(config: ToolEnvConfig<Example>) {
    if (!Number.isInteger(config.maxTurns) || config.maxTurns < 1)
      throw new Error(`ToolEnv: maxTurns must be a positive integer, got ${config.maxTurns}`);
    const maxCalls = config.maxToolCallsPerAction;
    if (maxCalls !== undefined && (!Number.isInteger(maxCalls) || maxCalls < 1))
      throw new Error(`ToolEnv: maxToolCallsPerAction must be a positive integer, got ${maxCalls}`);
    this.config = config;
  }

  /** The system prompt that teaches the format and the registered tools. */
  systemPrompt(): string {
    return this.config.format.systemPrompt(this.config.tools.list());
  }

  /** Actions taken so far in the current episode. */
  get turn(): number {
    return this.#turn;
  }

  get done(): boolean {
    return this.#done;
  }

  reset(example: Example): string {
    this.#example = example;
    this.#started = true;
    this.#done = false;
    this.#turn = 0;
    this.#penalised = 0;
    this.#calls = 0;
    this.#history = [];
    return this.config.buildPrompt(example, this.systemPrompt());
  }

  async step(actionText: string, _actionTokens: readonly number[] = []): Promise<StepResult> {
    if (!this.#started) throw new Error('ToolEnv: step() before reset()');
    if (this.#done) throw new Error('ToolEnv: step() after the episode ended; call reset()');
    const c = this.config;
    const example = this.#example as Example;
    this.#turn++;
    const lastTurn = this.#turn >= c.maxTurns;
    const parsed = c.format.parse(actionText);
    const rewards: { value: number; kind: RewardKind }[] = [];
    const penalty = c.formatPenalty ?? 0;
    const maxCalls = c.maxToolCallsPerAction ?? DEFAULT_MAX_TOOL_CALLS_PER_ACTION;
    const penalise = () => {
      this.#penalised++;
      if (penalty !== 0) rewards.push({ value: -penalty, kind: 'format' });
    };
    // Episode counters (the rollout merges each step's info into the trajectory's, so later steps win).
    const base = () => ({ turns: this.#turn, toolCallCount: this.#calls, formatErrorTurns: this.#penalised });

    if (parsed.answer !== null) {
      this.#done = true;
      const { reward, info } = await c.score(example, parsed.answer, this.#history);
      rewards.push({ value: reward, kind: 'outcome' });
      if (parsed.errors.length > 0) penalise();
      else if (c.formatReward) rewards.push({ value: c.formatReward, kind: 'format' });
      return {
        observation: null,
        rewards,
        done: true,
        toolCalls: [],
        info: { ...base(), answer: parsed.answer, reason: 'answer', ...info },
      };
    }

    if (parsed.calls.length === 0) {
      penalise();
      if (lastTurn || c.onNoAction === 'end')
        return this.#end(rewards, base(), lastTurn ? 'max_turns' : 'no_action');
      const hint = [...this.#errorLines(parsed.errors, maxCalls), this.#cut(c.format.usageHint())];
      return {
        observation: c.format.renderObservation(hint),
        rewards,
        done: false,
        toolCalls: [],
        info: base(),
      };
    }

    if (lastTurn) {
      // The observation would never be seen: the calls do not run.
      if (parsed.errors.length > 0) penalise();
      return this.#end(rewards, base(), 'max_turns');
    }

    const dropped = parsed.calls.length - maxCalls;
    const outcomes = await this.#run(dropped > 0 ? parsed.calls.slice(0, maxCalls) : parsed.calls);
    this.#calls += outcomes.length;
    if (parsed.errors.length > 0 || dropped > 0 || outcomes.some((o) => o.formatError)) penalise();
    for (const o of outcomes) {
      if (c.processRewards && typeof o.record.reward === 'number' && Number.isFinite(o.record.reward))
        rewards.push({ value: o.record.reward, kind: 'process' });
      if (!o.record.success) continue;
      const own = c.processRewards && c.callReward ? c.callReward(example, o.record, this.#history) : 0;
      if (own !== 0) rewards.push({ value: own, kind: 'process' });
      this.#history.push(o.record);
    }
    const responses = [
      ...outcomes.map((o) => this.#cut(o.record.content)),
      ...(dropped > 0
        ? [
            this.#cut(
              `Error: this action made ${parsed.calls.length} tool calls; at most ${maxCalls} run per action, ` +
                `so the first ${maxCalls} ran and the other ${dropped} did not. Make fewer calls per action.`,
            ),
          ]
        : []),
      ...this.#errorLines(parsed.errors, maxCalls),
    ];
    return {
      observation: c.format.renderObservation(responses),
      rewards,
      done: false,
      toolCalls: outcomes.map((o) => o.record),
      info: base(),
    };
  }

  #end(
    rewards: { value: number; kind: RewardKind }[],
    base: Record<string, unknown>,
    reason: 'max_turns' | 'no_action',
  ): StepResult {
    this.#done = true;
    rewards.unshift({ value: 0, kind: 'outcome' });
    return { observation: null, rewards, done: true, toolCalls: [], info: { ...base, answer: null, reason } };
  }

  /** The format's errors as observation lines: at most `max` of them, then one line counting the rest. */
  #errorLines(errors: readonly string[], max: number): string[] {
    const lines = errors.slice(0, max).map((e) => this.#cut(`Error: ${e}`));
    if (errors.length > max)
      lines.push(`Error: … and ${errors.length - max} more format errors in this action.`);
    return lines;
  }

  #cut(text: string): string {
    const max = this.config.maxObservationChars;
    if (max === undefined || text.length <= max) return text;
    return text.slice(0, Math.max(0, max)) + (this.config.truncationMarker ?? '...');
  }

  /** Validates and runs the calls of one action: concurrently, and each tool's calls in one batch if it can. */
  async #run(calls: readonly ToolCall[]): Promise<CallOutcome[]> {
    const { tools } = this.config;
    const outcomes: (CallOutcome | undefined)[] = new Array(calls.length);
    const byTool = new Map<Tool, { index: number; args: Record<string, unknown> }[]>();
    calls.forEach((call, index) => {
      const tool = tools.find(call.name);
      if (!tool) {
        const r = errorResult(unknownToolMessage(call.name, tools.names()));
        outcomes[index] = { record: { name: call.name, args: call.args, ...r }, formatError: true };
        return;
      }
      const v = validateArgs(tool, call.args);
      if (!v.ok) {
        outcomes[index] = {
          record: { name: call.name, args: call.args, ...errorResult(v.error) },
          formatError: true,
        };
        return;
      }
      const group = byTool.get(tool) ?? [];
      group.push({ index, args: v.args });
      byTool.set(tool, group);
    });
    await Promise.all(
      [...byTool].map(async ([tool, group]) => {
        const results = await executeGroup(
          tool,
          group.map((g) => g.args),
        );
        group.forEach((g, i) => {
          const r = results[i];
          const record: Omit<ToolCallRecord, 'turn'> = {
            name: tool.name,
            args: g.args,
            content: r.content,
            success: r.success,
          };
          if (r.reward !== undefined) record.reward = r.reward;
          outcomes[g.index] = { record, formatError: false };
        });
      }),
    );
    return outcomes as CallOutcome[];
  }
}

function normalise(tool: Tool, r: unknown): ToolResult {
  if (r === null || typeof r !== 'object' || typeof (r as ToolResult).content !== 'string')
    return errorResult(`tool "${tool.name}" returned no content`);
  return r as ToolResult;
}

async function executeGroup(tool: Tool, args: Record<string, unknown>[]): Promise<ToolResult[]> {
  if (tool.executeBatch && args.length > 0) {
    try {
      const results = await tool.executeBatch(args);
      if (!Array.isArray(results) || results.length !== args.length)
        return args.map(() => errorResult(`tool "${tool.name}" returned a wrong number of results`));
      return results.map((r) => normalise(tool, r));
    } catch (e) {
      return args.map(() => errorResult(`tool "${tool.name}" failed: ${messageOf(e)}`));
    }
  }
  return Promise.all(
    args.map(async (a) => {
      try {
        return normalise(tool, await tool.execute(a));
      } catch (e) {
        return errorResult(`tool "${tool.name}" failed: ${messageOf(e)}`);
      }
    }),
  );
}
