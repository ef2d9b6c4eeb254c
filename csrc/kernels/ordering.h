/* Ordering kernels: one "topk" kernel serves sort, argsort and topk.
 *
 * The input is viewed as (pre, n, post) around the sorted axis; every (pre, post) pair is one
 * row of n elements (strided by post). iattr: [pre, n, post, k, ret, ascend] with ret 0 value,
 * 1 indices, 2 mask, 3 both. Outputs: values (pre, k, post) in the data dtype, indices
 * (pre, k, post) in any numeric dtype, mask (pre, n, post) in the data dtype.
 *
 * Order: elements compare by value and then by position, so equal values keep their input
 * order (a stable sort, which is what MXNet's CPU std::sort gives on short rows and what its
 * partial sort gives when values are distinct). When k is a large share of n a row is radix
 * sorted on order-preserving integer keys (merge sorted when short), else the k best are selected
 * with a bounded heap and only those are sorted.
 * Threads split the rows; each thread owns its scratch buffers.
 */
#ifndef MXC_KERNELS_ORDERING_H
#define MXC_KERNELS_ORDERING_H
#include "kernels/gather_util.h"

/* order-preserving unsigned keys (ascending); descending sorts use ~key. Radix sorting them
 * stably keeps equal values in input order, which is the order the comparison sort defines
 * (but -0.0 sorts before +0.0 here, and NaNs go to the ends by sign). */
static inline uint64_t mxc_ord_fkey(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return (uint64_t)((u & 0x80000000u) ? ~u : (u | 0x80000000u));
}
static inline uint64_t mxc_ord_key_f32(float v) { return mxc_ord_fkey(v); }
static inline uint64_t mxc_ord_key_f16(float v) { return mxc_ord_fkey(v); }
static inline uint64_t mxc_ord_key_f64(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
static inline uint64_t mxc_ord_key_u8(uint8_t v) { return v; }
static inline uint64_t mxc_ord_key_i8(int8_t v) { return (uint64_t)(uint8_t)v ^ 0x80u; }
static inline uint64_t mxc_ord_key_i32(int32_t v) { return (uint64_t)((uint32_t)v ^ 0x80000000u); }
static inline uint64_t mxc_ord_key_i64(int64_t v) { return (uint64_t)v ^ 0x8000000000000000ull; }

#define MXC_ORD_RADIX_MIN 64   /* rows shorter than this are merge sorted */

/* stable LSD radix sort of (key, idx) by key, 8 bits a pass; passes whose byte is the same for
 * every key are skipped; nbytes: the key's width. Returns the buffer with the result. */
static int64_t *mxc_ord_radix(uint64_t *key, int64_t *idx, uint64_t *key2, int64_t *idx2,
                              int64_t n, int nbytes) {
  int64_t cnt[8][256];
  int64_t i;
  int p, b;
  memset(cnt, 0, sizeof cnt);
  for (i = 0; i < n; i++) {
    uint64_t k = key[i];
    for (p = 0; p < nbytes; p++) cnt[p][(k >> (8 * p)) & 0xff]++;
  }
  for (p = 0; p < nbytes; p++) {
    int64_t sum = 0, *c = cnt[p];
    int skip = 0;
    for (b = 0; b < 256; b++) {
      if (c[b] == n) skip = 1;
    }
    if (skip) continue;
    for (b = 0; b < 256; b++) {
      int64_t t = c[b];
      c[b] = sum;
      sum += t;
    }
    for (i = 0; i < n; i++) {
      int64_t o = c[(key[i] >> (8 * p)) & 0xff]++;
      key2[o] = key[i];
      idx2[o] = idx[i];
    }
    {
      uint64_t *tk = key;
      int64_t *ti = idx;
      key = key2;
      idx = idx2;
      key2 = tk;
      idx2 = ti;
    }
  }
  return idx;
}

#define MXC_ORD_GEN(SUF, T, A, ACC, CODE)                                                       \
  typedef struct {                                                                              \
    A key;                                                                                      \
    int64_t idx;                                                                                \
  } mxc_ord_pair_##SUF;                                                                         \
                                                                                                \
  static inline int mxc_ord_before_##SUF(const mxc_ord_pair_##SUF *a,                           \
                                         const mxc_ord_pair_##SUF *b, int asc) {                \
    if (asc) {                                                                                  \
      if (a->key < b->key) return 1;                                                            \
      if (b->key < a->key) return 0;                                                            \
    } else {                                                                                    \
      if (a->key > b->key) return 1;                                                            \
      if (b->key > a->key) return 0;                                                            \
    }                                                                                           \
    return a->idx < b->idx;                                                                     \
  }                                                                                             \
                                                                                                \
  /* stable bottom-up merge sort of v[0..n) using tmp[0..n) */                                  \
  static void mxc_ord_msort_##SUF(mxc_ord_pair_##SUF *v, mxc_ord_pair_##SUF *tmp, int64_t n,   \
                                  int asc) {                                                    \
    int64_t i, j, w;                                                                            \
    mxc_ord_pair_##SUF *src = v, *dst = tmp, *sw;                                               \
    for (i = 0; i < n; i += 16) { /* insertion sort runs of 16 */                               \
      int64_t e = i + 16 < n ? i + 16 : n;                                                      \
      for (j = i + 1; j < e; j++) {                                                             \
        mxc_ord_pair_##SUF x = v[j];                                                            \
        int64_t m = j;                                                                          \
        while (m > i && mxc_ord_before_##SUF(&x, &v[m - 1], asc)) {                             \
          v[m] = v[m - 1];                                                                      \
          m--;                                                                                  \
        }                                                                                       \
        v[m] = x;                                                                               \
      }                                                                                         \
    }                                                                                           \
    for (w = 16; w < n; w *= 2) {                                                               \
      for (i = 0; i < n; i += 2 * w) {                                                          \
        int64_t mid = i + w < n ? i + w : n, end = i + 2 * w < n ? i + 2 * w : n;              \
        int64_t a = i, b = mid, o = i;                                                          \
        while (a < mid && b < end)                                                              \
          dst[o++] = mxc_ord_before_##SUF(&src[b], &src[a], asc) ? src[b++] : src[a++];         \
        while (a < mid) dst[o++] = src[a++];                                                    \
        while (b < end) dst[o++] = src[b++];                                                    \
      }                                                                                         \
      sw = src;                                                                                 \
      src = dst;                                                                                \
      dst = sw;                                                                                 \
    }                                                                                           \
    if (src != v) memcpy(v, src, (size_t)n * sizeof(*v));                                       \
  }                                                                                             \
                                                                                                \
  /* heap whose root is the worst of the kept elements */                                       \
  static void mxc_ord_sift_##SUF(mxc_ord_pair_##SUF *h, int64_t k, int64_t i, int asc) {        \
    for (;;) {                                                                                  \
      int64_t l = 2 * i + 1, r = l + 1, w = i;                                                  \
      if (l < k && mxc_ord_before_##SUF(&h[w], &h[l], asc)) w = l;                              \
      if (r < k && mxc_ord_before_##SUF(&h[w], &h[r], asc)) w = r;                              \
      if (w == i) return;                                                                       \
      {                                                                                         \
        mxc_ord_pair_##SUF t = h[i];                                                            \
        h[i] = h[w];                                                                            \
        h[w] = t;                                                                               \
      }                                                                                         \
      i = w;                                                                                    \
    }                                                                                           \
  }                                                                                             \
                                                                                                \
  /* the first k of row (p, q), in order, into buf[0..k) */                                     \
  static void mxc_ord_row_##SUF(const T *x, int64_t n, int64_t post, int64_t k, int asc,        \
                                mxc_ord_pair_##SUF *buf, mxc_ord_pair_##SUF *tmp, void *rw) {   \
    int64_t j;                                                                                  \
    if (k * 8 > n && n >= MXC_ORD_RADIX_MIN) {                                                  \
      uint64_t *key = (uint64_t *)rw, *key2 = key + n;                                          \
      int64_t *ix = (int64_t *)(key2 + n), *ix2 = ix + n, *res;                                 \
      uint64_t flip = asc ? 0 : ~(uint64_t)0;                                                   \
      for (j = 0; j < n; j++) {                                                                 \
        key[j] = mxc_ord_key_##SUF(mxc_gu_ld_##SUF(x + j * post)) ^ flip;                       \
        ix[j] = j;                                                                              \
      }                                                                                         \
      res = mxc_ord_radix(key, ix, key2, ix2, n, (int)sizeof(A));                                               \
      for (j = 0; j < k; j++) {                                                                 \
        buf[j].idx = res[j];                                                                    \
        buf[j].key = (A)mxc_gu_ld_##SUF(x + res[j] * post);                                     \
      }                                                                                         \
      return;                                                                                   \
    }                                                                                           \
    (void)rw;                                                                                   \
    if (k * 8 > n) {                                                                            \
      for (j = 0; j < n; j++) {                                                                 \
        buf[j].key = (A)mxc_gu_ld_##SUF(x + j * post);                                          \
        buf[j].idx = j;                                                                         \
      }                                                                                         \
      mxc_ord_msort_##SUF(buf, tmp, n, asc);                                                    \
      return;                                                                                   \
    }                                                                                           \
    if (k == 0) return;                                                                         \
    for (j = 0; j < k; j++) {                                                                   \
      buf[j].key = (A)mxc_gu_ld_##SUF(x + j * post);                                            \
      buf[j].idx = j;                                                                           \
    }                                                                                           \
    for (j = k / 2 - 1; j >= 0; j--) mxc_ord_sift_##SUF(buf, k, j, asc);                        \
    for (j = k; j < n; j++) {                                                                   \
      mxc_ord_pair_##SUF e;                                                                     \
      e.key = (A)mxc_gu_ld_##SUF(x + j * post);                                                 \
      e.idx = j;                                                                                \
      if (mxc_ord_before_##SUF(&e, &buf[0], asc)) {                                             \
        buf[0] = e;                                                                             \
        mxc_ord_sift_##SUF(buf, k, 0, asc);                                                     \
      }                                                                                         \
    }                                                                                           \
    mxc_ord_msort_##SUF(buf, tmp, k, asc);                                                      \
  }                                                                                             \
                                                                                                \
  static int mxc_ord_topk_##SUF(mxc_opcall *call) {                                             \
    const int64_t pre = call->iattr[0], n = call->iattr[1], post = call->iattr[2];              \
    const int64_t k = call->iattr[3];                                                           \
    const int ret = (int)call->iattr[4], asc = call->iattr[5] != 0;                             \
    const T *x = (const T *)call->in[0].data;                                                   \
    T *vals = (ret == 0 || ret == 3) ? (T *)call->out[0].data : NULL;                           \
    T *mask = ret == 2 ? (T *)call->out[0].data : NULL;                                         \
    mxc_tensor *it = ret == 1 ? &call->out[0] : (ret == 3 ? &call->out[1] : NULL);              \
    const int64_t rows = pre * post;                                                            \
    int nt = mxc_gu_threads(call, pre * n * post), failed = 0;                                  \
    if (k < 0 || k > n) {                                                                       \
      snprintf(call->err, MXC_ERR_LEN, "topk: k %lld out of range for %lld elements",           \
               (long long)k, (long long)n);                                                     \
      return -1;                                                                                \
    }                                                                                           \
    if (rows == 0 || n == 0) return 0;                                                          \
    if (nt > rows) nt = (int)rows;                                                              \
    if (mask) memset(mask, 0, (size_t)(pre * n * post) * sizeof(T));                            \
    (void)nt;                                                                                   \
MXC_PRAGMA(omp parallel num_threads(nt) reduction(|:failed))                                    \
    {                                                                                           \
      int64_t r, j;                                                                             \
      mxc_ord_pair_##SUF *buf = (mxc_ord_pair_##SUF *)malloc((size_t)n * (2 * sizeof(*buf) + 32)); \
MXC_PRAGMA(omp for schedule(static))                                                            \
        for (r = 0; r < rows; r++) {                                                            \
          if (buf == NULL) {                                                                    \
            failed = 1;                                                                         \
            continue;                                                                           \
          }                                                                                     \
          {                                                                                     \
          int64_t p = r / post, q = r % post;                                                   \
          int64_t ib = p * n * post + q, ob = p * k * post + q;                                 \
          mxc_ord_row_##SUF(x + ib, n, post, k, asc, buf, buf + n, (void *)(buf + 2 * n));      \
          for (j = 0; j < k; j++) {                                                             \
            if (vals) mxc_gu_st_##SUF(vals + ob + j * post, (A)buf[j].key);                     \
            if (it) mxc_gu_store_index(it->data, it->dtype, ob + j * post, buf[j].idx);         \
            if (mask) mxc_gu_st_##SUF(mask + ib + buf[j].idx * post, (A)1);                     \
          }                                                                                     \
          }                                                                                     \
        }                                                                                       \
        free(buf);                                                                              \
    }                                                                                           \
    if (failed) {                                                                               \
      snprintf(call->err, MXC_ERR_LEN, "topk: out of memory for rows of %lld", (long long)n);   \
      return -1;                                                                                \
    }                                                                                           \
    return 0;                                                                                   \
  }

MXC_GU_ALL_TYPES(MXC_ORD_GEN)

#define MXC_ORD_ENTRY(SUF, T, A, ACC, CODE) {"topk", CODE, mxc_ord_topk_##SUF},
static const mxc_code_entry mxc_ordering_table[] = {
  MXC_GU_ALL_TYPES(MXC_ORD_ENTRY)
  {NULL, -1, NULL}
};
#endif
