/* dmlc RecordIO framing, a prefetching reader thread and the writer's encoder.
 *
 * File format (little endian, as written by MXNet 1.x / dmlc-core):
 *   record := part+ ; part := [u32 magic 0xced7230a][u32 (cflag << 29) | len][len bytes][pad to 4]
 * A payload that contains the magic word at a 4-byte aligned offset is cut there: the magic is
 * dropped and the pieces become parts with cflag 1 (first), 2 (middle), 3 (last); cflag 0 is a
 * record in one part.  The reader puts the magic back between the pieces.
 *
 * Everything here runs without the GIL and never calls into Python: the prefetch thread is a plain
 * pthread, so it can be stopped and joined from a destructor, and it does not keep the process alive.
 * Header-only (static functions) because setup.py compiles one .pyx per extension.
 */
#ifndef MXC_RECORDIO_RIO_H_
#define MXC_RECORDIO_RIO_H_

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define RIO_MAGIC 0xced7230aU
#define RIO_LEN_MASK ((1U << 29) - 1U)
#define RIO_NSLOT 4                 /* batches in flight: one held by the reader, three ahead */
#define RIO_MAX_RECS 16384          /* records per batch, bounds the per-batch record table */
/* Single-part records at least this large are not copied through the batch buffer: the producer
 * only checks their header and asks the kernel to read them ahead; the reader then reads the
 * payload straight into the bytes object it returns (one copy instead of two). */
#define RIO_DIRECT_MIN (256 * 1024)

/* rio_frame results */
enum { RIO_OK = 0, RIO_MORE = 1, RIO_BAD_MAGIC = 2, RIO_BAD_FLAG = 3 };
/* batch / read status */
enum { RIO_ST_MORE = 0, RIO_ST_EOF = 1, RIO_ST_ERR = 2 };
/* error kinds reported to Python */
enum {
  RIO_E_NONE = 0, RIO_E_MAGIC = 1, RIO_E_FLAG = 2, RIO_E_TRUNC_HEADER = 3,
  RIO_E_TRUNC_PAYLOAD = 4, RIO_E_IO = 5, RIO_E_NOMEM = 6
};

typedef struct {
  int kind;       /* RIO_E_* */
  int64_t off;    /* file offset of the offending header (or of the failed read) */
  int64_t a;      /* MAGIC: the word found; FLAG: the cflag; TRUNC_*: bytes needed from off */
  int64_t b;      /* TRUNC_*: bytes present from off to the end of the file */
  int err_no;     /* IO: errno */
} rio_err;

static inline uint32_t rio_ld32(const unsigned char *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void rio_st32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}
static inline int64_t rio_align4(int64_t n) { return (n + 3) & ~(int64_t)3; }

/* Look at the record whose first header starts at buf[0], `avail` bytes being present.
 * RIO_OK: complete; the payload is reassembled in place at buf + 8 (length *plen) and the record
 *   occupies *consumed bytes of the file.
 * RIO_MORE: incomplete; at least *need bytes (counted from buf) are required to make progress.
 * RIO_BAD_MAGIC / RIO_BAD_FLAG: the header at buf + *bad_at is wrong (*bad_word: what was there).
 * Nothing is modified unless the whole record is present, so a caller may read more and retry. */
static int rio_frame(unsigned char *buf, int64_t avail, int64_t *consumed, int64_t *plen,
                     int64_t *need, int64_t *bad_at, int64_t *bad_word) {
  int64_t p = 0, end;
  int first = 1;
  for (;;) {
    if (avail - p < 8) { *need = p + 8; return RIO_MORE; }
    uint32_t magic = rio_ld32(buf + p);
    if (magic != RIO_MAGIC) { *bad_at = p; *bad_word = magic; return RIO_BAD_MAGIC; }
    uint32_t lrec = rio_ld32(buf + p + 4);
    uint32_t cflag = lrec >> 29, len = lrec & RIO_LEN_MASK;
    /* a record starts with cflag 0 or 1; a continuation carries 2 or 3 */
    if (first ? (cflag >= 2) : (cflag <= 1)) { *bad_at = p; *bad_word = cflag; return RIO_BAD_FLAG; }
    end = p + 8 + rio_align4(len);
    if (cflag == 0 || cflag == 3) {
      if (avail < end) { *need = end; return RIO_MORE; }
      break;
    }
    if (avail < end + 8) { *need = end + 8; return RIO_MORE; }
    p = end;
    first = 0;
  }
  /* all parts present: join them, putting the magic back between pieces.  The write cursor w never
   * passes the header being read (each header is 8 bytes, the re-inserted magic only 4), and each
   * length is read before the move that may overwrite it. */
  int64_t q = 0, w = 8;
  for (;;) {
    uint32_t lrec = rio_ld32(buf + q + 4);
    uint32_t cflag = lrec >> 29, len = lrec & RIO_LEN_MASK;
    if (q == 0) {
      w = 8 + (int64_t)len;
    } else {
      rio_st32(buf + w, RIO_MAGIC);
      memmove(buf + w + 4, buf + q + 8, len);
      w += 4 + (int64_t)len;
    }
    q += 8 + rio_align4(len);
    if (cflag == 0 || cflag == 3) break;
  }
  *consumed = end;
  *plen = w - 8;
  return RIO_OK;
}

/* pread until n bytes or end of file; returns bytes read or -1 (errno set). */
static int64_t rio_pread_full(int fd, unsigned char *dst, int64_t n, int64_t off) {
  int64_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, dst + got, (size_t)(n - got), (off_t)(off + got));
    if (r < 0) { if (errno == EINTR) continue; return -1; }
    if (r == 0) break;
    got += r;
  }
  return got;
}

static int64_t rio_file_size(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return -1;
  return (int64_t)st.st_size;
}

static int rio_reserve(unsigned char **buf, int64_t *cap, int64_t want) {
  if (want <= *cap) return 0;
  int64_t ncap = *cap > 0 ? *cap : 4096;
  while (ncap < want) ncap *= 2;
  unsigned char *nb = (unsigned char *)realloc(*buf, (size_t)ncap);
  if (!nb) return -1;
  *buf = nb;
  *cap = ncap;
  return 0;
}

/* Turn an incomplete record at file offset `off` (with `have` bytes before the end of the file) into
 * the matching truncation error. */
static void rio_trunc_err(rio_err *e, int64_t off, int64_t need, int64_t have) {
  e->kind = have < 8 ? RIO_E_TRUNC_HEADER : RIO_E_TRUNC_PAYLOAD;
  e->off = off; e->a = need; e->b = have;
}

static void rio_frame_err(rio_err *e, int r, int64_t off, int64_t bad_at, int64_t bad_word) {
  e->kind = r == RIO_BAD_MAGIC ? RIO_E_MAGIC : RIO_E_FLAG;
  e->off = off + bad_at; e->a = bad_word;
}

/* ---------------------------------------------------------------- synchronous read at an offset */

/* Read the record at `pos` into *buf (grown as needed).  `hint` is how many bytes to read first (the
 * distance to the next known record start), 0 when unknown.  Returns RIO_ST_OK-like 0 with the
 * payload at *buf + 8, RIO_ST_EOF when pos is exactly the end of the file, RIO_ST_ERR otherwise. */
static int rio_read_at(int fd, int64_t pos, int64_t hint, unsigned char **buf, int64_t *cap,
                       int64_t *plen, int64_t *next, rio_err *e) {
  int64_t filled = 0, amt = hint > 8 ? hint : 4096, consumed, need, bad_at, bad_word;
  int eof = 0;
  if (amt > (1 << 22)) amt = 1 << 22;   /* a sparse index must not make us read megabytes ahead */
  for (;;) {
    if (rio_reserve(buf, cap, filled + amt) != 0) { e->kind = RIO_E_NOMEM; e->off = pos; e->a = filled + amt; return RIO_ST_ERR; }
    int64_t got = rio_pread_full(fd, *buf + filled, amt, pos + filled);
    if (got < 0) { e->kind = RIO_E_IO; e->off = pos + filled; e->err_no = errno; return RIO_ST_ERR; }
    if (got < amt) eof = 1;
    filled += got;
    int r = rio_frame(*buf, filled, &consumed, plen, &need, &bad_at, &bad_word);
    if (r == RIO_OK) { *next = pos + consumed; return 0; }
    if (r != RIO_MORE) { rio_frame_err(e, r, pos, bad_at, bad_word); return RIO_ST_ERR; }
    if (eof) {
      if (filled == 0) return RIO_ST_EOF;
      rio_trunc_err(e, pos, need, filled);
      return RIO_ST_ERR;
    }
    /* a corrupt length must not become a huge allocation: check it against the file first */
    if (need - filled > (1 << 20)) {
      int64_t size = rio_file_size(fd);
      if (size >= 0 && pos + need > size) { rio_trunc_err(e, pos, need, size - pos); return RIO_ST_ERR; }
    }
    amt = need - filled;
  }
}

/* ---------------------------------------------------------------- reading through a memory map
 *
 * A read-only shared mapping of the file lets a record go from the page cache into its bytes object
 * in one copy, with no system call per record.  The danger of a mapping is a file truncated under
 * it: touching a page past the new end raises SIGBUS.  Every access to mapped bytes therefore goes
 * through rio_map_peek / rio_map_copy, which arm a per-thread jump buffer; rio_bus_handler jumps
 * back to it, and the access reports -1 instead of killing the process.  A SIGBUS outside those
 * accesses goes to the handler that was installed before (or to the default action). */

/* The default TLS model: initial-exec would save a call per access but can make dlopen of this
 * module fail when the process's static TLS space is used up.  The handler reads the variable
 * only in a thread that armed it before (already allocated), or on a fault that is not ours. */
static __thread sigjmp_buf *rio_bus_jb;
static struct sigaction rio_bus_prev;
static int rio_bus_ready;

#define RIO_BARRIER() __asm__ __volatile__("" ::: "memory")

static void rio_bus_handler(int sig, siginfo_t *si, void *ctx) {
  sigjmp_buf *jb = rio_bus_jb;
  if (jb != NULL) { rio_bus_jb = NULL; siglongjmp(*jb, 1); }
  if (rio_bus_prev.sa_flags & SA_SIGINFO) {
    rio_bus_prev.sa_sigaction(sig, si, ctx);
    return;
  }
  if (rio_bus_prev.sa_handler != SIG_DFL && rio_bus_prev.sa_handler != SIG_IGN) {
    rio_bus_prev.sa_handler(sig);
    return;
  }
  /* not ours and nobody else's: restore the default action; returning re-executes the faulting
   * access, which then ends the process as it would have without us */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGBUS, &dfl, NULL);
}

/* Install the handler once per process (the caller holds the GIL).  0 or -1 with errno set. */
static int rio_bus_install(void) {
  if (rio_bus_ready) return 0;
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_sigaction = rio_bus_handler;
  /* SA_NODEFER: jumping out of the handler leaves SIGBUS unblocked without saving the signal mask
   * in every jump buffer (sigsetjmp(jb, 0) costs no system call) */
  act.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&act.sa_mask);
  if (sigaction(SIGBUS, &act, &rio_bus_prev) != 0) return -1;
  rio_bus_ready = 1;
  return 0;
}

/* The single-part record whose header is at map + off (msize bytes mapped): 0 when it lies whole in
 * the mapping (*len: payload length, *end: offset after its padding); 1 when it is anything else
 * (split, corrupt, past the mapping: the pread path reads it and names the error); -1 when the page
 * is gone (the file shrank). */
static int rio_map_peek(const unsigned char *map, int64_t msize, int64_t off, int64_t *len,
                        int64_t *end) {
  sigjmp_buf jb;
  uint32_t magic, lrec;
  if (off < 0 || off > msize - 8) return 1;
  if (sigsetjmp(jb, 0)) return -1;
  rio_bus_jb = &jb;
  RIO_BARRIER();
  magic = rio_ld32(map + off);
  lrec = rio_ld32(map + off + 4);
  RIO_BARRIER();
  rio_bus_jb = NULL;
  if (magic != RIO_MAGIC || (lrec >> 29) != 0) return 1;
  *len = lrec & RIO_LEN_MASK;
  *end = off + 8 + rio_align4(*len);
  return *end <= msize ? 0 : 1;
}

/* memcpy from mapped bytes: 0, or -1 when a page is gone (dst then holds garbage). */
static int rio_map_copy(unsigned char *dst, const unsigned char *src, int64_t n) {
  sigjmp_buf jb;
  if (sigsetjmp(jb, 0)) return -1;
  rio_bus_jb = &jb;
  RIO_BARRIER();
  memcpy(dst, src, (size_t)n);
  RIO_BARRIER();
  rio_bus_jb = NULL;
  return 0;
}

/* Ask the CPU for the lines of the next RIO_PREFETCH bytes after a record just copied out of the
 * mapping (only those not asked for after the previous record), so that the next read() finds its
 * record in cache instead of waiting for memory: the hardware prefetcher loses the stream in the
 * Python code between two reads.  Process CPU per 1 KiB record, best of 6 alternated on the 2-core
 * dev machine: file read back from disk 133 ns without, 101 with 2 KiB ahead (the reading thread
 * 114 -> 94, the bytes-copy floor), freshly written file 194 -> 161; 4 and 8 KiB ahead no better.
 * A prefetch never faults, past the end of the mapping or not. */
#define RIO_PREFETCH 2048
static inline void rio_prefetch_after(const unsigned char *src, int64_t n) {
  for (int64_t o = n > RIO_PREFETCH ? n : RIO_PREFETCH; o < n + RIO_PREFETCH; o += 64)
    __builtin_prefetch(src + o);
}

/* Map `size` bytes of fd read-only; NULL when the file cannot be mapped (some FUSE and special
 * files: the reader then reads through the prefetch thread). */
static const unsigned char *rio_map_open(int fd, int64_t size) {
  if (size <= 0) return NULL;
  void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? NULL : (const unsigned char *)p;
}

static void rio_map_close(const unsigned char *map, int64_t size) {
  if (map != NULL) munmap((void *)map, (size_t)size);
}

static int64_t rio_page_floor(int64_t off) {
  int64_t pg = (int64_t)sysconf(_SC_PAGESIZE);
  return off & ~(pg - 1);
}

/* Make [from, to) of the mapping resident and mapped (reading from disk if needed) so that the
 * copies that follow, made with the GIL held, neither wait for the disk nor take a page fault per
 * 64 KiB; ask the kernel to read [to, ahead) in the background; drop the page-table entries of
 * [forget_lo, forget_hi) so that a long sequential read does not grow the process's resident size
 * to the file's (the pages stay in the page cache).  Errors are ignored: the guarded copy is what
 * is safe. */
static void rio_map_advise(const unsigned char *map, int64_t msize, int64_t from, int64_t to,
                           int64_t ahead, int64_t forget_lo, int64_t forget_hi) {
  int64_t a = rio_page_floor(from);
  if (to > msize) to = msize;
  if (ahead > msize) ahead = msize;
  if (to > a) {
#ifdef MADV_POPULATE_READ
    if (madvise((void *)(map + a), (size_t)(to - a), MADV_POPULATE_READ) != 0)
#endif
      madvise((void *)(map + a), (size_t)(to - a), MADV_WILLNEED);
  }
  int64_t b = rio_page_floor(to);
  if (ahead > b) madvise((void *)(map + b), (size_t)(ahead - b), MADV_WILLNEED);
  forget_lo = rio_page_floor(forget_lo);
  forget_hi = rio_page_floor(forget_hi);
  if (forget_hi > forget_lo) madvise((void *)(map + forget_lo), (size_t)(forget_hi - forget_lo), MADV_DONTNEED);
}

/* The page-table work of a sequential read (making the next window resident, dropping what lies
 * behind) costs about as much CPU as the copies themselves; a helper thread does it while the
 * reader copies.  It only ever advises: a page it has not reached yet is faulted in by the copy.
 * Requests replace each other (only the newest matters); rio_adv_quiesce returns once the thread
 * no longer touches the mapping, and must precede every munmap. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t th;
  int started, stop, pending, working;
  const unsigned char *map;
  int64_t msize, from, to, ahead, flo, fhi;
} rio_advisor;

static void *rio_adv_main(void *arg) {
  rio_advisor *a = (rio_advisor *)arg;
  pthread_mutex_lock(&a->mu);
  for (;;) {
    while (!a->stop && !a->pending) pthread_cond_wait(&a->cv, &a->mu);
    if (a->stop) break;
    const unsigned char *map = a->map;
    int64_t msize = a->msize, from = a->from, to = a->to, ahead = a->ahead, flo = a->flo, fhi = a->fhi;
    a->pending = 0;
    a->working = 1;
    pthread_mutex_unlock(&a->mu);
    rio_map_advise(map, msize, from, to, ahead, flo, fhi);
    pthread_mutex_lock(&a->mu);
    a->working = 0;
    pthread_cond_broadcast(&a->cv);
  }
  pthread_mutex_unlock(&a->mu);
  return NULL;
}

static rio_advisor *rio_adv_new(void) {
  rio_advisor *a = (rio_advisor *)calloc(1, sizeof(rio_advisor));
  if (!a) return NULL;
  pthread_mutex_init(&a->mu, NULL);
  pthread_cond_init(&a->cv, NULL);
  return a;
}

/* Hand the thread a request (starting it the first time); 0, or an errno when it cannot start:
 * the caller then advises itself. */
static int rio_adv_post(rio_advisor *a, const unsigned char *map, int64_t msize, int64_t from,
                        int64_t to, int64_t ahead, int64_t flo, int64_t fhi) {
  int rc = 0;
  pthread_mutex_lock(&a->mu);
  if (!a->started) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    rc = pthread_create(&a->th, &attr, rio_adv_main, a);
    pthread_attr_destroy(&attr);
    if (rc == 0) a->started = 1;
  }
  if (rc == 0) {
    /* a request not yet taken is replaced, but the range it was to forget is kept */
    if (a->pending && a->map == map && a->flo < flo) flo = a->flo;
    a->map = map; a->msize = msize; a->from = from; a->to = to; a->ahead = ahead;
    a->flo = flo; a->fhi = fhi;
    a->pending = 1;
    pthread_cond_broadcast(&a->cv);
  }
  pthread_mutex_unlock(&a->mu);
  return rc;
}

static void rio_adv_quiesce(rio_advisor *a) {
  if (!a) return;
  pthread_mutex_lock(&a->mu);
  a->pending = 0;
  while (a->working) pthread_cond_wait(&a->cv, &a->mu);
  pthread_mutex_unlock(&a->mu);
}

/* Stop and join the thread, free it.  `foreign`: in a forked child the thread does not exist and
 * the mutex may have been copied locked, so only memory is released. */
static void rio_adv_free(rio_advisor *a, int foreign) {
  if (!a) return;
  if (!foreign) {
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    if (a->started) pthread_join(a->th, NULL);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
  }
  free(a);
}

/* ---------------------------------------------------------------- batches and the prefetch thread */

typedef struct {
  unsigned char *buf;
  int64_t cap;
  int64_t *recs;       /* per record: payload offset in buf, payload length, file offset after it */
  int64_t nrec, rcap;
  int64_t start;       /* file offset of buf[0] */
  int64_t next;        /* file offset where the following batch starts */
  int status;          /* RIO_ST_MORE: more batches follow; RIO_ST_EOF; RIO_ST_ERR (see err) */
  rio_err err;
} rio_batch;

static int rio_batch_push(rio_batch *b, int64_t off, int64_t len, int64_t end) {
  if (b->nrec == b->rcap) {
    int64_t nc = b->rcap ? b->rcap * 2 : 256;
    int64_t *nr = (int64_t *)realloc(b->recs, (size_t)nc * 3 * sizeof(int64_t));
    if (!nr) return -1;
    b->recs = nr;
    b->rcap = nc;
  }
  b->recs[3 * b->nrec] = off;
  b->recs[3 * b->nrec + 1] = len;
  b->recs[3 * b->nrec + 2] = end;
  b->nrec++;
  return 0;
}

/* A run of large single-part records starting at file offset pos (whose second header word is
 * lrec): record only where they are (payload offset -1 - file offset), ask the kernel to read them
 * ahead, and stop at the first record that is small, split, or not fully present. */
static void rio_fill_direct(int fd, rio_batch *b, int64_t pos, uint32_t lrec) {
  int64_t size = rio_file_size(fd), q = pos, queued = 0;
  unsigned char h[8];
  for (;;) {
    int64_t len = lrec & RIO_LEN_MASK, end = q + 8 + rio_align4(len);
    if (size >= 0 && end > size) {
      if (b->nrec == 0) {
        rio_trunc_err(&b->err, q, end - q, size - q);
        b->status = RIO_ST_ERR;
      }
      break;   /* otherwise the next batch meets (and reports) it */
    }
    if (rio_batch_push(b, -1 - (q + 8), len, end) != 0) break;
#ifdef POSIX_FADV_WILLNEED
    posix_fadvise(fd, (off_t)(q + 8), (off_t)len, POSIX_FADV_WILLNEED);
#endif
    q = end;
    queued += len;
    if (b->nrec >= 64 || queued >= (64 << 20)) break;
    if (rio_pread_full(fd, h, 8, q) != 8) break;
    lrec = rio_ld32(h + 4);
    if (rio_ld32(h) != RIO_MAGIC || (lrec >> 29) != 0 || (int64_t)(lrec & RIO_LEN_MASK) < RIO_DIRECT_MIN) break;
  }
  b->next = q;
}

/* Fill batch b with the records starting at file offset pos.  *big is the producer's sticky guess
 * that records are large relative to the buffer: then reads go header to header (the rest of this
 * record plus the next header) so no bytes are read twice; otherwise the buffer is filled whole. */
static void rio_fill(int fd, rio_batch *b, int64_t pos, int64_t chunk, int *big) {
  int64_t filled = 0, p = 0, consumed, plen, need = 8, bad_at, bad_word;
  int eof = 0, r;
  b->start = pos; b->nrec = 0; b->status = RIO_ST_MORE; b->next = pos;
  b->err.kind = RIO_E_NONE;
  if (rio_reserve(&b->buf, &b->cap, chunk) != 0) goto nomem;
  for (;;) {
    while ((r = rio_frame(b->buf + p, filled - p, &consumed, &plen, &need, &bad_at, &bad_word)) == RIO_OK) {
      if (rio_batch_push(b, p + 8, plen, pos + p + consumed) != 0) goto nomem;
      p += consumed;
      *big = consumed > b->cap / 8;
      if (b->nrec >= RIO_MAX_RECS) { b->next = pos + p; return; }
    }
    if (r != RIO_MORE) {
      rio_frame_err(&b->err, r, pos + p, bad_at, bad_word);
      b->status = RIO_ST_ERR; b->next = pos + p;
      return;
    }
    if (eof) {
      b->next = pos + p;
      if (filled == p) { b->status = RIO_ST_EOF; return; }
      rio_trunc_err(&b->err, pos + p, need, filled - p);
      b->status = RIO_ST_ERR;
      return;
    }
    if (filled - p >= 8) {
      uint32_t lrec = rio_ld32(b->buf + p + 4);
      if ((lrec >> 29) == 0 && (int64_t)(lrec & RIO_LEN_MASK) >= RIO_DIRECT_MIN) {
        if (b->nrec > 0) { b->next = pos + p; return; }   /* they get a batch of their own */
        rio_fill_direct(fd, b, pos, lrec);
        *big = 1;
        return;
      }
    }
    int64_t want = p + need;
    if (want > b->cap) {
      if (b->nrec > 0) { b->next = pos + p; return; }   /* the next batch starts with this record */
      int64_t size = rio_file_size(fd);
      if (size >= 0 && pos + want > size) {
        rio_trunc_err(&b->err, pos + p, need, size - pos - p);
        b->status = RIO_ST_ERR; b->next = pos + p;
        return;
      }
      if (rio_reserve(&b->buf, &b->cap, want + 8) != 0) goto nomem;
    }
    int64_t amt;
    if (*big || need > b->cap / 8) {
      int64_t until = want + 8 < b->cap ? want + 8 : b->cap;
      amt = until - filled;
    } else {
      amt = b->cap - filled;
    }
    int64_t got = rio_pread_full(fd, b->buf + filled, amt, pos + filled);
    if (got < 0) {
      b->err.kind = RIO_E_IO; b->err.off = pos + filled; b->err.err_no = errno;
      b->status = RIO_ST_ERR; b->next = pos + p;
      return;
    }
    if (got < amt) eof = 1;
    filled += got;
  }
nomem:
  b->err.kind = RIO_E_NOMEM; b->err.off = pos + p; b->err.a = need;
  b->status = RIO_ST_ERR; b->next = pos + p;
}

typedef struct {
  int fd;
  int64_t chunk;
  pthread_mutex_t mu;
  pthread_cond_t cv_prod, cv_cons;
  pthread_t th;
  int started, stop;
  uint64_t gen, done_gen;     /* producer works while done_gen != gen */
  int64_t gen_pos;            /* where generation `gen` starts reading */
  rio_batch slots[RIO_NSLOT];
  int freel[RIO_NSLOT], nfree;
  int ready[RIO_NSLOT], rhead, nready;
} rio_prefetch;

static void *rio_producer(void *arg) {
  rio_prefetch *s = (rio_prefetch *)arg;
  uint64_t mygen = 0;
  int64_t pos = 0;
  int big = 0;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->stop && (s->done_gen == s->gen || s->nfree == 0)) pthread_cond_wait(&s->cv_prod, &s->mu);
    if (s->stop) break;
    if (s->gen != mygen) { mygen = s->gen; pos = s->gen_pos; }
    int slot = s->freel[--s->nfree];
    pthread_mutex_unlock(&s->mu);
    rio_fill(s->fd, &s->slots[slot], pos, s->chunk, &big);
    pthread_mutex_lock(&s->mu);
    if (s->gen != mygen) {            /* the reader seeked meanwhile: drop this batch */
      s->freel[s->nfree++] = slot;
      continue;
    }
    s->ready[(s->rhead + s->nready) % RIO_NSLOT] = slot;
    s->nready++;
    if (s->slots[slot].status != RIO_ST_MORE) s->done_gen = mygen;
    else pos = s->slots[slot].next;
    pthread_cond_signal(&s->cv_cons);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Allocate the shared state; the thread starts with rio_pf_start. */
static rio_prefetch *rio_pf_new(int fd, int64_t chunk) {
  rio_prefetch *s = (rio_prefetch *)calloc(1, sizeof(rio_prefetch));
  if (!s) return NULL;
  s->fd = fd;
  s->chunk = chunk;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv_prod, NULL);
  pthread_cond_init(&s->cv_cons, NULL);
  for (int i = 0; i < RIO_NSLOT; i++) s->freel[i] = i;
  s->nfree = RIO_NSLOT;
  s->done_gen = s->gen = 0;
  return s;
}

/* Start (or restart) reading at pos.  `held` is the slot the reader gives back (-1 for none). */
static int rio_pf_restart(rio_prefetch *s, int64_t pos, int held) {
  pthread_mutex_lock(&s->mu);
  s->gen++;
  s->gen_pos = pos;
  while (s->nready > 0) {
    s->freel[s->nfree++] = s->ready[s->rhead];
    s->rhead = (s->rhead + 1) % RIO_NSLOT;
    s->nready--;
  }
  if (held >= 0) s->freel[s->nfree++] = held;
  int rc = 0;
  if (!s->started) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    rc = pthread_create(&s->th, &attr, rio_producer, s);
    pthread_attr_destroy(&attr);
    if (rc == 0) s->started = 1;
  }
  pthread_cond_signal(&s->cv_prod);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

/* Hand back `held` (-1 for none) and wait for the next batch; returns its slot. */
static int rio_pf_next(rio_prefetch *s, int held) {
  pthread_mutex_lock(&s->mu);
  if (held >= 0) { s->freel[s->nfree++] = held; pthread_cond_signal(&s->cv_prod); }
  while (s->nready == 0) pthread_cond_wait(&s->cv_cons, &s->mu);
  int slot = s->ready[s->rhead];
  s->rhead = (s->rhead + 1) % RIO_NSLOT;
  s->nready--;
  pthread_mutex_unlock(&s->mu);
  return slot;
}

/* Stop and join the thread, free everything.  `foreign` is set in a forked child: the thread does
 * not exist there and the mutex may have been copied locked, so only memory is released. */
static void rio_pf_free(rio_prefetch *s, int foreign) {
  if (!s) return;
  if (!foreign) {
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv_prod);
    pthread_mutex_unlock(&s->mu);
    if (s->started) pthread_join(s->th, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv_prod);
    pthread_cond_destroy(&s->cv_cons);
  }
  for (int i = 0; i < RIO_NSLOT; i++) { free(s->slots[i].buf); free(s->slots[i].recs); }
  free(s);
}

/* ---------------------------------------------------------------- index scan */

/* Walk the file from offset 0 and store each record's start offset into *offs (grown as needed).
 * Returns RIO_ST_EOF on a clean end, RIO_ST_ERR with e set otherwise.  Reads only what it needs
 * for headers: payloads larger than the window are skipped, not read. */
static int rio_scan(int fd, int64_t **offs, int64_t *n, int64_t *ncap, rio_err *e) {
  const int64_t W = 1 << 20;
  unsigned char *win = (unsigned char *)malloc((size_t)W);
  int64_t wstart = 0, wlen = 0, pos = 0, size = rio_file_size(fd);
  if (!win) { e->kind = RIO_E_NOMEM; e->off = 0; e->a = W; return RIO_ST_ERR; }
  if (size < 0) { e->kind = RIO_E_IO; e->off = 0; e->err_no = errno; free(win); return RIO_ST_ERR; }
  *n = 0;
  for (;;) {
    if (pos == size) { free(win); return RIO_ST_EOF; }
    int64_t rec = pos;
    int first = 1;
    for (;;) {
      if (size - pos < 8) { rio_trunc_err(e, rec, pos - rec + 8, size - rec); free(win); return RIO_ST_ERR; }
      if (pos < wstart || pos + 8 > wstart + wlen) {
        int64_t got = rio_pread_full(fd, win, W, pos);
        if (got < 0) { e->kind = RIO_E_IO; e->off = pos; e->err_no = errno; free(win); return RIO_ST_ERR; }
        wstart = pos; wlen = got;
        if (wlen < 8) { rio_trunc_err(e, rec, pos - rec + 8, pos + wlen - rec); free(win); return RIO_ST_ERR; }
      }
      const unsigned char *h = win + (pos - wstart);
      uint32_t magic = rio_ld32(h), lrec = rio_ld32(h + 4);
      uint32_t cflag = lrec >> 29, len = lrec & RIO_LEN_MASK;
      if (magic != RIO_MAGIC) { e->kind = RIO_E_MAGIC; e->off = pos; e->a = magic; free(win); return RIO_ST_ERR; }
      if (first ? (cflag >= 2) : (cflag <= 1)) { e->kind = RIO_E_FLAG; e->off = pos; e->a = cflag; free(win); return RIO_ST_ERR; }
      int64_t end = pos + 8 + rio_align4(len);
      if (end > size) { rio_trunc_err(e, rec, end - rec, size - rec); free(win); return RIO_ST_ERR; }
      pos = end;
      first = 0;
      if (cflag == 0 || cflag == 3) break;
    }
    if (*n == *ncap) {
      int64_t nc = *ncap ? *ncap * 2 : 1024;
      int64_t *no = (int64_t *)realloc(*offs, (size_t)nc * sizeof(int64_t));
      if (!no) { e->kind = RIO_E_NOMEM; e->off = rec; e->a = nc; free(win); return RIO_ST_ERR; }
      *offs = no; *ncap = nc;
    }
    (*offs)[(*n)++] = rec;
  }
}

/* ---------------------------------------------------------------- writer */

/* Bytes rio_encode produces for a payload of len bytes. */
static int64_t rio_encoded_size(const unsigned char *data, int64_t len) {
  int64_t lower = len & ~(int64_t)3, nsplit = 0;
  for (int64_t i = 0; i < lower; i += 4)
    if (rio_ld32(data + i) == RIO_MAGIC) nsplit++;
  /* each cut drops 4 magic bytes and adds an 8-byte header */
  return 8 + rio_align4(len) + 4 * nsplit;
}

/* Frame one record exactly as dmlc::RecordIOWriter::WriteRecord does; returns bytes written. */
static int64_t rio_encode(const unsigned char *data, int64_t len, unsigned char *out) {
  int64_t lower = len & ~(int64_t)3, dptr = 0, o = 0;
  for (int64_t i = 0; i < lower; i += 4) {
    if (rio_ld32(data + i) == RIO_MAGIC) {
      rio_st32(out + o, RIO_MAGIC);
      rio_st32(out + o + 4, ((dptr == 0 ? 1U : 2U) << 29) | (uint32_t)(i - dptr));
      o += 8;
      memcpy(out + o, data + dptr, (size_t)(i - dptr));
      o += i - dptr;
      dptr = i + 4;
    }
  }
  rio_st32(out + o, RIO_MAGIC);
  rio_st32(out + o + 4, ((dptr != 0 ? 3U : 0U) << 29) | (uint32_t)(len - dptr));
  o += 8;
  memcpy(out + o, data + dptr, (size_t)(len - dptr));
  o += len - dptr;
  while (o & 3) out[o++] = 0;
  return o;
}

/* write(2) all of buf; returns 0 or -1 with errno set. */
static int rio_write_all(int fd, const unsigned char *buf, int64_t n) {
  while (n > 0) {
    ssize_t r = write(fd, buf, (size_t)n);
    if (r < 0) { if (errno == EINTR) continue; return -1; }
    buf += r;
    n -= r;
  }
  return 0;
}

#endif  /* MXC_RECORDIO_RIO_H_ */
