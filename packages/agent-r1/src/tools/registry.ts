/** A name → tool table: the tools one environment offers the policy. */
import type { Tool } from './tool.js';

export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: Iterable<Tool<never>> = []) {
    for (const t of tools) this.register(t);
  }

  /** Adds a tool; throws if another tool already has its name. Returns the registry for chaining. */
  register<Args>(tool: Tool<Args>): this {
    if (typeof tool.name !== 'string' || tool.name.length === 0)
      throw new Error('ToolRegistry: a tool needs a non-empty name');
    if (this.#tools.has(tool.name))
      throw new Error(`ToolRegistry: a tool named "${tool.name}" is already registered`);
    this.#tools.set(tool.name, tool as unknown as Tool);
    return this;
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The tool of that name; throws, listing the known tools, if there is none. */
  get(name: string): Tool {
    const tool = this.#tools.get(name);
    if (!tool) throw new Error(unknownToolMessage(name, this.names()));
    return tool;
  }

  /** The tool of that name, or undefined. */
  find(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** All tools, in registration order. */
  list(): Tool[] {
    return [...this.#tools.values()];
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  get size(): number {
    return this.#tools.size;
  }
}

/** `unknown tool "serch"; available: search, lookup` (the text both the registry and the environment use). */
export function unknownToolMessage(name: string, known: readonly string[]): string {
  return `unknown tool ${JSON.stringify(name)}; available: ${known.length > 0 ? known.join(', ') : '(none)'}`;
}
