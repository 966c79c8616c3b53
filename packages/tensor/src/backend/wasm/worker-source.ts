/**
 * The worker's program, as JavaScript source text: a thread host (./pool.ts) starts it from this string, so
 * it needs no module resolution (it runs the same under vitest on the TypeScript sources and from dist/).
 * `main(data)` instantiates the kernel module on the shared memory, marks its slot ready, then loops:
 * wait for the job counter to move, claim its share (unless the main thread took it first), run the calls
 * assigned to it, record success or the error message, and signal done. Layout constants come in `data.layout` (./protocol.ts).
 */
export const WORKER_MAIN = `
function main(data) {
  const L = data.layout;
  const ctl = new Int32Array(data.control);
  const table = new Float64Array(data.control, L.tableOffset);
  const slot = L.slot0 + data.index * L.slotInts;
  const message = new Uint8Array(data.control, L.msgOffset + data.index * L.msgBytes, L.msgBytes);
  const instance = new WebAssembly.Instance(data.module, { env: { memory: data.memory, log: Math.log } });
  const fns = data.names.map((n) => instance.exports[n]);
  let seen = Atomics.load(ctl, L.seq);
  Atomics.store(ctl, slot + L.ready, 1);
  Atomics.notify(ctl, slot + L.ready);
  for (;;) {
    Atomics.wait(ctl, L.seq, seen);
    seen = Atomics.load(ctl, L.seq);
    if (Atomics.load(ctl, L.stop) === 1) return;
    if (Atomics.load(ctl, slot + L.assigned) !== seen) continue;
    const claimed = Atomics.load(ctl, slot + L.claim);
    if (claimed === seen || Atomics.compareExchange(ctl, slot + L.claim, claimed, seen) !== claimed) continue;
    let status = 0;
    try {
      const end = ctl[slot + L.end];
      for (let c = ctl[slot + L.start]; c < end; c++) {
        const r = c * L.row;
        const t = table;
        fns[t[r]](t[r + 1], t[r + 2], t[r + 3], t[r + 4], t[r + 5], t[r + 6], t[r + 7], t[r + 8], t[r + 9],
          t[r + 10], t[r + 11], t[r + 12], t[r + 13]);
      }
    } catch (error) {
      status = 1;
      const text = new TextEncoder().encode(String(error && error.message ? error.message : error));
      message.fill(0);
      message.set(text.subarray(0, L.msgBytes));
    }
    ctl[slot + L.status] = status;
    Atomics.store(ctl, slot + L.done, seen);
    Atomics.notify(ctl, slot + L.done);
  }
}
`;
