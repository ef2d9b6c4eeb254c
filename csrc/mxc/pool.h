/* The load pool: a second thread for float32 GEMMs while other processes crowd the cores.
 *
 * Under load the watcher (mxc/_core/threads.py) caps kernels and BLAS at one thread: a team of
 * threads that meets at barriers waits at each one for whichever member the scheduler has
 * descheduled, and beside busy processes every thread is descheduled most of the time. This pool
 * adds a thread that is never waited for. A GEMM is cut into blocks of C (columns or rows), each
 * the same single-threaded sgemm call. The caller takes blocks from the front, the helper from
 * the back; the helper computes its blocks into its own scratch and publishes each one
 * (per-block state FREE -> HELPER -> DONE, tagged with the job's generation). Only the caller
 * writes C: when it runs out of blocks it copies the helper's DONE blocks and takes back
 * (HELPER -> DROPPED) and computes itself every block the helper has not finished; the helper's
 * late result is thrown away. So a job never waits for the helper, and its result is the same
 * whoever computed each block (the blocked result; it may differ from one unblocked call in
 * rounding).
 *
 * A dropped block may still be running on the helper after the job returns, reading A, B and C;
 * mxc_pool_quiesce (called by mxc/_core/opcall.pyx after each kernel, before the engine may free
 * the kernel's arrays) waits for that block to end. A new job does not wait: the helper joins it
 * when it is free, and its scratch is its own.
 *
 * One caller owns the pool at a time (a lock taken without waiting; a second engine worker runs
 * its GEMM inline). The state is one instance owned by mxc/_core/pool.pyx, which starts the
 * helper thread (detached: it never holds up interpreter exit) and switches the pool on while
 * the watcher caps the threads; a forked child has no helper (alive 0) and runs inline. Kernel
 * modules reach it through csrc/mxc/blas.h's mxc_sgemm. The helper calls the sgemm function
 * pointer directly, so a GEMM never nests into the pool.
 */
#ifndef MXC_POOL_H
#define MXC_POOL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MXC_POOL_MAXTASK 8
/* a block's state: generation << 3 | one of these */
enum { MXC_PT_FREE = 0, MXC_PT_CALLER = 1, MXC_PT_HELPER = 2, MXC_PT_DONE = 3, MXC_PT_DROPPED = 4 };
/* mode: 0 off, 1 on, 2 blocked but all blocks on the caller (the tests' reference) */
enum { MXC_POOL_OFF = 0, MXC_POOL_ON = 1, MXC_POOL_INLINE = 2 };

typedef void (*mxc_pool_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                                  const float *a, int lda, const float *b, int ldb, float beta,
                                  float *c, int ldc);

typedef struct {
  int mode;          /* MXC_POOL_*: set by pool.pyx (the watcher, or a test) */
  int alive;         /* a helper thread runs in this process */
  int owner;         /* lock of the one caller that may publish a job */
  uint32_t gen;      /* the current job's generation (the helper's futex word) */
  int busy;          /* the helper is inside a block (mxc_pool_quiesce waits on it) */
  int quiescing;     /* a caller waits for busy to drop */
  int sleeping;       /* the helper waits on the futex (a job must wake it) */
  float min_mflop;   /* the least work per block */
  /* the job: C = alpha op(A) op(B) + beta C, row-major, blocks of bs columns (bycol) or rows */
  mxc_pool_sgemm_fn fn;
  int ta, tb, m, n, k, lda, ldb, ldc, bycol, bs, ntask;
  float alpha, beta;
  const float *a, *b;
  float *c;
  uint32_t state[MXC_POOL_MAXTASK];
  /* the helper's scratch (its blocks at offset task * bs * (bycol ? m : n)) */
  float *scratch;
  size_t scratch_cap;
  /* counters for tests and benchmarks: blocks the helper finished and the caller used; blocks
   * the caller took back; jobs run through the pool */
  int64_t n_done, n_dropped, n_jobs;
  int64_t n_waits, wait_ns;   /* mxc_pool_quiesce calls that waited, and for how long */
} mxc_pool_t;

static inline long mxc_pool_futex(void *addr, int op, uint32_t val) {
  return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* block t's operands */
static inline void mxc_pool_block(const mxc_pool_t *p, int t, int *lo, int *len, const float **a,
                                  const float **b, int64_t *coff) {
  const int ext = p->bycol ? p->n : p->m;
  *lo = t * p->bs;
  *len = ext - *lo < p->bs ? ext - *lo : p->bs;
  *a = p->a;
  *b = p->b;
  if (p->bycol) {
    *b = p->tb == 111 ? p->b + *lo : p->b + (int64_t)*lo * p->ldb;
    *coff = *lo;
  } else {
    *a = p->ta == 111 ? p->a + (int64_t)*lo * p->lda : p->a + *lo;
    *coff = (int64_t)*lo * p->ldc;
  }
}

/* the caller: block t straight into C */
static inline void mxc_pool_run_caller(const mxc_pool_t *p, int t) {
  int lo, len;
  const float *a, *b;
  int64_t coff;
  mxc_pool_block(p, t, &lo, &len, &a, &b, &coff);
  p->fn(101, p->ta, p->tb, p->bycol ? p->m : len, p->bycol ? len : p->n, p->k, p->alpha, a,
        p->lda, b, p->ldb, p->beta, p->c + coff, p->ldc);
}

/* copy block t between C and a buffer s of its rows (ld: the block's width) */
static inline void mxc_pool_copy(const mxc_pool_t *p, int t, float *s, int to_c) {
  int lo, len, r;
  const float *a, *b;
  int64_t coff;
  mxc_pool_block(p, t, &lo, &len, &a, &b, &coff);
  const int rows = p->bycol ? p->m : len, w = p->bycol ? len : p->n;
  for (r = 0; r < rows; r++) {
    float *cr = p->c + coff + (int64_t)r * p->ldc;
    if (to_c)
      memcpy(cr, s + (int64_t)r * w, sizeof(float) * (size_t)w);
    else
      memcpy(s + (int64_t)r * w, cr, sizeof(float) * (size_t)w);
  }
}

static inline float *mxc_pool_scratch_of(const mxc_pool_t *p, float *base, int t) {
  return base + (int64_t)t * p->bs * (p->bycol ? p->m : p->n);
}

/* The caller's side of csrc/mxc/blas.h's mxc_sgemm: 1 when the pool ran the product, 0 when the
 * caller should make the plain call (pool off, owned by another caller, or too little work). */
static int mxc_pool_sgemm(mxc_pool_t *p, mxc_pool_sgemm_fn fn, int order, int ta, int tb, int m,
                          int n, int k, float alpha, const float *a, int lda, const float *b,
                          int ldb, float beta, float *c, int ldc) {
  const int mode = __atomic_load_n(&p->mode, __ATOMIC_RELAXED);
  int ntask, bycol, ext, bs, t, first;
  uint32_t g;
  if (mode == MXC_POOL_OFF || (mode == MXC_POOL_ON && !p->alive) || order != 101 || m <= 0 ||
      n <= 0 || k <= 0)
    return 0;
  bycol = n >= m;
  ext = bycol ? n : m;
  ntask = (int)(2.0 * m * n * k / (1e6 * p->min_mflop));
  if (ntask > MXC_POOL_MAXTASK) ntask = MXC_POOL_MAXTASK;
  if (ntask > ext / 16) ntask = ext / 16;
  if (ntask < 2) return 0;
  bs = (ext + ntask - 1) / ntask;
  bs = (bs + 15) / 16 * 16;          /* whole vectors and cache lines of C */
  ntask = (ext + bs - 1) / bs;
  if (ntask < 2) return 0;
  if (__atomic_exchange_n(&p->owner, 1, __ATOMIC_ACQUIRE)) return 0;
  g = p->gen + 1;
  if (g >= (1u << 28)) g = 1;
  p->fn = fn; p->ta = ta; p->tb = tb; p->m = m; p->n = n; p->k = k; p->lda = lda; p->ldb = ldb;
  p->ldc = ldc; p->bycol = bycol; p->bs = bs; p->ntask = ntask; p->alpha = alpha;
  p->beta = beta; p->a = a; p->b = b; p->c = c;
  for (t = 0; t < ntask; t++) __atomic_store_n(&p->state[t], g << 3 | MXC_PT_FREE, __ATOMIC_RELAXED);
  __atomic_store_n(&p->gen, g, __ATOMIC_SEQ_CST);
  p->n_jobs++;
  if (mode == MXC_POOL_ON && __atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST))
    mxc_pool_futex(&p->gen, FUTEX_WAKE_PRIVATE, 1);
  /* the caller's blocks, from the front until one is the helper's */
  for (first = 0; first < ntask; first++) {
    uint32_t s = g << 3 | MXC_PT_FREE;
    if (!__atomic_compare_exchange_n(&p->state[first], &s, g << 3 | MXC_PT_CALLER, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      break;
    mxc_pool_run_caller(p, first);
  }
  /* the rest were claimed by the helper: use what it finished, take back the others */
  for (t = first; t < ntask; t++) {
    uint32_t s = g << 3 | MXC_PT_HELPER;
    if (__atomic_compare_exchange_n(&p->state[t], &s, g << 3 | MXC_PT_DROPPED, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      p->n_dropped++;
      mxc_pool_run_caller(p, t);
    } else { /* DONE: the helper's scratch pointer was published before the state */
      p->n_done++;
      mxc_pool_copy(p, t, mxc_pool_scratch_of(p, __atomic_load_n(&p->scratch, __ATOMIC_ACQUIRE), t),
                    1);
    }
  }
  __atomic_store_n(&p->owner, 0, __ATOMIC_RELEASE);
  return 1;
}

/* Wait until the helper has left any block it is still running (a dropped one). */
static inline void mxc_pool_quiesce(mxc_pool_t *p) {
  struct timespec t0, t1;
  if (!__atomic_load_n(&p->busy, __ATOMIC_SEQ_CST)) return;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  __atomic_store_n(&p->quiescing, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&p->busy, __ATOMIC_SEQ_CST))
    mxc_pool_futex(&p->busy, FUTEX_WAIT_PRIVATE, 1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  __atomic_add_fetch(&p->n_waits, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&p->wait_ns, (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + t1.tv_nsec - t0.tv_nsec,
                     __ATOMIC_RELAXED);
}

#ifdef MXC_POOL_IMPL
#include <pthread.h>

/* the helper's blocks of generation g, from the back */
static void mxc_pool_help(mxc_pool_t *p, uint32_t g) {
  mxc_pool_t job;
  int t;
  memcpy(&job, p, sizeof(job));    /* fields stay g's while a block of g can still be claimed */
  if (job.gen != g || job.ntask < 2 || job.ntask > MXC_POOL_MAXTASK) return;
  {
    const size_t need = (size_t)job.ntask * (size_t)job.bs * (size_t)(job.bycol ? job.m : job.n);
    if (need > p->scratch_cap) {  /* only the helper touches the buffer; g's caller reads
                                     only blocks DONE after this */
      float *s = (float *)malloc(sizeof(float) * need);
      if (s == NULL) return;
      free(p->scratch);
      __atomic_store_n(&p->scratch, s, __ATOMIC_RELEASE);
      p->scratch_cap = need;
    }
  }
  for (t = job.ntask - 1; t >= 0; t--) {
    uint32_t s = g << 3 | MXC_PT_FREE;
    int lo, len;
    const float *a, *b;
    int64_t coff;
    float *out = mxc_pool_scratch_of(&job, p->scratch, t);
    if (!__atomic_compare_exchange_n(&p->state[t], &s, g << 3 | MXC_PT_HELPER, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return;
    mxc_pool_block(&job, t, &lo, &len, &a, &b, &coff);
    if (job.beta != 0.0f) mxc_pool_copy(&job, t, out, 0);
    job.fn(101, job.ta, job.tb, job.bycol ? job.m : len, job.bycol ? len : job.n, job.k,
           job.alpha, a, job.lda, b, job.ldb, job.beta, out, job.bycol ? len : job.n);
    s = g << 3 | MXC_PT_HELPER;
    if (!__atomic_compare_exchange_n(&p->state[t], &s, g << 3 | MXC_PT_DONE, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return; /* dropped: the caller computed it */
  }
}

/* Between jobs the helper sleeps on the futex: staying runnable (yielding) for 2 ms after each
 * job halved the blocks it took beside 4 busy processes (its CPU time went to waiting). */
static void *mxc_pool_main(void *arg) {
  mxc_pool_t *p = (mxc_pool_t *)arg;
  uint32_t seen = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
  for (;;) {
    const uint32_t g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
    if (g == seen) {
      __atomic_store_n(&p->sleeping, 1, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(&p->gen, __ATOMIC_SEQ_CST) == g)
        mxc_pool_futex(&p->gen, FUTEX_WAIT_PRIVATE, g);
      __atomic_store_n(&p->sleeping, 0, __ATOMIC_SEQ_CST);
      continue;
    }
    seen = g;
    __atomic_store_n(&p->busy, 1, __ATOMIC_SEQ_CST);
    mxc_pool_help(p, g);
    __atomic_store_n(&p->busy, 0, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->quiescing, __ATOMIC_SEQ_CST)) {
      __atomic_store_n(&p->quiescing, 0, __ATOMIC_SEQ_CST);
      mxc_pool_futex(&p->busy, FUTEX_WAKE_PRIVATE, 64);
    }
  }
  return NULL;
}

/* start the helper (once per process); 0 on success */
static int mxc_pool_start(mxc_pool_t *p) {
  pthread_t th;
  pthread_attr_t at;
  int rc;
  if (p->alive) return 0;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  rc = pthread_create(&th, &at, mxc_pool_main, p);
  pthread_attr_destroy(&at);
  if (rc == 0) p->alive = 1;
  return rc;
}
#endif
#endif
