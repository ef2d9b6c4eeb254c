/* Helpers shared by the ordering, sequence, gather and shape_extra kernels: typed loads and
 * stores (float16 is computed in float32), index reads from any numeric dtype, index writes into
 * any dtype, and the per-type / per-element-size generator lists.
 *
 * Index arrays may be any of float16/32/64, uint8, int8, int32, int64 (or bool); floats are
 * truncated toward zero as MXNet's casts do, and NaN or values beyond +-2^62 read as
 * MXC_GU_BAD_INDEX, which every bounds check treats as out of range.
 */
#ifndef MXC_KERNELS_GATHER_UTIL_H
#define MXC_KERNELS_GATHER_UTIL_H
#include "kernels/common.h"

#define MXC_GU_PAR_MIN 32768     /* elements; below this a kernel runs on the calling thread */
#define MXC_GU_BAD_INDEX INT64_MIN

static inline int mxc_gu_threads(const mxc_opcall *call, int64_t work) {
  return (call->nthreads > 1 && work >= MXC_GU_PAR_MIN) ? call->nthreads : 1;
}

static inline int64_t mxc_gu_f2i(double v) {
  return (v != v || v >= 4.6e18 || v <= -4.6e18) ? MXC_GU_BAD_INDEX : (int64_t)v;
}

/* element i of an index tensor as int64 (one switch per element: callers read each index once) */
static inline int64_t mxc_gu_index_at(const mxc_tensor *t, int64_t i) {
  switch (t->dtype) {
    case MXC_FLOAT32: return mxc_gu_f2i((double)((const float *)t->data)[i]);
    case MXC_FLOAT64: return mxc_gu_f2i(((const double *)t->data)[i]);
    case MXC_FLOAT16: return mxc_gu_f2i((double)mxc_half_to_float(((const uint16_t *)t->data)[i]));
    case MXC_UINT8: case MXC_BOOL: return (int64_t)((const uint8_t *)t->data)[i];
    case MXC_INT8: return (int64_t)((const int8_t *)t->data)[i];
    case MXC_INT32: return (int64_t)((const int32_t *)t->data)[i];
    case MXC_INT64: return ((const int64_t *)t->data)[i];
    default: return MXC_GU_BAD_INDEX;
  }
}

/* the whole index tensor as a malloc'd int64 array (NULL when out of memory; the caller frees) */
static int64_t *mxc_gu_index_buf(const mxc_tensor *t, int nthreads) {
  int64_t n = t->size, i;
  int64_t *p = (int64_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  if (p == NULL) return NULL;
  if (t->dtype == MXC_INT64) {
    if (n > 0) memcpy(p, t->data, (size_t)n * sizeof(int64_t));
    return p;
  }
  (void)nthreads;
MXC_PRAGMA(omp parallel for num_threads(nthreads) schedule(static))
  for (i = 0; i < n; i++) p[i] = mxc_gu_index_at(t, i);
  return p;
}

/* write integer v as element i of a tensor of any numeric dtype (indices, counts) */
static inline void mxc_gu_store_index(void *data, int dtype, int64_t i, int64_t v) {
  switch (dtype) {
    case MXC_FLOAT32: ((float *)data)[i] = (float)v; break;
    case MXC_FLOAT64: ((double *)data)[i] = (double)v; break;
    case MXC_FLOAT16: ((uint16_t *)data)[i] = mxc_float_to_half((float)v); break;
    case MXC_UINT8: case MXC_BOOL: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case MXC_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
    case MXC_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
    case MXC_INT64: ((int64_t *)data)[i] = v; break;
    default: break;
  }
}

static inline size_t mxc_gu_esize(int dtype) {
  switch (dtype) {
    case MXC_FLOAT64: case MXC_INT64: case MXC_UINT64: return 8;
    case MXC_FLOAT32: case MXC_INT32: case MXC_UINT32: return 4;
    case MXC_FLOAT16: case MXC_INT16: case MXC_UINT16: return 2;
    default: return 1;
  }
}

/* typed loads/stores: A is the arithmetic type (float for float16) */
#define MXC_GU_PLAIN(SUF, T)                                                                    \
  static inline T mxc_gu_ld_##SUF(const T *p) { return *p; }                                    \
  static inline void mxc_gu_st_##SUF(T *p, T v) { *p = v; }
MXC_GU_PLAIN(f32, float)
MXC_GU_PLAIN(f64, double)
MXC_GU_PLAIN(u8, uint8_t)
MXC_GU_PLAIN(i8, int8_t)
MXC_GU_PLAIN(i32, int32_t)
MXC_GU_PLAIN(i64, int64_t)
MXC_GU_PLAIN(b8, uint8_t)
static inline float mxc_gu_ld_f16(const uint16_t *p) { return mxc_half_to_float(*p); }
static inline void mxc_gu_st_f16(uint16_t *p, float v) { *p = mxc_float_to_half(v); }

/* X(SUF, storage type, arithmetic type, accumulation type, dtype code) */
#define MXC_GU_FLOAT_TYPES(X)                                                                   \
  X(f32, float, float, double, MXC_FLOAT32)                                                     \
  X(f64, double, double, double, MXC_FLOAT64)                                                   \
  X(f16, uint16_t, float, float, MXC_FLOAT16)
#define MXC_GU_INT_TYPES(X)                                                                     \
  X(u8, uint8_t, uint8_t, int64_t, MXC_UINT8)                                                   \
  X(i8, int8_t, int8_t, int64_t, MXC_INT8)                                                      \
  X(i32, int32_t, int32_t, int64_t, MXC_INT32)                                                  \
  X(i64, int64_t, int64_t, int64_t, MXC_INT64)
#define MXC_GU_ALL_TYPES(X) MXC_GU_FLOAT_TYPES(X) MXC_GU_INT_TYPES(X)

#endif
