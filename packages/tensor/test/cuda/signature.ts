/** Reads a generated kernel's parameter list back out of its source: [C type, name] per parameter. */
export function kernelParams(source: string, name: string): { type: string; name: string }[] {
  const re = new RegExp(`__global__ void (?:__launch_bounds__\\(\\d+\\) )?${name}\\(([^)]*)\\)`);
  const m = re.exec(source);
  if (!m) throw new Error(`no __global__ ${name} in its source`);
  return m[1].split(',').map((p) => {
    const words = p
      .replace(/__restrict__/g, ' ')
      .trim()
      .split(/\s+/);
    const pname = words.pop() as string;
    return { type: words.join(' '), name: pname };
  });
}
