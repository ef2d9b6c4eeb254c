// A block's threads for the CPU emulation of mxc's kernels: every CUDA thread of a block is a
// coroutine on the calling OS thread, so kernels that need their threads to meet run as on a
// device: __syncthreads (every thread of the block), warp shuffles (the 32 lanes of a warp
// exchange through per-thread slots between two warp-wide meetings) and __shared__ memory (a
// static, one block at a time). A thread runs until it meets or returns; a meeting is released
// when every thread it waits for has arrived. A barrier some threads can never reach (one
// after others returned, or threads waiting at different barriers) is an error, reported, and
// the launch stops there: on a device that kernel would hang or be undefined.
//
// Switching: each worker coroutine is started once with makecontext/swapcontext (which cost a
// signal-mask system call, ~460 ns a round trip) and from then on switched with _setjmp /
// _longjmp (~20 ns): a finished worker goes back to the top of its loop and takes the next
// block's thread, so a barrier-free kernel pays about 20 ns per thread over a plain loop.
// Build with -U_FORTIFY_SOURCE: its __longjmp_chk refuses jumps between the workers' stacks.
#pragma once
#include <setjmp.h>
#include <ucontext.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct dim3 { unsigned x = 1, y = 1, z = 1; };
inline thread_local dim3 blockIdx, threadIdx, blockDim, gridDim;

namespace mxc_emu {

constexpr unsigned kMaxThreads = 1024;        // CUDA's limit per block
constexpr size_t kStack = 128 << 10;
enum : int { kRunnable, kAtBlock, kAtWarp, kDone };

struct Worker {
  jmp_buf at;                                  // where it resumes
  char *stack = nullptr;
  bool started = false;
  int state = kDone;
  unsigned tid = 0;
  alignas(16) unsigned char slot[16];          // a shuffled value
};

struct Launch {
  Worker w[kMaxThreads];
  jmp_buf sched;                               // where a worker returns to the scheduler
  ucontext_t boot, boot_back;
  Worker *cur = nullptr;
  void (*body)(void *) = nullptr;
  void *arg = nullptr;
  unsigned n = 0;
  bool active = false;                         // inside run()
  char error[512] = {0};                       // the first failure of the current launch
};

inline Launch &launch() {
  static thread_local Launch *l = new Launch();
  return *l;
}

inline void fail(const char *fmt, unsigned a = 0, unsigned b = 0, unsigned c = 0,
                 unsigned d = 0) {
  Launch &l = launch();
  if (!l.error[0]) std::snprintf(l.error, sizeof l.error, fmt, a, b, c, d);
}

// The scheduler hands the current worker over; the worker comes back by returning, meeting or
// failing.
inline void resume(Worker *w) {
  Launch &l = launch();
  l.cur = w;
  threadIdx.x = w->tid;
  if (!_setjmp(l.sched)) _longjmp(w->at, 1);
}

inline void suspend(int state) {
  Launch &l = launch();
  Worker *me = l.cur;
  me->state = state;
  if (!_setjmp(me->at)) _longjmp(l.sched, 1);
}

inline void worker_main() {
  Launch &l = launch();
  Worker *me = l.cur;
  if (!_setjmp(me->at)) swapcontext(&l.boot, &l.boot_back);   // started: back to the creator
  for (;;) {
    l.body(l.arg);
    me->state = kDone;
    if (!_setjmp(me->at)) _longjmp(l.sched, 1);
  }
}

inline void start(Worker *w) {
  Launch &l = launch();
  if (!w->stack) w->stack = (char *)std::malloc(kStack);
  getcontext(&l.boot);
  l.boot.uc_stack.ss_sp = w->stack;
  l.boot.uc_stack.ss_size = kStack;
  l.boot.uc_link = nullptr;
  makecontext(&l.boot, worker_main, 0);
  l.cur = w;
  swapcontext(&l.boot_back, &l.boot);
  w->started = true;
}

// Releases whatever meeting is complete; false when nothing can go on (the error is set).
inline bool release(Launch &l) {
  unsigned done = 0, at_block = 0, at_warp = 0;
  for (unsigned t = 0; t < l.n; ++t) {
    const int s = l.w[t].state;
    done += s == kDone;
    at_block += s == kAtBlock;
    at_warp += s == kAtWarp;
  }
  if (done == l.n) return false;
  bool released = false;
  for (unsigned w0 = 0; at_warp && w0 < l.n; w0 += 32) {
    const unsigned end = w0 + 32 < l.n ? w0 + 32 : l.n;
    unsigned waiting = 0;
    for (unsigned t = w0; t < end; ++t) waiting += l.w[t].state == kAtWarp;
    if (waiting == 0) continue;
    if (end - w0 < 32) {
      fail("warp shuffle in a partial warp (%u of 32 lanes; block of %u threads)", end - w0,
           l.n);
      return false;
    }
    if (waiting == 32) {
      for (unsigned t = w0; t < end; ++t) l.w[t].state = kRunnable;
      released = true;
    }
  }
  if (released) return true;
  if (at_block && at_block + done == l.n && at_warp == 0) {
    if (done) {
      fail("__syncthreads in block %u reached by %u threads after %u returned",
           blockIdx.x, at_block, done);
      return false;
    }
    for (unsigned t = 0; t < l.n; ++t) l.w[t].state = kRunnable;
    return true;
  }
  fail("deadlock in block %u: %u threads at __syncthreads, %u at a warp shuffle, %u returned",
       blockIdx.x, at_block, at_warp, done);
  return false;
}

inline void run_block(Launch &l) {
  for (;;) {
    bool ran = false;
    for (unsigned t = 0; t < l.n; ++t)
      if (l.w[t].state == kRunnable) {
        resume(&l.w[t]);
        ran = true;
      }
    if (!ran && !release(l)) return;
  }
}

// Runs f() as every thread of a (grid, block) launch; nullptr, or what went wrong.
template <class F> const char *run(unsigned grid, unsigned block, F f) {
  Launch &l = launch();
  l.error[0] = 0;
  if (block == 0 || block > kMaxThreads) {
    fail("a block of %u threads (at most 1024)", block);
    return l.error;
  }
  for (unsigned t = 0; t < block; ++t)
    if (!l.w[t].started) start(&l.w[t]);
  l.body = [](void *p) { (*(F *)p)(); };
  l.arg = &f;
  l.n = block;
  l.active = true;
  gridDim.x = grid;
  blockDim.x = block;
  for (unsigned b = 0; b < grid && !l.error[0]; ++b) {
    blockIdx.x = b;
    for (unsigned t = 0; t < block; ++t) {
      l.w[t].state = kRunnable;
      l.w[t].tid = t;
    }
    run_block(l);
  }
  l.active = false;
  if (!l.error[0]) return nullptr;
  // workers left waiting inside the kernel must not be resumed there: start them afresh
  for (unsigned t = 0; t < block; ++t)
    if (l.w[t].state != kDone) l.w[t].started = false;
  return l.error;
}

inline bool in_launch() {
  if (launch().active) return true;
  launch().error[0] = 0;
  fail("a barrier or shuffle outside an emulated launch (mxc_emu::run)");
  return false;
}

}  // namespace mxc_emu

inline void __syncthreads() {
  if (mxc_emu::in_launch()) mxc_emu::suspend(mxc_emu::kAtBlock);
}

// Every lane of the warp takes lane ^ o's value (mask: all 32 lanes, as mxc's kernels use it)
template <class V> inline V __shfl_xor_sync(unsigned, V v, int o) {
  static_assert(sizeof(V) <= 16, "a shuffled value of at most 16 bytes");
  if (!mxc_emu::in_launch()) return v;
  mxc_emu::Launch &l = mxc_emu::launch();
  if (o < 0 || o > 31) {
    mxc_emu::fail("__shfl_xor_sync with lane mask %u (0..31)", (unsigned)o);
    return v;
  }
  mxc_emu::Worker *me = l.cur;
  std::memcpy(me->slot, &v, sizeof(V));
  mxc_emu::suspend(mxc_emu::kAtWarp);         // every lane has stored its value
  V r;
  std::memcpy(&r, l.w[me->tid ^ (unsigned)o].slot, sizeof(V));
  mxc_emu::suspend(mxc_emu::kAtWarp);         // every lane has read before any stores again
  return r;
}
