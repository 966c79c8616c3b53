// Preloaded into a training child process (node --import): counts the file-system writes the process
// makes (files opened for writing, renames, removals, folder creations, appended lines) and, with
// AGENT_R1_CRASH_AT=k, kills the process with SIGKILL just before the k-th, as a power cut would. With
// AGENT_R1_COUNT_FILE it writes the count there at a normal exit. Builtin ES module bindings are re-synced,
// so `import { rename } from 'node:fs/promises'` in the code under test sees the wrappers.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const crashAt = Number(process.env.AGENT_R1_CRASH_AT ?? 0);
const countFile = process.env.AGENT_R1_COUNT_FILE;
const writeFileSync = fs.writeFileSync;
let count = 0;

// Only the run's own writes count: the child sets this flag once it starts training (module loading and
// transpiler caches before it differ from run to run).
function tick() {
  if (!globalThis.agentR1CountWrites) return;
  count++;
  if (crashAt > 0 && count === crashAt) process.kill(process.pid, 'SIGKILL');
}

const writes = (flags) => typeof flags === 'string' && /[wax+]/.test(flags);
const wrap = (owner, name, counts = () => true) => {
  const original = owner[name];
  owner[name] = function (...args) {
    if (counts(...args)) tick();
    return original.apply(this, args);
  };
};

for (const name of ['rename', 'rm', 'mkdir', 'writeFile', 'appendFile']) wrap(fs.promises, name);
wrap(fs.promises, 'open', (_path, flags) => writes(flags));
for (const name of ['renameSync', 'rmSync', 'mkdirSync', 'writeFileSync', 'appendFileSync']) wrap(fs, name);
wrap(fs, 'openSync', (_path, flags) => writes(flags));
// Appended lines (metrics logs); not the standard streams.
wrap(fs, 'writeSync', (fd) => fd > 2);
syncBuiltinESMExports();

if (countFile) process.on('exit', () => writeFileSync(countFile, String(count)));
