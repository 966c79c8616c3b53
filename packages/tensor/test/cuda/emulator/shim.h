// Just enough of CUDA C++ (glibc declares __expf but does not export it: a macro) for the generated kernels to compile as host C++ and run on CPU threads, one
// std::thread per CUDA thread of a block (see runtime.cpp). A test harness: it checks kernel logic
// (indexing, tiling, reductions, online softmax) against the CPU backend, not GPU behaviour or speed.
#pragma once
#include <cmath>
#include <cstring>

struct ar1_dim3 { unsigned x, y, z; };
extern "C" ar1_dim3 ar1_emu_thread_idx();
extern "C" ar1_dim3 ar1_emu_block_idx();
extern "C" ar1_dim3 ar1_emu_block_dim();
extern "C" ar1_dim3 ar1_emu_grid_dim();
extern "C" void ar1_emu_syncthreads();
extern "C" unsigned long long ar1_emu_shfl(unsigned long long bits, int lane_or_delta, int mode);
extern "C" void ar1_emu_lock();
extern "C" void ar1_emu_unlock();

#define threadIdx (ar1_emu_thread_idx())
#define blockIdx (ar1_emu_block_idx())
#define blockDim (ar1_emu_block_dim())
#define gridDim (ar1_emu_grid_dim())
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(n)
#define __syncthreads() ar1_emu_syncthreads()

template <class T> static inline T ar1_emu_shuffle(T v, int arg, int mode) {
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = ar1_emu_shfl(bits, arg, mode);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int mask) { return ar1_emu_shuffle(v, mask, 0); }
template <class T> static inline T __shfl_down_sync(unsigned, T v, int delta) { return ar1_emu_shuffle(v, delta, 1); }

template <class T> static inline T atomicAdd(T* p, T v) {
  ar1_emu_lock();
  T old = *p;
  *p = old + v;
  ar1_emu_unlock();
  return old;
}
static inline int atomicExch(int* p, int v) {
  ar1_emu_lock();
  int old = *p;
  *p = v;
  ar1_emu_unlock();
  return old;
}
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
#define __expf(x) expf(x)
