/**
 * The kernels' WebAssembly module, generated here as bytecode (see ./builder.ts and ./emit/). It imports one
 * memory (`env.memory`, shared when the module is built for threads) and `env.log` (Math.log, called once
 * per row), and exports the kernels of ./emit/: gemm (micro-kernels and the block loop nest, and
 * the packing of A and B), softmax and its backward, logprobs backward, layer/RMS norm forward and
 * backward, elementwise ops, AdamW, attention, rotary embedding, gather and scatter-add along the last
 * axis, and `zero` / `copy` (memory.fill / memory.copy, for the fill and copy kernels on tensors in the
 * memory).
 * Every export takes byte addresses into the memory and returns nothing.
 */
import { F64, I32, ModuleBuilder } from './builder.js';
import { addAttention, addAttentionBackward } from './emit/attention.js';
import { addElementwise } from './emit/elementwise.js';
import { addGemm } from './emit/gemm.js';
import { addIndexing } from './emit/indexing.js';
import { addNorms } from './emit/norms.js';
import { addPack, addPackA } from './emit/pack.js';
import { addRotary } from './emit/rotary.js';
import { addSoftmax } from './emit/softmax.js';

export { gemmName } from './emit/gemm.js';

/** Largest memory a shared build may grow to: 2 GiB, so byte addresses stay positive i32s. */
export const MAX_PAGES = 32768;

/**
 * Builds the module's bytes; `shared` imports a shared memory (needed to run it on several threads);
 * `relaxedSimd` writes the matmul's multiply-adds as `f32x4.relaxed_madd` (the engine must support it).
 */
export function buildKernelModule(shared = false, relaxedSimd = false): Uint8Array {
  const m = new ModuleBuilder();
  const logFn = m.importFunc('env', 'log', [F64], [F64]);
  m.importMemory('env', 'memory', 1, shared ? MAX_PAGES : undefined);
  addGemm(m, relaxedSimd);
  addPack(m);
  addPackA(m);
  addSoftmax(m, logFn);
  addNorms(m);
  addElementwise(m);
  addAttention(m, logFn);
  addAttentionBackward(m);
  addRotary(m);
  addIndexing(m);
  // zero(address, bytes) and copy(to, from, bytes): the engine's memset and memmove, 4x (fill) and 3x (set)
  // faster than the TypedArray methods on a shared buffer, 15x on 4,096 floats (./fill-copy.ts).
  m.func([I32, I32], [], (c) => c.localGet(0).i32Const(0).localGet(1).memoryFill(), 'zero');
  m.func([I32, I32, I32], [], (c) => c.localGet(0).localGet(1).localGet(2).memoryCopy(), 'copy');
  return m.build();
}
