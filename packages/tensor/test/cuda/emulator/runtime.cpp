// Runs one kernel launch on the calling thread: each CUDA thread of a block is a fiber (ucontext), and
// blocks run one after another, so shared memory (function-static in shim.h) belongs to one block at a
// time. __syncthreads and warp shuffles are barriers: a fiber that arrives early yields to the others
// until the last one arrives. One OS thread, deterministic order, no load on the machine beyond one core.
#include <setjmp.h>
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

struct ar1_dim3 { unsigned x, y, z; };

namespace {
struct Fiber {
  ucontext_t ctx;  // only to enter the fiber's stack the first time
  jmp_buf resume;  // every later switch: _setjmp/_longjmp skip swapcontext's signal-mask system call
  bool started, done;
  char* stack;
};
struct Barrier {
  unsigned expected, arrived, generation;
};

// Enough for the kernels' register arrays (attention keeps up to 2×64 doubles per thread).
constexpr size_t kStack = 64 * 1024;
ar1_dim3 g_block_dim, g_grid_dim, g_block;
unsigned g_current;
std::vector<Fiber> g_fibers;
ucontext_t g_scheduler;
jmp_buf g_scheduler_jmp;
void (*g_entry)(const unsigned char*);
const unsigned char* g_args;
Barrier g_block_barrier;
std::vector<Barrier> g_warps;
unsigned long long g_slots[1024];
// Arrivals, barrier passes and finished fibers: a whole round without any is a deadlock (a barrier some
// threads of the block never reach), reported instead of spinning forever.
unsigned long long g_progress;

void yield() {
  if (!_setjmp(g_fibers[g_current].resume)) _longjmp(g_scheduler_jmp, 1);
}

void arrive(Barrier& b) {
  unsigned generation = b.generation;
  g_progress++;
  if (++b.arrived == b.expected) {
    b.arrived = 0;
    b.generation++;
    return;
  }
  while (b.generation == generation) yield();
  g_progress++;
}

void fiber_main() {
  g_entry(g_args);
  g_fibers[g_current].done = true;
  g_progress++;
  _longjmp(g_scheduler_jmp, 1);
}
}  // namespace

extern "C" ar1_dim3 ar1_emu_thread_idx() { return {g_current, 0, 0}; }
extern "C" ar1_dim3 ar1_emu_block_idx() { return g_block; }
extern "C" ar1_dim3 ar1_emu_block_dim() { return g_block_dim; }
extern "C" ar1_dim3 ar1_emu_grid_dim() { return g_grid_dim; }
extern "C" void ar1_emu_syncthreads() { arrive(g_block_barrier); }
// Fibers never run at the same time: atomics need no lock.
extern "C" void ar1_emu_lock() {}
extern "C" void ar1_emu_unlock() {}

extern "C" unsigned long long ar1_emu_shfl(unsigned long long bits, int arg, int mode) {
  unsigned tid = g_current, lane = tid % 32, warp = tid / 32;
  g_slots[tid] = bits;
  arrive(g_warps[warp]);
  unsigned src = mode == 0 ? (lane ^ (unsigned)arg) : (lane + (unsigned)arg < 32 ? lane + (unsigned)arg : lane);
  unsigned long long out = g_slots[warp * 32 + src];
  arrive(g_warps[warp]);
  return out;
}

extern "C" void ar1_emu_run(void (*entry)(const unsigned char*), const unsigned char* args, unsigned gx,
                            unsigned gy, unsigned gz, unsigned threads) {
  g_entry = entry;
  g_args = args;
  g_block_dim = {threads, 1, 1};
  g_grid_dim = {gx, gy, gz};
  // Stacks live for one launch: each kernel library has its own copy of this runtime, so stacks kept
  // between launches would add up across the hundreds of kernels a test run loads.
  g_fibers.assign(threads, Fiber{});
  for (Fiber& f : g_fibers) f.stack = static_cast<char*>(std::malloc(kStack));
  for (unsigned z = 0; z < gz; z++)
    for (unsigned y = 0; y < gy; y++)
      for (unsigned x = 0; x < gx; x++) {
        g_block = {x, y, z};
        g_block_barrier = {threads, 0, 0};
        g_warps.assign((threads + 31) / 32, Barrier{32, 0, 0});
        if (threads % 32) g_warps.back().expected = threads % 32;
        for (unsigned t = 0; t < threads; t++) {
          Fiber& f = g_fibers[t];
          getcontext(&f.ctx);
          f.ctx.uc_stack.ss_sp = f.stack;
          f.ctx.uc_stack.ss_size = kStack;
          f.ctx.uc_link = &g_scheduler;
          makecontext(&f.ctx, fiber_main, 0);
          f.started = false;
          f.done = false;
        }
        for (bool running = true; running;) {
          running = false;
          unsigned long long before = g_progress;
          for (unsigned t = 0; t < threads; t++) {
            if (g_fibers[t].done) continue;
            running = true;
            g_current = t;
            Fiber& f = g_fibers[t];
            if (!_setjmp(g_scheduler_jmp)) {
              if (f.started) _longjmp(f.resume, 1);
              f.started = true;
              swapcontext(&g_scheduler, &f.ctx);
            }
          }
          if (running && g_progress == before) {
            std::fprintf(stderr, "cuda emulator: deadlock in block (%u, %u, %u): a barrier not all threads reach\n", x, y, z);
            std::abort();
          }
        }
      }
  for (Fiber& f : g_fibers) std::free(f.stack);
  g_fibers.clear();
}
