/**
 * @agent-r1/agent — reinforcement learning for tool-using LLM agents (Agent-R1). This first cut holds the
 * question-answering rewards; the MDP, tools, rollouts, algorithms and trainer follow.
 */
export { normalizeAnswer, exactMatch, f1Score } from './rewards/qa.js';
