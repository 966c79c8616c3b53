/**
 * `name=factor` lists, as options write them (`compare_area=2, capital=0.5`): a task's kind boosts, the warm
 * start's tool weights.
 */

/**
 * `a=2, b=0.5` → factor by name; '' → none. `setting` names the option and `noun` what the names are in
 * errors (a factor not above 0, a name given twice).
 */
export function parseNamedFactors(spec: string, setting: string, noun: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of spec.split(',')) {
    if (part.trim() === '') continue;
    const m = /^\s*([^=\s]+)\s*=\s*([^=\s]+)\s*$/.exec(part);
    const factor = m ? Number(m[2]) : Number.NaN;
    if (!m || !Number.isFinite(factor) || factor <= 0)
      throw new Error(`${setting}: expected ${noun}=factor with a factor above 0, got '${part.trim()}'`);
    if (out.has(m[1])) throw new Error(`${setting}: ${noun} '${m[1]}' is given twice`);
    out.set(m[1], factor);
  }
  return out;
}
