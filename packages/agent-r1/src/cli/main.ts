#!/usr/bin/env node
/** The `agent-r1` executable: the command line over the real handlers of `./commands.js`. */
import { loadHandlers } from './handlers.js';
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), () => loadHandlers());
