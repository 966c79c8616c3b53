/** Merging option trees: later layers win key by key, sections merge, `null` removes an optional key. */

const isTree = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function mergeInto(base: Record<string, unknown>, over: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    if (v === null) delete base[k];
    else if (isTree(v) && isTree(base[k])) mergeInto(base[k], v);
    else base[k] = structuredClone(v);
  }
}

/** A copy of `base` with `layers` merged over it, left to right. */
export function mergeTrees<T extends object>(base: T, ...layers: (object | undefined)[]): T {
  const out = structuredClone(base) as Record<string, unknown>;
  for (const layer of layers) if (layer) mergeInto(out, layer as Record<string, unknown>);
  return out as T;
}
