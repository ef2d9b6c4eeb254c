/* Fusion of pointwise kernel chains: run several queued kernel calls tile by tile.
 *
 * A chain is consecutive calls of pointwise kernels (out[i] depends only on the inputs at i:
 * unary, binary of equal sizes, scalar, cast, clip, the activations and their gradients) whose
 * tensors all hold the same number of elements n. Unfused, each call streams its arrays through
 * memory once, and an intermediate written by one call is read back from memory by the next
 * once n elements no longer fit in cache. Fused, the chain runs one tile of MXC_CHAIN_TILE
 * elements at a time through every call, so intermediates are read back from L1/L2; tiles are
 * shared among the OpenMP threads.
 *
 * Each call still runs its own kernel on the tile (a copy of the call with data pointers moved
 * to the tile, size set to the tile's length, one thread), so every element goes through the
 * same instructions as unfused: results are bit-identical. That holds as long as two tensors of
 * the chain never overlap except exactly (same first byte, same element size); the caller
 * (KernelSeq, mxc/_core/handle.pyx) checks that when it forms a chain.
 */
#ifndef MXC_TILED_CHAIN_H
#define MXC_TILED_CHAIN_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mxc/opcall.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* 8192 elements: with the 3-6 distinct arrays a chain touches per tile, 100-200 KB of
 * float32, well inside a core's L2 and a multiple of any SIMD width and of 64 (threads never
 * share a cache line of an output). */
#define MXC_CHAIN_TILE ((int64_t)8192)

static inline int64_t mxc_chain_esize(int32_t code) {
  static const int8_t es[12] = {4, 8, 2, 1, 4, 1, 8, 1, 2, 2, 4, 8};
  return (code >= 0 && code < 12) ? es[code] : 0;
}

static inline size_t mxc_chain_call_bytes(const mxc_opcall *c) {
  return sizeof(mxc_opcall) + (size_t)(c->nin + c->nout) * sizeof(mxc_tensor);
}

/* Copies of the m calls for one thread: one thread each, tensors as 1-D, data set per tile. */
static mxc_opcall **mxc_chain_copies(mxc_opcall *const *calls, int m) {
  size_t total = 0;
  for (int k = 0; k < m; ++k) total += mxc_chain_call_bytes(calls[k]);
  char *mem = (char *)malloc(total + (size_t)m * sizeof(mxc_opcall *));
  if (mem == NULL) return NULL;
  mxc_opcall **cp = (mxc_opcall **)mem;
  char *p = mem + (size_t)m * sizeof(mxc_opcall *);
  for (int k = 0; k < m; ++k) {
    size_t b = mxc_chain_call_bytes(calls[k]);
    memcpy(p, calls[k], b);
    mxc_opcall *c = (mxc_opcall *)p;
    c->in = (mxc_tensor *)(p + sizeof(mxc_opcall));
    c->out = c->in + c->nin;
    c->nthreads = 1;
    for (int t = 0; t < c->nin + c->nout; ++t) c->in[t].ndim = 1;
    cp[k] = c;
    p += b;
  }
  return cp;
}

/* Run tiles [t0, t1) of the chain with this thread's copies; 0, or -1 with the message in err. */
static int mxc_chain_tiles(mxc_opcall *const *calls, mxc_opcall **cp, int m, int64_t n,
                           int64_t t0, int64_t t1, volatile int *failed, int *bad, char *err,
                           size_t errlen) {
  for (int64_t t = t0; t < t1 && !*failed; ++t) {
    int64_t lo = t * MXC_CHAIN_TILE, len = n - lo < MXC_CHAIN_TILE ? n - lo : MXC_CHAIN_TILE;
    for (int k = 0; k < m; ++k) {
      const mxc_opcall *src = calls[k];
      mxc_opcall *c = cp[k];
      for (int i = 0; i < c->nin + c->nout; ++i) {
        c->in[i].data = (char *)src->in[i].data + lo * mxc_chain_esize(src->in[i].dtype);
        c->in[i].size = len;
        c->in[i].shape[0] = len;
      }
      if (c->kernel(c) != 0) {
        int first = 0;
#ifdef _OPENMP
#pragma omp critical(mxc_chain_err)
#endif
        {
          if (!*failed) {
            *failed = 1;
            first = 1;
          }
        }
        if (first) {
          *bad = k;
          c->err[MXC_ERR_LEN - 1] = 0;
          snprintf(err, errlen, "%s", c->err[0] ? c->err : "kernel failed");
        }
        return -1;
      }
    }
  }
  return 0;
}

/* Run the chain calls[0..m) over n elements with up to nthreads threads; the calls' data
 * pointers are already resolved. 0, or -1 with a message in err and the failing call's index
 * in *bad (m when no call failed: out of memory). */
static int mxc_run_tiled_chain(mxc_opcall *const *calls, int m, int64_t n, int nthreads,
                               int *bad, char *err, size_t errlen) {
  int64_t ntiles = (n + MXC_CHAIN_TILE - 1) / MXC_CHAIN_TILE;
  volatile int failed = 0;
  int oom = 0;
  if (nthreads > ntiles) nthreads = (int)ntiles;
#ifdef _OPENMP
  if (nthreads > 1) {
#pragma omp parallel num_threads(nthreads)
    {
      int64_t th = omp_get_thread_num(), nt = omp_get_num_threads();
      mxc_opcall **cp = mxc_chain_copies(calls, m);
      if (cp == NULL) {
#pragma omp atomic write
        oom = 1;
        failed = 1;
      } else {
        mxc_chain_tiles(calls, cp, m, n, ntiles * th / nt, ntiles * (th + 1) / nt, &failed,
                        bad, err, errlen);
        free(cp);
      }
    }
  } else
#endif
  {
    (void)nthreads;
    mxc_opcall **cp = mxc_chain_copies(calls, m);
    if (cp == NULL) {
      oom = 1;
    } else {
      mxc_chain_tiles(calls, cp, m, n, 0, ntiles, &failed, bad, err, errlen);
      free(cp);
    }
  }
  if (oom) {
    *bad = m;
    snprintf(err, errlen, "out of memory running a fused chain of %d operators", m);
    return -1;
  }
  return failed ? -1 : 0;
}

#endif
