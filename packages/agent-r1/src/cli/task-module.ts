/**
 * `--task-module <file>`: a user's module that brings its own task to the command line. It registers its
 * task(s) with `registerTask` when imported, or exports a task definition (`export default defineTask(...)`,
 * or a named `task` / `tasks`), which is registered here. A TypeScript module is loaded through tsx when
 * the user's project has it (Node 20 does not run TypeScript by itself).
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { registerTask } from '../tasks/registry.js';
import type { TaskDefinition } from '../tasks/task.js';

const isDefinition = (v: unknown): v is TaskDefinition =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as TaskDefinition).name === 'string' &&
  typeof (v as TaskDefinition).create === 'function';

/** Makes TypeScript importable through the tsx found from `path`'s project; false without tsx. */
async function registerTypeScript(path: string): Promise<boolean> {
  let api: string;
  try {
    api = createRequire(path).resolve('tsx/esm/api');
  } catch {
    return false;
  }
  const { register } = (await import(pathToFileURL(api).href)) as { register: () => unknown };
  register();
  return true;
}

/** Imports the module at `file` (relative to the working directory) and registers the tasks it exports. */
export async function loadTaskModule(file: string): Promise<string[]> {
  const path = resolve(file);
  const url = pathToFileURL(path).href;
  let mod: Record<string, unknown>;
  try {
    mod = await import(url);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?ts$/.test(path)) {
      if (!(await registerTypeScript(path)))
        throw new Error(
          `--task-module ${file}: a TypeScript module needs tsx in your project (npm install -D tsx), or compile it to JavaScript`,
        );
      mod = await import(url);
    } else if (code === 'ERR_MODULE_NOT_FOUND' && (e as Error).message.includes(path))
      throw new Error(`--task-module ${file}: no such file (${path})`);
    else throw new Error(`--task-module ${file}: ${(e as Error).message}`);
  }
  const exported = [mod.default, mod.task, ...(Array.isArray(mod.tasks) ? mod.tasks : [])];
  const definitions = exported.filter(isDefinition);
  for (const d of definitions) registerTask(d);
  return definitions.map((d) => d.name);
}
