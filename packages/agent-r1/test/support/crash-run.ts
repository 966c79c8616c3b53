/** A training run in a child process, for the crash tests: `crash-run.ts key=value ...` (config overrides). */
import { createTask } from '../../src/tasks/index.js';
import { resolveConfig } from '../../src/trainer/config.js';
import { trainAgent } from '../../src/trainer/trainer.js';

const config = resolveConfig({ overrides: process.argv.slice(2) });
// From here on, test/support/crash-hook.mjs counts this process's file writes.
(globalThis as { agentR1CountWrites?: boolean }).agentR1CountWrites = true;
const result = await trainAgent(config, await createTask(config));
result.policy.dispose();
