/**
 * The layout of the control block the main thread and the workers share (a SharedArrayBuffer beside the
 * wasm memory): a job counter, per-worker slots, error messages, and the call table. One job is a list of
 * calls (an export of the kernel module and its arguments); each participating thread runs a contiguous
 * range of them. Kept in one place because the worker source (./worker-source.ts) is plain JavaScript that
 * receives these numbers as data.
 */
export const CONTROL = {
  /** Int32 index of the job counter the workers wait on. */
  seq: 0,
  /** Int32 index of the stop flag. */
  stop: 1,
  /** Int32 index of the first worker slot, and the slot size. */
  slot0: 16,
  slotInts: 8,
  /** Offsets within a slot. */
  ready: 0,
  done: 1,
  status: 2,
  start: 3,
  end: 4,
  assigned: 5,
  /**
   * The last job whose share in this slot a thread has taken (compare-exchange): the worker when it wakes
   * in time, or the main thread, which runs the share itself when the worker has not started it.
   */
  claim: 6,
  /** Byte offset and size of each worker's error message (UTF-8). */
  msgOffset: 1024,
  msgBytes: 256,
  /** Byte offset of the call table: rows of `row` float64s (export index, then up to 13 arguments). */
  tableOffset: 8192,
  row: 14,
  maxCalls: 4096,
  maxWorkers: 15,
} as const;

export const CONTROL_BYTES = CONTROL.tableOffset + 8 * CONTROL.row * CONTROL.maxCalls;
