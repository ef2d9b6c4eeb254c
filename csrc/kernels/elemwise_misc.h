/* cast, clip and where kernels.
 *
 * cast ("cast", key (in code, out code), all 81 pairs of the 8 MXNet dtypes and bfloat16): numpy's conversion
 * rules (int -> int wraps, float -> int truncates toward zero, anything -> bool is x != 0, nan
 * included); where numpy leaves a result undefined (nan or out-of-range float -> int) the result
 * is MXNet's x86 one: INT_MIN of the 32/64-bit conversion, low byte for 8-bit types. float64 ->
 * float16 rounds through float32, as MXNet's half_t does.
 *
 * clip ("clip", fattr[0] = a_min, fattr[1] = a_max): MXNet compares in float32 (float64 data in
 * double against the float bounds) and writes the bound converted to the dtype; nan stays nan.
 *
 * where ("where", key (cond code, x code); inputs cond, x, y): out = cond != 0 ? x : y, with cond
 * of x's size, or 1-D of length x.shape[0] selecting whole rows (MXNet's row form).
 */
#ifndef MXC_ELEMWISE_MISC_H
#define MXC_ELEMWISE_MISC_H
#include "kernels/elemwise_common.h"

/* tag, storage type, code, kind (F: floating, I: integer or bool) */
#define MXC_TAGS_IN(X)                                                                         \
  X(f16, uint16_t, MXC_FLOAT16, F) X(f32, float, MXC_FLOAT32, F) X(f64, double, MXC_FLOAT64, F) \
  X(u8, uint8_t, MXC_UINT8, I) X(i8, int8_t, MXC_INT8, I) X(i32, int32_t, MXC_INT32, I)        \
  X(i64, int64_t, MXC_INT64, I) X(b, uint8_t, MXC_BOOL, I) X(bf16, uint16_t, MXC_BFLOAT16, F)
/* the same list under another name, for the inner level of a nested expansion */
#define MXC_TAGS_OUT(X, tin, Tin, cin, kin)                                                    \
  X(tin, Tin, cin, kin, f16, uint16_t, MXC_FLOAT16)                                            \
  X(tin, Tin, cin, kin, f32, float, MXC_FLOAT32)                                               \
  X(tin, Tin, cin, kin, f64, double, MXC_FLOAT64)                                              \
  X(tin, Tin, cin, kin, u8, uint8_t, MXC_UINT8)                                                \
  X(tin, Tin, cin, kin, i8, int8_t, MXC_INT8)                                                  \
  X(tin, Tin, cin, kin, i32, int32_t, MXC_INT32)                                               \
  X(tin, Tin, cin, kin, i64, int64_t, MXC_INT64)                                               \
  X(tin, Tin, cin, kin, b, uint8_t, MXC_BOOL)                                                  \
  X(tin, Tin, cin, kin, bf16, uint16_t, MXC_BFLOAT16)

/* integer/bool source: C's own conversion (wraps; exact int64 -> float rounding) */
#define MXC_CI_f16(x) mxc_float_to_half((float)(x))
#define MXC_CI_bf16(x) mxc_float_to_bf16((float)(x))
#define MXC_CI_f32(x) ((float)(x))
#define MXC_CI_f64(x) ((double)(x))
#define MXC_CI_u8(x) ((uint8_t)(x))
#define MXC_CI_i8(x) ((int8_t)(x))
#define MXC_CI_i32(x) ((int32_t)(x))
#define MXC_CI_i64(x) ((int64_t)(x))
#define MXC_CI_b(x) ((uint8_t)((x) != 0))
/* the conversion expression for a source kind and target tag */
#define MXC_CAST_EXPR_F(tin, tout, x) MXC_TO_##tout(MXC_LD_##tin(x))
#define MXC_CAST_EXPR_I(tin, tout, x) MXC_CI_##tout(x)

typedef void (*mxc_cloop)(const void *x, void *y, int64_t n);
typedef struct {
  mxc_cloop f;
  const char *x;
  char *y;
  int64_t esx, esy;
} mxc_cctx;

static void mxc_cast_body(void *p, int64_t lo, int64_t hi) {
  mxc_cctx *u = (mxc_cctx *)p;
  u->f(u->x + lo * u->esx, u->y + lo * u->esy, hi - lo);
}

static int mxc_run_cast(mxc_opcall *c, mxc_cloop f, int64_t esx, int64_t esy) {
  if (c->nin != 1 || c->nout != 1 || c->in[0].size != c->out[0].size)
    return mxc_fail(c, "cast kernel: needs one input and one output of equal size");
  mxc_cctx u = {f, (const char *)c->in[0].data, (char *)c->out[0].data, esx, esy};
  mxc_parallel_range(c->out[0].size, c->nthreads, MXC_PAR_MIN_CHEAP, mxc_cast_body, &u);
  return 0;
}

#define MXC_CAST_ONE(tin, Tin, cin, kin, tout, Tout, cout)                                     \
  static void mxc_cl_##tin##_##tout(const void *xv, void *yv, int64_t n) {                    \
    const Tin *x = (const Tin *)xv;                                                            \
    Tout *y = (Tout *)yv;                                                                      \
    for (int64_t i = 0; i < n; ++i) y[i] = MXC_CAST_EXPR_##kin(tin, tout, x[i]);               \
  }                                                                                            \
  static int mxc_cast_##tin##_##tout(mxc_opcall *c) {                                          \
    return mxc_run_cast(c, mxc_cl_##tin##_##tout, sizeof(Tin), sizeof(Tout));                  \
  }
#define MXC_CAST_ROW(tin, Tin, cin, kin) MXC_TAGS_OUT(MXC_CAST_ONE, tin, Tin, cin, kin)
MXC_VEC_BEGIN
MXC_TAGS_IN(MXC_CAST_ROW)
MXC_VEC_END

#define MXC_CAST_ENTRY(tin, Tin, cin, kin, tout, Tout, cout) {"cast", cin, cout, mxc_cast_##tin##_##tout},
#define MXC_CAST_ENTRY_ROW(tin, Tin, cin, kin) MXC_TAGS_OUT(MXC_CAST_ENTRY, tin, Tin, cin, kin)
#define MXC_CAST_ENTRIES MXC_TAGS_IN(MXC_CAST_ENTRY_ROW)

/* ---- clip ------------------------------------------------------------------------------- */
typedef struct {
  const void *x;
  void *y;
  float lo, hi;
} mxc_clipctx;

/* CT: comparison type; LD: storage -> CT; TO: float bound -> storage */
#define MXC_CLIP_FN(tag, T, CT, LD, TO)                                                        \
  static void mxc_clip_body_##tag(void *p, int64_t lo, int64_t hi) {                          \
    mxc_clipctx *u = (mxc_clipctx *)p;                                                         \
    const T *x = (const T *)u->x;                                                              \
    T *y = (T *)u->y;                                                                          \
    const CT bmin = u->lo, bmax = u->hi;                                                       \
    const T vmin = TO(u->lo), vmax = TO(u->hi);                                                \
    for (int64_t i = lo; i < hi; ++i) {                                                        \
      CT v = LD(x[i]);                                                                         \
      y[i] = v > bmax ? vmax : (v < bmin ? vmin : x[i]);                                       \
    }                                                                                          \
  }                                                                                            \
  static int mxc_clip_##tag(mxc_opcall *c) {                                                   \
    if (c->nin != 1 || c->nout != 1 || c->in[0].size != c->out[0].size)                        \
      return mxc_fail(c, "clip kernel: needs one input and one output of equal size");         \
    if (c->nfattr < 2) return mxc_fail(c, "clip kernel: needs a_min and a_max (fattr[0..1])"); \
    mxc_clipctx u = {c->in[0].data, c->out[0].data, (float)c->fattr[0], (float)c->fattr[1]};   \
    mxc_parallel_range(c->out[0].size, c->nthreads, MXC_PAR_MIN_CHEAP, mxc_clip_body_##tag,   \
                       &u);                                                                    \
    return 0;                                                                                  \
  }
#define MXC_CLIP_LDF(x) ((float)(x))
MXC_VEC_BEGIN
MXC_CLIP_FN(f16, uint16_t, float, mxc_half_to_float, MXC_TO_f16)
MXC_CLIP_FN(f32, float, float, MXC_CLIP_LDF, MXC_TO_f32)
MXC_CLIP_FN(f64, double, double, MXC_LD_f64, MXC_TO_f64)
MXC_CLIP_FN(u8, uint8_t, float, MXC_CLIP_LDF, MXC_TO_u8)
MXC_CLIP_FN(i8, int8_t, float, MXC_CLIP_LDF, MXC_TO_i8)
MXC_CLIP_FN(i32, int32_t, float, MXC_CLIP_LDF, MXC_TO_i32)
MXC_CLIP_FN(i64, int64_t, float, MXC_CLIP_LDF, MXC_TO_i64)
MXC_VEC_END

#define MXC_CLIP_ENTRIES                                                                       \
  {"clip", MXC_FLOAT16, -1, mxc_clip_f16}, {"clip", MXC_FLOAT32, -1, mxc_clip_f32},            \
  {"clip", MXC_FLOAT64, -1, mxc_clip_f64}, {"clip", MXC_UINT8, -1, mxc_clip_u8},               \
  {"clip", MXC_INT8, -1, mxc_clip_i8}, {"clip", MXC_INT32, -1, mxc_clip_i32},                  \
  {"clip", MXC_INT64, -1, mxc_clip_i64},

/* ---- where ------------------------------------------------------------------------------ */
typedef struct {
  const void *cond;
  const char *x, *y;
  char *out;
  int64_t row;   /* elements per condition value: 1, or x.size / x.shape[0] for the row form */
} mxc_wherectx;

#define MXC_NZ_F16(c) (((c) & 0x7fffu) != 0)
#define MXC_NZ(c) ((c) != 0)

/* one function per (cond dtype, element size of x) */
#define MXC_WHERE_FN(ctag, CT, NZ, etag, ET)                                                   \
  static void mxc_where_body_##ctag##_##etag(void *p, int64_t lo, int64_t hi) {               \
    mxc_wherectx *u = (mxc_wherectx *)p;                                                       \
    const CT *cond = (const CT *)u->cond;                                                      \
    const ET *x = (const ET *)u->x, *y = (const ET *)u->y;                                     \
    ET *out = (ET *)u->out;                                                                    \
    if (u->row == 1) {                                                                         \
      for (int64_t i = lo; i < hi; ++i) out[i] = NZ(cond[i]) ? x[i] : y[i];                    \
    } else {                                                                                   \
      for (int64_t r = lo; r < hi; ++r) {                                                      \
        const ET *src = NZ(cond[r]) ? x : y;                                                   \
        memcpy(out + r * u->row, src + r * u->row, (size_t)u->row * sizeof(ET));               \
      }                                                                                        \
    }                                                                                          \
  }                                                                                            \
  static int mxc_where_##ctag##_##etag(mxc_opcall *c) {                                        \
    return mxc_run_where(c, mxc_where_body_##ctag##_##etag);                                   \
  }

static int mxc_run_where(mxc_opcall *c, mxc_range_fn body) {
  if (c->nin != 3 || c->nout != 1)
    return mxc_fail(c, "where kernel: needs inputs (condition, x, y) and one output");
  const mxc_tensor *C = &c->in[0], *X = &c->in[1], *Y = &c->in[2], *O = &c->out[0];
  if (X->size != O->size || Y->size != O->size)
    return mxc_fail(c, "where kernel: x, y and the output must have the same size");
  mxc_wherectx u = {C->data, (const char *)X->data, (const char *)Y->data, (char *)O->data, 1};
  int64_t n = O->size;
  if (C->size != X->size) {
    if (C->ndim != 1 || X->ndim < 1 || C->shape[0] != X->shape[0])
      return mxc_fail(c, "where kernel: condition must have x's shape, or be 1-D with length "
                         "x.shape[0]");
    n = X->shape[0];
    u.row = n ? X->size / n : 1;
    mxc_parallel_range(n, c->nthreads, u.row ? MXC_PAR_MIN_CHEAP / u.row + 1 : n + 1, body, &u);
    return 0;
  }
  mxc_parallel_range(n, c->nthreads, MXC_PAR_MIN_CHEAP, body, &u);
  return 0;
}

#define MXC_WHERE_COND(ctag, CT, NZ)                                                           \
  MXC_WHERE_FN(ctag, CT, NZ, e1, uint8_t)                                                      \
  MXC_WHERE_FN(ctag, CT, NZ, e2, uint16_t)                                                     \
  MXC_WHERE_FN(ctag, CT, NZ, e4, uint32_t)                                                     \
  MXC_WHERE_FN(ctag, CT, NZ, e8, uint64_t)
MXC_WHERE_COND(f16, uint16_t, MXC_NZ_F16)
MXC_WHERE_COND(f32, float, MXC_NZ)
MXC_WHERE_COND(f64, double, MXC_NZ)
MXC_WHERE_COND(u8, uint8_t, MXC_NZ)
MXC_WHERE_COND(i8, int8_t, MXC_NZ)
MXC_WHERE_COND(i32, int32_t, MXC_NZ)
MXC_WHERE_COND(i64, int64_t, MXC_NZ)
MXC_WHERE_COND(b, uint8_t, MXC_NZ)

#define MXC_WHERE_ROW(ctag, ccode)                                                             \
  {"where", ccode, MXC_FLOAT16, mxc_where_##ctag##_e2},                                        \
  {"where", ccode, MXC_FLOAT32, mxc_where_##ctag##_e4},                                        \
  {"where", ccode, MXC_FLOAT64, mxc_where_##ctag##_e8},                                        \
  {"where", ccode, MXC_UINT8, mxc_where_##ctag##_e1},                                          \
  {"where", ccode, MXC_INT8, mxc_where_##ctag##_e1},                                           \
  {"where", ccode, MXC_INT32, mxc_where_##ctag##_e4},                                          \
  {"where", ccode, MXC_INT64, mxc_where_##ctag##_e8},                                          \
  {"where", ccode, MXC_BOOL, mxc_where_##ctag##_e1},
#define MXC_WHERE_ENTRIES                                                                      \
  MXC_WHERE_ROW(f16, MXC_FLOAT16) MXC_WHERE_ROW(f32, MXC_FLOAT32)                              \
  MXC_WHERE_ROW(f64, MXC_FLOAT64) MXC_WHERE_ROW(u8, MXC_UINT8) MXC_WHERE_ROW(i8, MXC_INT8)     \
  MXC_WHERE_ROW(i32, MXC_INT32) MXC_WHERE_ROW(i64, MXC_INT64) MXC_WHERE_ROW(b, MXC_BOOL)

#endif
