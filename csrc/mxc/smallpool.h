/* A pool for the small blocks of the per-operation hot path (engine op blocks, vars, kernel
 * calls). They are allocated by the thread that pushes and freed by the worker that completes
 * them; with glibc's malloc that crosses arenas and the threads queue on the arena lock (perf
 * showed futex waits inside malloc/free as the main cost of a chain of small operations).
 * Here each 64-byte size class up to 4 KiB is a free list under its own tiny spinlock; blocks
 * are kept for reuse (their number is bounded by the peak of live operations and arrays) and
 * larger requests go to malloc. Each module that includes this header has its own pool, so a
 * block must be freed by the module that allocated it. */
#ifndef MXC_SMALLPOOL_H
#define MXC_SMALLPOOL_H
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define MXC_SP_STEP 64
#define MXC_SP_CLASSES 64          /* up to 4 KiB: a kernel call with 32-dim descriptors is ~2.3 KiB */
#define MXC_SP_HEADER 16           /* keeps 16-byte alignment of the payload */

#if defined(__x86_64__) || defined(__i386__)
#define MXC_SP_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define MXC_SP_RELAX() __asm__ __volatile__("yield")
#else
#define MXC_SP_RELAX() ((void)0)
#endif

typedef struct mxc_sp_node { struct mxc_sp_node *next; } mxc_sp_node;

static mxc_sp_node *mxc_sp_head[MXC_SP_CLASSES];
static int mxc_sp_locks[MXC_SP_CLASSES];

static inline void mxc_sp_lock(int c) {
  while (__atomic_exchange_n(&mxc_sp_locks[c], 1, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&mxc_sp_locks[c], __ATOMIC_RELAXED)) MXC_SP_RELAX();
  }
}

static inline void mxc_sp_unlock(int c) { __atomic_store_n(&mxc_sp_locks[c], 0, __ATOMIC_RELEASE); }

static inline void *mxc_sp_alloc(size_t n) {
  size_t total = n + MXC_SP_HEADER;
  int c = (int)((total + MXC_SP_STEP - 1) / MXC_SP_STEP) - 1;
  char *p;
  if (c >= MXC_SP_CLASSES) {
    p = (char *)malloc(total);
    if (!p) return NULL;
    *(int32_t *)p = -1;
    return p + MXC_SP_HEADER;
  }
  mxc_sp_lock(c);
  p = (char *)mxc_sp_head[c];
  if (p) mxc_sp_head[c] = ((mxc_sp_node *)p)->next;
  mxc_sp_unlock(c);
  if (!p) {
    p = (char *)malloc((size_t)(c + 1) * MXC_SP_STEP);
    if (!p) return NULL;
  }
  *(int32_t *)p = c;
  return p + MXC_SP_HEADER;
}

static inline void *mxc_sp_calloc(size_t n) {
  void *p = mxc_sp_alloc(n);
  if (p) memset(p, 0, n);
  return p;
}

static inline void mxc_sp_free(void *q) {
  char *p;
  int c;
  if (!q) return;
  p = (char *)q - MXC_SP_HEADER;
  c = *(int32_t *)p;
  if (c < 0) { free(p); return; }
  mxc_sp_lock(c);
  ((mxc_sp_node *)p)->next = mxc_sp_head[c];
  mxc_sp_head[c] = (mxc_sp_node *)p;
  mxc_sp_unlock(c);
}
#endif
