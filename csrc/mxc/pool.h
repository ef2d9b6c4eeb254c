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
 * A job is a task function, a put function and a small context, so other kernels can use the
 * same scheme (the Winograd convolution by ranges of samples was tried: no gain measured beside
 * the GEMMs' on CIFAR ResNet-18, whose only Winograd layers are the 8x8 stage).
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
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MXC_POOL_MAXTASK 8
#define MXC_POOL_CTX 192
/* a block's state: generation << 3 | one of these */
enum { MXC_PT_FREE = 0, MXC_PT_CALLER = 1, MXC_PT_HELPER = 2, MXC_PT_DONE = 3, MXC_PT_DROPPED = 4 };
/* mode: 0 off, 1 on, 2 blocked but all blocks on the caller (the tests' reference) */
enum { MXC_POOL_OFF = 0, MXC_POOL_ON = 1, MXC_POOL_INLINE = 2 };

/* A job: ntask blocks. task(ctx, t, NULL) computes block t into the real output (the caller);
 * task(ctx, t, s) computes it into s, len floats (the helper); put(ctx, t, s) copies such a
 * block into the real output (the caller). task returns 0, or -1 when it could not run (no
 * scratch: the helper leaves the block to the caller; a caller's task must not fail). ctx is
 * copied into the job, so a helper still inside a dropped block never reads the caller's
 * stack. */
typedef int (*mxc_pool_task_fn)(const void *ctx, int t, float *s);
typedef void (*mxc_pool_put_fn)(const void *ctx, int t, const float *s);
typedef struct {
  mxc_pool_task_fn task;
  mxc_pool_put_fn put;
  int ntask;
  size_t len;
  union { char bytes[MXC_POOL_CTX]; double align; } ctx;
} mxc_pool_job;

typedef struct {
  int mode;          /* MXC_POOL_*: set by pool.pyx (the watcher, or a test) */
  int alive;         /* a helper thread runs in this process */
  int owner;         /* lock of the one caller that may publish a job */
  uint32_t gen;      /* the current job's generation (the helper's futex word) */
  int busy;          /* the helper is inside a block (mxc_pool_quiesce waits on it) */
  int quiescing;     /* a caller waits for busy to drop */
  int sleeping;      /* the helper waits on the futex (a job must wake it) */
  int caller_cpu;    /* the core the current job's caller published it from */
  float min_mflop;   /* the least work per GEMM block */
  mxc_pool_job job;
  uint32_t state[MXC_POOL_MAXTASK];
  /* the helper's scratch (block t at offset t * job.len) */
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

/* 1 when a job could run now (the pool is on, with a helper or in the tests' inline mode) */
static inline int mxc_pool_usable(const mxc_pool_t *p) {
  const int mode = p ? __atomic_load_n(&p->mode, __ATOMIC_RELAXED) : MXC_POOL_OFF;
  return mode == MXC_POOL_INLINE || (mode == MXC_POOL_ON && p->alive);
}

/* Run a job (the caller's side): 1 when it ran, 0 when the caller should run its work as usual
 * (pool off or owned by another caller, or fewer than 2 blocks). */
static int mxc_pool_run(mxc_pool_t *p, const mxc_pool_job *job) {
  int t, first;
  uint32_t g;
  if (!mxc_pool_usable(p) || job->ntask < 2 || job->ntask > MXC_POOL_MAXTASK) return 0;
  if (__atomic_exchange_n(&p->owner, 1, __ATOMIC_ACQUIRE)) return 0;
  g = p->gen + 1;
  if (g >= (1u << 28)) g = 1;
  memcpy(&p->job, job, sizeof(*job));
  { /* getcpu without sched_getcpu, which needs _GNU_SOURCE before the first system header */
    unsigned cpu = 0;
    p->caller_cpu = syscall(SYS_getcpu, &cpu, NULL, NULL) == 0 ? (int)cpu : -1;
  }
  for (t = 0; t < job->ntask; t++)
    __atomic_store_n(&p->state[t], g << 3 | MXC_PT_FREE, __ATOMIC_RELAXED);
  __atomic_store_n(&p->gen, g, __ATOMIC_SEQ_CST);
  p->n_jobs++;
  if (p->mode == MXC_POOL_ON && __atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST))
    mxc_pool_futex(&p->gen, FUTEX_WAKE_PRIVATE, 1);
  /* the caller's blocks, from the front until one is the helper's */
  for (first = 0; first < job->ntask; first++) {
    uint32_t s = g << 3 | MXC_PT_FREE;
    if (!__atomic_compare_exchange_n(&p->state[first], &s, g << 3 | MXC_PT_CALLER, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      break;
    (void)job->task(job->ctx.bytes, first, NULL);
  }
  /* the rest were claimed by the helper: use what it finished, take back the others */
  for (t = first; t < job->ntask; t++) {
    uint32_t s = g << 3 | MXC_PT_HELPER;
    if (__atomic_compare_exchange_n(&p->state[t], &s, g << 3 | MXC_PT_DROPPED, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      p->n_dropped++;
      (void)job->task(job->ctx.bytes, t, NULL);
    } else { /* DONE: the helper's scratch pointer was published before the state */
      p->n_done++;
      job->put(job->ctx.bytes, t,
               __atomic_load_n(&p->scratch, __ATOMIC_ACQUIRE) + (size_t)t * job->len);
    }
  }
  __atomic_store_n(&p->owner, 0, __ATOMIC_RELEASE);
  return 1;
}

/* ---- float32 GEMM (csrc/mxc/blas.h's mxc_sgemm) ------------------------------------------- */
typedef void (*mxc_pool_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                                  const float *a, int lda, const float *b, int ldb, float beta,
                                  float *c, int ldc);
/* C = alpha op(A) op(B) + beta C, row-major, in blocks of bs columns (bycol) or rows of C */
typedef struct {
  mxc_pool_sgemm_fn fn;
  int ta, tb, m, n, k, lda, ldb, ldc, bycol, bs;
  float alpha, beta;
  const float *a, *b;
  float *c;
} mxc_pool_gemm;

/* Cut C into about np blocks of rows, or of columns when bycol, each a multiple of 16 long
 * (whole vectors and cache lines of C); returns how many blocks that makes. */
static inline int mxc_pool_gemm_split(mxc_pool_gemm *j, int bycol, int np) {
  const int ext = bycol ? j->n : j->m;
  j->bycol = bycol;
  j->bs = ((ext + np - 1) / np + 15) / 16 * 16;
  return (ext + j->bs - 1) / j->bs;
}

/* block t's extent and operands */
static inline void mxc_pool_gemm_block(const mxc_pool_gemm *j, int t, int *rows, int *w,
                                       const float **a, const float **b, float **c) {
  const int lo = t * j->bs, ext = j->bycol ? j->n : j->m, len = ext - lo < j->bs ? ext - lo : j->bs;
  *a = j->a;
  *b = j->b;
  if (j->bycol) {
    *rows = j->m;
    *w = len;
    *b = j->tb == 111 ? j->b + lo : j->b + (int64_t)lo * j->ldb;
    *c = j->c + lo;
  } else {
    *rows = len;
    *w = j->n;
    *a = j->ta == 111 ? j->a + (int64_t)lo * j->lda : j->a + lo;
    *c = j->c + (int64_t)lo * j->ldc;
  }
}

static int mxc_pool_gemm_task(const void *ctx, int t, float *s) {
  const mxc_pool_gemm *j = (const mxc_pool_gemm *)ctx;
  int rows, w, r;
  const float *a, *b;
  float *c;
  mxc_pool_gemm_block(j, t, &rows, &w, &a, &b, &c);
  if (s == NULL) {
    j->fn(101, j->ta, j->tb, rows, w, j->k, j->alpha, a, j->lda, b, j->ldb, j->beta, c, j->ldc);
    return 0;
  }
  if (j->beta != 0.0f) /* the helper only reads C */
    for (r = 0; r < rows; r++)
      memcpy(s + (int64_t)r * w, c + (int64_t)r * j->ldc, sizeof(float) * (size_t)w);
  j->fn(101, j->ta, j->tb, rows, w, j->k, j->alpha, a, j->lda, b, j->ldb, j->beta, s, w);
  return 0;
}

static void mxc_pool_gemm_put(const void *ctx, int t, const float *s) {
  const mxc_pool_gemm *j = (const mxc_pool_gemm *)ctx;
  int rows, w, r;
  const float *a, *b;
  float *c;
  mxc_pool_gemm_block(j, t, &rows, &w, &a, &b, &c);
  for (r = 0; r < rows; r++)
    memcpy(c + (int64_t)r * j->ldc, s + (int64_t)r * w, sizeof(float) * (size_t)w);
}

/* 1 when the pool ran the row-major product g (its split is the pool's own), 0 when the
 * caller should make the plain call */
static int mxc_pool_sgemm(mxc_pool_t *p, const mxc_pool_gemm *g) {
  mxc_pool_job job;
  mxc_pool_gemm *j = (mxc_pool_gemm *)job.ctx.bytes;
  const int m = g->m, n = g->n, ext = n >= m ? n : m;
  int ntask;
  if (!mxc_pool_usable(p) || m <= 0 || n <= 0 || g->k <= 0) return 0;
  ntask = (int)(2.0 * m * n * g->k / (1e6 * p->min_mflop));
  if (ntask > MXC_POOL_MAXTASK) ntask = MXC_POOL_MAXTASK;
  if (ntask > ext / 16) ntask = ext / 16;
  if (ntask < 2) return 0;
  *j = *g;
  job.task = mxc_pool_gemm_task;
  job.put = mxc_pool_gemm_put;
  job.ntask = mxc_pool_gemm_split(j, n >= m, ntask);
  job.len = (size_t)j->bs * (size_t)(j->bycol ? m : n);
  return mxc_pool_run(p, &job);
}

/* Wait until the helper has left any block it is still running (a dropped one). */
static inline void mxc_pool_quiesce(mxc_pool_t *p) {
  struct timespec t0, t1;
  if (!__atomic_load_n(&p->busy, __ATOMIC_SEQ_CST)) return;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* the flag again before each sleep: the helper clears it when it wakes us, and may be inside
   * its next block by the time we look at busy again */
  while (__atomic_load_n(&p->busy, __ATOMIC_SEQ_CST)) {
    __atomic_store_n(&p->quiescing, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->busy, __ATOMIC_SEQ_CST))
      mxc_pool_futex(&p->busy, FUTEX_WAIT_PRIVATE, 1);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  __atomic_add_fetch(&p->n_waits, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&p->wait_ns, (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + t1.tv_nsec - t0.tv_nsec,
                     __ATOMIC_RELAXED);
}

#ifdef MXC_POOL_IMPL
#include <pthread.h>

/* The helper moves to the caller's core (its affinity narrowed to that core) when it finds
 * itself elsewhere. Beside busy processes the two then take turns on one core, the helper
 * running while the caller is descheduled, and the process gets two threads' share of that
 * core; on another core the helper is descheduled at random points of its blocks, and the caller
 * takes most of them back. Loaded CIFAR ResNet-18, samples/s (dropped blocks per run): 4 busy
 * processes, following 181-195 (3-6) against 144-190 (5-120) not following, 142-166 without the
 * pool; 2 busy, 332-358 (18) against 244-342 (61-170), 256-274 without; 1 busy, 350-360,
 * 344-393 and 363-366 (no gain: the caller has a core of its own most of the time). */
static void mxc_pool_follow(mxc_pool_t *p) {
  const int cc = __atomic_load_n(&p->caller_cpu, __ATOMIC_RELAXED);
  if (cc >= 0 && cc < CPU_SETSIZE && sched_getcpu() != cc) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cc, &s);
    (void)sched_setaffinity(0, sizeof(s), &s);
  }
}

/* the helper's blocks of generation g, from the back */
static void mxc_pool_help(mxc_pool_t *p, uint32_t g) {
  mxc_pool_job job;
  int t;
  memcpy(&job, &p->job, sizeof(job)); /* stays g's while a block of g can still be claimed */
  if (__atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) != g || job.ntask < 2 ||
      job.ntask > MXC_POOL_MAXTASK)
    return;
  mxc_pool_follow(p);
  if ((size_t)job.ntask * job.len > p->scratch_cap) { /* g's caller reads only blocks DONE
                                                          after this */
    const size_t need = (size_t)job.ntask * job.len;
    float *s = (float *)malloc(sizeof(float) * need);
    if (s == NULL) return;
    free(p->scratch);
    __atomic_store_n(&p->scratch, s, __ATOMIC_RELEASE);
    p->scratch_cap = need;
  }
  for (t = job.ntask - 1; t >= 0; t--) {
    uint32_t s = g << 3 | MXC_PT_FREE;
    if (!__atomic_compare_exchange_n(&p->state[t], &s, g << 3 | MXC_PT_HELPER, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return;
    if (job.task(job.ctx.bytes, t, p->scratch + (size_t)t * job.len) != 0)
      return; /* left HELPER: the caller takes it back */
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
