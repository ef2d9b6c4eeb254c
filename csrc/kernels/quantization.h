/* INT8 quantization kernels of mxc/ops/quantization.py (mxc/ops/cpu/quantization.pyx), with the
 * arithmetic of MXNet 1.9.1's oneDNN build (src/operator/quantization/mkldnn/):
 *
 * - A oneDNN reorder with an output scale computes saturate(nearbyint(float(x) * scale)) in
 *   float32 (round half to even, then clamp to the type's range): quantize_v2, requantize and
 *   the int32 results of the products all go through mxc_q_round_*.
 * - quantize_v2 / requantize scale by 127.5 (int8) or 255.5 (uint8) over max(|min|, |max|)
 *   (kInt8Range/kUint8Range); dequantize multiplies by max(|min|, |max|) / 127.5 or / 255.5.
 * - Products (conv, fully connected) accumulate u8/s8 x s8 in int32; their output range is
 *   MXNet's QuantizationRangeForMultiplication: one level of each operand times 2^31, a level
 *   being max(|min|, |max|) / 127 (s8, and u8 data in conv, as MXNet's S8S8 struct) or / 255
 *   (u8 data of fully connected, the S8U8 struct).
 * - The int8 bias of quantized_conv is added as its integer value (oneDNN gets the int8 array
 *   as is); quantized_fully_connected first rescales it to int32 (truncating, as MXNet's loop).
 *
 * Every kernel writes its min/max outputs itself (the ranges arrive as 1-element inputs at run
 * time, so nothing here can be computed when the operator is pushed).
 */
#ifndef MXC_KERNELS_QUANTIZATION_H
#define MXC_KERNELS_QUANTIZATION_H
#include <float.h>
#include "kernels/common.h"

#define MXC_Q_INT8_RANGE 127.5f
#define MXC_Q_UINT8_RANGE 255.5f
#define MXC_Q_INT32_RANGE 2147483648.0f /* MinAbs(INT32_MIN, INT32_MAX) in float */
#define MXC_Q_PAR_MIN ((int64_t)32768)

static inline float mxc_q_maxabs(float a, float b) {
  a = fabsf(a);
  b = fabsf(b);
  return a > b ? a : b;
}

static inline int mxc_q_threads(const mxc_opcall *c, int64_t work) {
  return (c->nthreads > 1 && work >= MXC_Q_PAR_MIN) ? c->nthreads : 1;
}

static inline int8_t mxc_q_round_s8(float v) {
  if (v != v) return 0;
  v = nearbyintf(v);
  return (int8_t)(v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v);
}

static inline uint8_t mxc_q_round_u8(float v) {
  if (v != v) return 0;
  v = nearbyintf(v);
  return (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
}

static inline int32_t mxc_q_round_s32(float v) {
  if (v != v) return 0;
  v = nearbyintf(v);
  if (v >= 2147483648.0f) return INT32_MAX;
  if (v <= -2147483648.0f) return INT32_MIN;
  return (int32_t)v;
}

static inline float mxc_q_scalar(const mxc_tensor *t) { return *(const float *)t->data; }

/* out[i] = saturate(nearbyint(x[i] * scale)) into out's type (int8 or uint8) */
static int mxc_q_scale_f32(mxc_opcall *c, const float *x, int64_t n, float scale, mxc_tensor *y) {
  const int nt = mxc_q_threads(c, n);
  int64_t i;
  (void)nt;
  if (y->dtype == MXC_INT8) {
    int8_t *o = (int8_t *)y->data;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = mxc_q_round_s8(x[i] * scale);
  } else if (y->dtype == MXC_UINT8) {
    uint8_t *o = (uint8_t *)y->data;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = mxc_q_round_u8(x[i] * scale);
  } else {
    snprintf(c->err, MXC_ERR_LEN, "quantize: output must be int8 or uint8");
    return -1;
  }
  return 0;
}

/* _contrib_quantize_v2. in: data (float32, or int8/uint8 passed through); out: q, min, max.
 * iattr: calibrated; fattr: min_calib_range, max_calib_range. */
static int mxc_q_quantize_v2(mxc_opcall *c) {
  const mxc_tensor *x = &c->in[0];
  mxc_tensor *y = &c->out[0];
  float *omin = (float *)c->out[1].data, *omax = (float *)c->out[2].data;
  const int calibrated = c->iattr[0] != 0;
  const int64_t n = x->size;
  if (x->dtype == MXC_INT8 || x->dtype == MXC_UINT8) {
    if (calibrated) {
      *omin = (float)c->fattr[0];
      *omax = (float)c->fattr[1];
    } else if (x->dtype == MXC_UINT8) {
      *omin = 0.0f;
      *omax = MXC_Q_UINT8_RANGE;
    } else {
      *omin = -MXC_Q_INT8_RANGE;
      *omax = MXC_Q_INT8_RANGE;
    }
    if (y->data != x->data) memcpy(y->data, x->data, (size_t)n);
    return 0;
  }
  const float *in = (const float *)x->data;
  float lo = FLT_MAX, hi = -FLT_MAX;
  if (calibrated) {
    lo = (float)c->fattr[0];
    hi = (float)c->fattr[1];
  } else {
    int64_t i;
    for (i = 0; i < n; i++) {
      if (in[i] > hi) hi = in[i];
      if (in[i] < lo) lo = in[i];
    }
  }
  const float real = mxc_q_maxabs(lo, hi);
  if (y->dtype == MXC_UINT8) {
    *omin = lo;
    *omax = hi;
    return mxc_q_scale_f32(c, in, n, MXC_Q_UINT8_RANGE / real, y);
  }
  *omin = -real;
  *omax = real;
  return mxc_q_scale_f32(c, in, n, MXC_Q_INT8_RANGE / real, y);
}

/* _contrib_quantize (the first API): saturate(nearbyint(x * 255 / r)) for uint8 with the given
 * range passed through, saturate(nearbyint(x * 127 / r)) for int8 with range [-r, r]
 * (MKLDNNQuantizeComputeKer), r = max(|min_range|, |max_range|). in: data, min_range,
 * max_range; out: q, min, max. */
static int mxc_q_quantize(mxc_opcall *c) {
  const float *x = (const float *)c->in[0].data;
  const float lo = mxc_q_scalar(&c->in[1]), hi = mxc_q_scalar(&c->in[2]);
  const float real = mxc_q_maxabs(lo, hi);
  mxc_tensor *y = &c->out[0];
  float *omin = (float *)c->out[1].data, *omax = (float *)c->out[2].data;
  if (y->dtype == MXC_UINT8) {
    *omin = lo;
    *omax = hi;
    return mxc_q_scale_f32(c, x, c->in[0].size, 255.0f / real, y);
  }
  *omin = -real;
  *omax = real;
  return mxc_q_scale_f32(c, x, c->in[0].size, 127.0f / real, y);
}

/* _contrib_dequantize: in q (uint8 / int8 / int32), min, max; out float32 q * r / range. */
static int mxc_q_dequantize(mxc_opcall *c) {
  const mxc_tensor *x = &c->in[0];
  const float real = mxc_q_maxabs(mxc_q_scalar(&c->in[1]), mxc_q_scalar(&c->in[2]));
  float *o = (float *)c->out[0].data;
  const int64_t n = x->size;
  const int nt = mxc_q_threads(c, n);
  int64_t i;
  (void)nt;
  if (x->dtype == MXC_UINT8) {
    const uint8_t *q = (const uint8_t *)x->data;
    const float s = real / MXC_Q_UINT8_RANGE;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = (float)q[i] * s;
  } else if (x->dtype == MXC_INT8) {
    const int8_t *q = (const int8_t *)x->data;
    const float s = real / MXC_Q_INT8_RANGE;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = (float)q[i] * s;
  } else {
    const int32_t *q = (const int32_t *)x->data;
    const float s = real / MXC_Q_INT32_RANGE;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = (float)q[i] * s;
  }
  return 0;
}

/* _contrib_requantize: in int32 data, min, max; out q (int8/uint8), min, max.
 * iattr: calibrated; fattr: min_calib_range, max_calib_range. Uncalibrated, the new range is
 * the data's own: int32(max(|lo|, |hi|)) * r_in / 2^31, with MXNet's float-to-int32
 * conversion (2^31 itself becomes INT32_MIN on x86, which makes the range negative). */
static int mxc_q_requantize(mxc_opcall *c) {
  const int32_t *x = (const int32_t *)c->in[0].data;
  const int64_t n = c->in[0].size;
  const float in_real = mxc_q_maxabs(mxc_q_scalar(&c->in[1]), mxc_q_scalar(&c->in[2]));
  mxc_tensor *y = &c->out[0];
  float *omin = (float *)c->out[1].data, *omax = (float *)c->out[2].data;
  float real;
  if (c->iattr[0]) {
    real = mxc_q_maxabs((float)c->fattr[0], (float)c->fattr[1]);
  } else {
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    int64_t i;
    for (i = 0; i < n; i++) {
      if (x[i] > hi) hi = x[i];
      if (x[i] < lo) lo = x[i];
    }
    const float m = mxc_q_maxabs((float)lo, (float)hi);
    const int32_t range = m >= 2147483648.0f ? INT32_MIN : (int32_t)m;
    real = (float)range * in_real / MXC_Q_INT32_RANGE;
  }
  const float first = in_real / MXC_Q_INT32_RANGE;
  float qrange;
  if (y->dtype == MXC_INT8) {
    qrange = 127.0f;
    *omin = -real;
    *omax = real;
  } else {
    qrange = 255.0f;
    *omin = 0.0f;
    *omax = real;
  }
  const float scale = first * (qrange / real);
  const int nt = mxc_q_threads(c, n);
  int64_t i;
  (void)nt;
  if (y->dtype == MXC_INT8) {
    int8_t *o = (int8_t *)y->data;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = mxc_q_round_s8((float)x[i] * scale);
  } else {
    uint8_t *o = (uint8_t *)y->data;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = mxc_q_round_u8((float)x[i] * scale);
  }
  return 0;
}

/* One level of a product's int32 output times 2^31 (QuantizationRangeForMultiplication). A
 * uint8 side's 255 levels are passed with the weight's, as MXNet's S8U8 range is computed (the
 * product is the same; the float rounding is MXNet's). */
static void mxc_q_product_range(float a_real, float a_levels, float b_real, float b_levels,
                                float *omin, float *omax) {
  const float level = (a_real / a_levels) * (b_real / b_levels);
  *omax = level * MXC_Q_INT32_RANGE;
  *omin = -*omax;
}

/* C[r, m] = A[r, :] . W[m, :] (+ bias[m] added in float, as oneDNN's post-processing) for
 * r < rows, m < cols; A is (rows, k) u8/s8, W (cols, k) s8, C int32 with row stride ldc and
 * column stride csc (so conv can write channel-major planes). Both sides are widened to int16
 * first (W once, each A row once per thread), so the dot products are int16 x int16 -> int32
 * sums that gcc turns into pmaddwd; four columns share each pass over an A row. The sums are
 * exact whatever the order (integers), so the result is the same on every CPU. */
#define MXC_Q_CLONES __attribute__((target_clones("default", "avx2", "arch=skylake-avx512")))

MXC_Q_CLONES static int32_t mxc_q_dot16(const int16_t *a, const int16_t *w, int64_t k) {
  int32_t s = 0;
  int64_t j;
  for (j = 0; j < k; j++) s += (int32_t)a[j] * (int32_t)w[j];
  return s;
}

MXC_Q_CLONES static void mxc_q_dot16x4(const int16_t *a, const int16_t *w, int64_t k,
                                       int32_t *out) {
  const int16_t *w0 = w, *w1 = w + k, *w2 = w + 2 * k, *w3 = w + 3 * k;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t j;
  for (j = 0; j < k; j++) {
    const int32_t x = a[j];
    s0 += x * w0[j];
    s1 += x * w1[j];
    s2 += x * w2[j];
    s3 += x * w3[j];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

static void mxc_q_widen(const void *src, int is_signed, int16_t *dst, int64_t n) {
  int64_t j;
  if (is_signed)
    for (j = 0; j < n; j++) dst[j] = ((const int8_t *)src)[j];
  else
    for (j = 0; j < n; j++) dst[j] = ((const uint8_t *)src)[j];
}

static int mxc_q_gemm(const void *A, int a_signed, const int8_t *W, const float *bias,
                      int32_t *C, int64_t rows, int64_t cols, int64_t k, int64_t ldc,
                      int64_t csc, int nt) {
  int16_t *w16 = (int16_t *)malloc((size_t)(cols * k > 0 ? cols * k : 1) * sizeof(int16_t));
  int fail = w16 == NULL;
  int64_t r;
  if (fail) return -1;
  mxc_q_widen(W, 1, w16, cols * k);
  (void)nt;
  MXC_PRAGMA(omp parallel num_threads(nt))
  {
    int16_t *a16 = (int16_t *)malloc((size_t)(k > 0 ? k : 1) * sizeof(int16_t));
    if (a16 == NULL) {
      fail = 1;
    } else {
      MXC_PRAGMA(omp for schedule(static))
      for (r = 0; r < rows; r++) {
        const void *ar = a_signed ? (const void *)((const int8_t *)A + r * k)
                                  : (const void *)((const uint8_t *)A + r * k);
        int32_t acc[4];
        int64_t m = 0, q;
        mxc_q_widen(ar, a_signed, a16, k);
        for (; m + 4 <= cols; m += 4) {
          mxc_q_dot16x4(a16, w16 + m * k, k, acc);
          for (q = 0; q < 4; q++)
            C[r * ldc + (m + q) * csc] =
                bias ? mxc_q_round_s32((float)acc[q] + bias[m + q]) : acc[q];
        }
        for (; m < cols; m++) {
          const int32_t v = mxc_q_dot16(a16, w16 + m * k, k);
          C[r * ldc + m * csc] = bias ? mxc_q_round_s32((float)v + bias[m]) : v;
        }
      }
      free(a16);
    }
  }
  free(w16);
  return fail ? -1 : 0;
}

/* The int8 bias of a product (FC, conv) in the int32 output's levels: bias level b stands for
 * b * b_real / 127.5 and one output level for (d_real / d_range) * (w_real / 127.5), as oneDNN's
 * post-processing scales it. Inputs from slot nb on: min/max of data, weight, bias. NULL (with
 * the message in c->err) when out of memory. */
static float *mxc_q_product_bias(mxc_opcall *c, const char *op, int nb, float d_real,
                                 float w_real, int a_signed, int64_t m) {
  const float b_real = mxc_q_maxabs(mxc_q_scalar(&c->in[nb + 4]), mxc_q_scalar(&c->in[nb + 5]));
  const float d_scale = (a_signed ? MXC_Q_INT8_RANGE : MXC_Q_UINT8_RANGE) / d_real;
  const float w_scale = MXC_Q_INT8_RANGE / w_real;
  const float rescale = d_scale * w_scale * b_real / MXC_Q_INT8_RANGE;
  const int8_t *b = (const int8_t *)c->in[2].data;
  float *bias = (float *)malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
  int64_t i;
  if (bias == NULL) {
    snprintf(c->err, MXC_ERR_LEN, "%s: out of memory", op);
    return NULL;
  }
  for (i = 0; i < m; i++) bias[i] = (float)(int32_t)((float)b[i] * rescale);
  return bias;
}

/* _contrib_quantized_fully_connected. in: data (rows, k) u8/s8, weight (m, k) s8, [bias (m) s8],
 * then min/max of data, weight[, bias]; out: int32 (rows, m), min, max. iattr: no_bias. */
static int mxc_q_fully_connected(mxc_opcall *c) {
  const int no_bias = c->iattr[0] != 0;
  const mxc_tensor *x = &c->in[0], *w = &c->in[1];
  const int nb = no_bias ? 2 : 3;
  const float d_real = mxc_q_maxabs(mxc_q_scalar(&c->in[nb]), mxc_q_scalar(&c->in[nb + 1]));
  const float w_real = mxc_q_maxabs(mxc_q_scalar(&c->in[nb + 2]), mxc_q_scalar(&c->in[nb + 3]));
  const int a_signed = x->dtype == MXC_INT8;
  const int64_t m = w->shape[0], k = w->shape[1];
  const int64_t rows = k ? x->size / k : 0;
  float *bias = NULL;
  if (!no_bias && (bias = mxc_q_product_bias(c, "_contrib_quantized_fully_connected", nb, d_real,
                                             w_real, a_signed, m)) == NULL)
    return -1;
  const int rc = mxc_q_gemm(x->data, a_signed, (const int8_t *)w->data, bias,
                            (int32_t *)c->out[0].data, rows, m, k, m, 1,
                            mxc_q_threads(c, rows * m * k));
  free(bias);
  if (rc != 0) {
    snprintf(c->err, MXC_ERR_LEN, "_contrib_quantized_fully_connected: out of memory");
    return -1;
  }
  mxc_q_product_range(d_real, 127.0f, w_real, a_signed ? 127.0f : 255.0f,
                      (float *)c->out[1].data, (float *)c->out[2].data);
  return 0;
}

/* _contrib_quantized_conv, 2-D NCHW (1-D arrives as height 1). in: data u8/s8 (n, c, h, w),
 * weight s8 (f, c/g, kh, kw), [bias s8 (f)], min/max of data, weight[, bias]; out int32
 * (n, f, oh, ow), min, max. iattr: no_bias, groups, kh, kw, sh, sw, ph, pw, dh, dw.
 * Per image and group the windows are gathered into rows (im2col, padding 0, which is the zero
 * of both u8 and s8) and multiplied by the group's filters. */
static int mxc_q_conv(mxc_opcall *c) {
  const int64_t *ia = c->iattr;
  const int no_bias = ia[0] != 0;
  const int64_t g = ia[1], kh = ia[2], kw = ia[3], sh = ia[4], sw = ia[5], ph = ia[6], pw = ia[7],
                dh = ia[8], dw = ia[9];
  const mxc_tensor *x = &c->in[0], *w = &c->in[1];
  mxc_tensor *y = &c->out[0];
  const int nb = no_bias ? 2 : 3;
  const float d_real = mxc_q_maxabs(mxc_q_scalar(&c->in[nb]), mxc_q_scalar(&c->in[nb + 1]));
  const float w_real = mxc_q_maxabs(mxc_q_scalar(&c->in[nb + 2]), mxc_q_scalar(&c->in[nb + 3]));
  const int64_t n = x->shape[0], ch = x->shape[1], h = x->shape[2], wd = x->shape[3];
  const int64_t f = y->shape[1], oh = y->shape[2], ow = y->shape[3];
  const int64_t cg = ch / g, fg = f / g, k = cg * kh * kw, npix = oh * ow;
  const int a_signed = x->dtype == MXC_INT8;
  float *bias = NULL;
  int8_t *cols;
  int64_t b, gi;
  if (!no_bias && (bias = mxc_q_product_bias(c, "_contrib_quantized_conv", nb, d_real, w_real,
                                             a_signed, f)) == NULL)
    return -1;
  cols = (int8_t *)malloc((size_t)(npix * k > 0 ? npix * k : 1));
  if (cols == NULL) {
    free(bias);
    snprintf(c->err, MXC_ERR_LEN, "_contrib_quantized_conv: out of memory");
    return -1;
  }
  const int nt = mxc_q_threads(c, npix * k * fg);
  for (b = 0; b < n; b++) {
    for (gi = 0; gi < g; gi++) {
      const int8_t *xg = (const int8_t *)x->data + (b * ch + gi * cg) * h * wd;
      int64_t p;
      (void)nt;
      MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
      for (p = 0; p < npix; p++) {
        const int64_t oy = p / ow, ox = p % ow;
        int8_t *row = cols + p * k;
        int64_t ci, ky, kx;
        for (ci = 0; ci < cg; ci++)
          for (ky = 0; ky < kh; ky++) {
            const int64_t iy = oy * sh - ph + ky * dh;
            for (kx = 0; kx < kw; kx++) {
              const int64_t ix = ox * sw - pw + kx * dw;
              *row++ = (iy >= 0 && iy < h && ix >= 0 && ix < wd) ? xg[(ci * h + iy) * wd + ix] : 0;
            }
          }
      }
      /* out[b, gi*fg + m, p] = cols[p, :] . w[gi*fg + m, :] */
      if (mxc_q_gemm(cols, a_signed, (const int8_t *)w->data + gi * fg * k,
                     bias ? bias + gi * fg : NULL,
                     (int32_t *)y->data + (b * f + gi * fg) * npix, npix, fg, k, 1, npix,
                     nt) != 0) {
        free(cols);
        free(bias);
        snprintf(c->err, MXC_ERR_LEN, "_contrib_quantized_conv: out of memory");
        return -1;
      }
    }
  }
  free(cols);
  free(bias);
  mxc_q_product_range(d_real, 127.0f, w_real, a_signed ? 127.0f : 255.0f,
                      (float *)c->out[1].data, (float *)c->out[2].data);
  return 0;
}

/* _contrib_quantized_pooling, max or avg over NC + up to 3 spatial dims (channels first) of
 * u8/s8 data; the range passes through. iattr: kernel[3], stride[3], pad[3] (padded to 3-D as
 * the float Pooling kernel's slots), avg, count_include_pad. avg is nearbyint(float(sum) /
 * count), as oneDNN's int8 pooling. */
#define MXC_Q_POOL(tag, T)                                                                       \
  static void mxc_q_pool_##tag(const T *x, T *y, const int64_t *ia, const int64_t *is,           \
                               const int64_t *os, int64_t planes, int nt) {                      \
    const int64_t isz = is[0] * is[1] * is[2], osz = os[0] * os[1] * os[2];                      \
    const int avg = ia[9] != 0, incl = ia[10] != 0;                                             \
    int64_t pl;                                                                                  \
    (void)nt;                                                                                    \
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                \
    for (pl = 0; pl < planes; pl++) {                                                            \
      const T *xp = x + pl * isz;                                                                \
      T *yp = y + pl * osz;                                                                      \
      int64_t od, oy, ox;                                                                        \
      for (od = 0; od < os[0]; od++)                                                             \
        for (oy = 0; oy < os[1]; oy++)                                                           \
          for (ox = 0; ox < os[2]; ox++) {                                                       \
            const int64_t d0 = od * ia[3] - ia[6], y0 = oy * ia[4] - ia[7],                     \
                          x0 = ox * ia[5] - ia[8];                                               \
            const int64_t d1 = d0 + ia[0], y1 = y0 + ia[1], x1 = x0 + ia[2];                    \
            const int64_t ds = d0 < 0 ? 0 : d0, ys = y0 < 0 ? 0 : y0, xs = x0 < 0 ? 0 : x0;     \
            const int64_t de = d1 < is[0] ? d1 : is[0], ye = y1 < is[1] ? y1 : is[1],           \
                          xe = x1 < is[2] ? x1 : is[2];                                          \
            int32_t best = (T)-1 < 0 ? -128 : 0, sum = 0;                                        \
            int64_t dd, yy, xx;                                                                  \
            for (dd = ds; dd < de; dd++)                                                         \
              for (yy = ys; yy < ye; yy++)                                                       \
                for (xx = xs; xx < xe; xx++) {                                                   \
                  const int32_t v = xp[(dd * is[1] + yy) * is[2] + xx];                          \
                  best = v > best ? v : best;                                                    \
                  sum += v;                                                                      \
                }                                                                                \
            if (avg) {                                                                           \
              int64_t cnt;                                                                       \
              if (incl) {                                                                        \
                const int64_t pd1 = d1 < is[0] + ia[6] ? d1 : is[0] + ia[6];                     \
                const int64_t py1 = y1 < is[1] + ia[7] ? y1 : is[1] + ia[7];                     \
                const int64_t px1 = x1 < is[2] + ia[8] ? x1 : is[2] + ia[8];                     \
                cnt = (pd1 - d0) * (py1 - y0) * (px1 - x0);                                      \
              } else {                                                                           \
                cnt = (de - ds) * (ye - ys) * (xe - xs);                                         \
              }                                                                                  \
              const float v = cnt > 0 ? (float)sum / (float)cnt : 0.0f;                          \
              yp[(od * os[1] + oy) * os[2] + ox] = mxc_q_round_##tag(v);                         \
            } else {                                                                             \
              yp[(od * os[1] + oy) * os[2] + ox] = (T)best;                                      \
            }                                                                                    \
          }                                                                                      \
    }                                                                                            \
  }
MXC_Q_POOL(s8, int8_t)
MXC_Q_POOL(u8, uint8_t)

static void mxc_q_pass_range(mxc_opcall *c) {
  *(float *)c->out[1].data = mxc_q_scalar(&c->in[1]);
  *(float *)c->out[2].data = mxc_q_scalar(&c->in[2]);
}

static int mxc_q_pooling(mxc_opcall *c) {
  const mxc_tensor *x = &c->in[0];
  mxc_tensor *y = &c->out[0];
  const int nsp = x->ndim - 2;
  int64_t is[3] = {1, 1, 1}, os[3] = {1, 1, 1};
  int j;
  for (j = 0; j < nsp; j++) {
    is[3 - nsp + j] = x->shape[2 + j];
    os[3 - nsp + j] = y->shape[2 + j];
  }
  const int64_t ia[11] = {c->iattr[0], c->iattr[1], c->iattr[2], c->iattr[3], c->iattr[4],
                          c->iattr[5], c->iattr[6], c->iattr[7], c->iattr[8], c->iattr[9],
                          c->iattr[10]};
  const int64_t planes = x->shape[0] * x->shape[1];
  const int nt = mxc_q_threads(c, y->size * ia[0] * ia[1] * ia[2]);
  if (x->dtype == MXC_INT8)
    mxc_q_pool_s8((const int8_t *)x->data, (int8_t *)y->data, ia, is, os, planes, nt);
  else
    mxc_q_pool_u8((const uint8_t *)x->data, (uint8_t *)y->data, ia, is, os, planes, nt);
  mxc_q_pass_range(c);
  return 0;
}

/* _contrib_quantized_act (relu): the output is int8 (MXNet's type rule): max(x, 0) of int8
 * data, the bytes of uint8 data unchanged (oneDNN's relu of u8 is the identity, written into
 * the int8 output as is); the range passes through. */
static int mxc_q_relu(mxc_opcall *c) {
  const int64_t n = c->in[0].size;
  if (c->in[0].dtype == MXC_INT8) {
    const int8_t *x = (const int8_t *)c->in[0].data;
    int8_t *y = (int8_t *)c->out[0].data;
    int64_t i;
    for (i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;
  } else if (c->out[0].data != c->in[0].data) {
    memcpy(c->out[0].data, c->in[0].data, (size_t)n);
  }
  mxc_q_pass_range(c);
  return 0;
}

/* _contrib_quantized_flatten: the bytes unchanged, the range passed through. */
static int mxc_q_flatten(mxc_opcall *c) {
  if (c->out[0].data != c->in[0].data) memcpy(c->out[0].data, c->in[0].data, (size_t)c->in[0].size);
  mxc_q_pass_range(c);
  return 0;
}


/* _contrib_quantized_elemwise_add (MKLDNNQuantizedElemwiseAddForward): in a, b (u8/s8, one
 * shape), min/max of a and of b; out c, min, max. iattr: calibrated; fattr: min_calib_range,
 * max_calib_range. c = saturate(nearbyint(s_a * a + s_b * b)) into c's type (int32 unless
 * calibrated) with oneDNN sum's scales: the calibrated output scale over each input's scale,
 * or each input's share of the summed range |a| + |b|. When one input is uint8 and the other
 * int8, the uint8 one is first reordered to int8 with its scale (rounded and saturated) and
 * enters the sum with scale 1. */
static int mxc_q_elemwise_add(mxc_opcall *c) {
  const mxc_tensor *A = &c->in[0], *B = &c->in[1];
  mxc_tensor *C = &c->out[0];
  const float a_abs = mxc_q_maxabs(mxc_q_scalar(&c->in[2]), mxc_q_scalar(&c->in[3]));
  const float b_abs = mxc_q_maxabs(mxc_q_scalar(&c->in[4]), mxc_q_scalar(&c->in[5]));
  const int a_s8 = A->dtype == MXC_INT8, b_s8 = B->dtype == MXC_INT8;
  const float a_range = a_s8 ? MXC_Q_INT8_RANGE : MXC_Q_UINT8_RANGE;
  const float a_scale = a_range / a_abs;
  const float b_scale = (b_s8 ? MXC_Q_INT8_RANGE : MXC_Q_UINT8_RANGE) / b_abs;
  const int calibrated = c->iattr[0] != 0;
  const float out_range = C->dtype == MXC_INT8 ? MXC_Q_INT8_RANGE
                          : C->dtype == MXC_UINT8 ? MXC_Q_UINT8_RANGE : MXC_Q_INT32_RANGE;
  float omin, omax, out_scale = 0.0f, s0 = 1.0f, s1 = 1.0f, u8s = 0.0f;
  if (calibrated) {
    omin = (float)c->fattr[0];
    omax = (float)c->fattr[1];
    out_scale = out_range / mxc_q_maxabs(omin, omax);
  } else {
    omax = a_abs + b_abs;
    omin = -omax;
  }
  if (a_s8 != b_s8) {
    if (a_s8) {
      u8s = calibrated ? out_scale / b_scale
                       : b_abs * out_range / ((a_abs + b_abs) * MXC_Q_UINT8_RANGE);
      s0 = calibrated ? out_scale / a_scale : a_abs * out_range / ((a_abs + b_abs) * a_range);
    } else {
      u8s = calibrated ? out_scale / a_scale : a_abs * out_range / ((a_abs + b_abs) * a_range);
      s1 = calibrated ? out_scale / b_scale
                      : b_abs * out_range / ((a_abs + b_abs) * MXC_Q_INT8_RANGE);
    }
  } else {
    s0 = calibrated ? out_scale / a_scale : a_abs * out_range / ((a_abs + b_abs) * a_range);
    s1 = calibrated ? out_scale / b_scale : b_abs * out_range / ((a_abs + b_abs) * a_range);
  }
  const int64_t n = C->size;
  const int nt = mxc_q_threads(c, n);
  int64_t i;
  (void)nt;
  MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
  for (i = 0; i < n; i++) {
    float a = a_s8 ? (float)((const int8_t *)A->data)[i] : (float)((const uint8_t *)A->data)[i];
    float b = b_s8 ? (float)((const int8_t *)B->data)[i] : (float)((const uint8_t *)B->data)[i];
    if (a_s8 != b_s8) {
      if (a_s8) b = (float)mxc_q_round_s8(b * u8s);
      else a = (float)mxc_q_round_s8(a * u8s);
    }
    const float v = s1 * b + s0 * a;
    if (C->dtype == MXC_INT8) ((int8_t *)C->data)[i] = mxc_q_round_s8(v);
    else if (C->dtype == MXC_UINT8) ((uint8_t *)C->data)[i] = mxc_q_round_u8(v);
    else ((int32_t *)C->data)[i] = mxc_q_round_s32(v);
  }
  *(float *)c->out[1].data = omin;
  *(float *)c->out[2].data = omax;
  return 0;
}

/* _contrib_quantized_concat (MKLDNNQuantizedConcatForward): in n arrays (u8/s8), then min/max of
 * each; out the concatenation along iattr[1] (axis) in int8 (if any input is int8) or uint8,
 * min, max. iattr[0] = n. The output range is [min(0, mins), max(0, maxes)]; an input whose
 * scale differs from the output's is reordered with out_scale / in_scale (rounded,
 * saturated), one with the same scale is copied. */
static int mxc_q_concat(mxc_opcall *c) {
  const int64_t n = c->iattr[0], axis = c->iattr[1];
  mxc_tensor *Y = &c->out[0];
  float neg = 0.0f, pos = 0.0f;
  int64_t i, j, outer = 1, inner = 1, offset = 0;
  for (i = 0; i < n; i++) {
    const float lo = mxc_q_scalar(&c->in[n + 2 * i]), hi = mxc_q_scalar(&c->in[n + 2 * i + 1]);
    if (lo < neg) neg = lo;
    if (hi > pos) pos = hi;
  }
  const int y_s8 = Y->dtype == MXC_INT8;
  const float out_scale = (y_s8 ? MXC_Q_INT8_RANGE : MXC_Q_UINT8_RANGE) / mxc_q_maxabs(neg, pos);
  for (j = 0; j < axis; j++) outer *= Y->shape[j];
  for (j = axis + 1; j < Y->ndim; j++) inner *= Y->shape[j];
  const int64_t ylen = Y->shape[axis] * inner;
  for (i = 0; i < n; i++) {
    const mxc_tensor *X = &c->in[i];
    const int x_s8 = X->dtype == MXC_INT8;
    const float in_scale = (x_s8 ? MXC_Q_INT8_RANGE : MXC_Q_UINT8_RANGE) /
                           mxc_q_maxabs(mxc_q_scalar(&c->in[n + 2 * i]),
                                        mxc_q_scalar(&c->in[n + 2 * i + 1]));
    const int same = in_scale == out_scale;
    const float s = out_scale / in_scale;
    const int64_t xlen = X->shape[axis] * inner;
    int64_t o;
    for (o = 0; o < outer; o++) {
      const uint8_t *src = (const uint8_t *)X->data + o * xlen;
      uint8_t *dst = (uint8_t *)Y->data + o * ylen + offset;
      int64_t k;
      if (same) {
        memcpy(dst, src, (size_t)xlen);
      } else if (y_s8) {
        for (k = 0; k < xlen; k++)
          ((int8_t *)dst)[k] = mxc_q_round_s8(
              (x_s8 ? (float)((const int8_t *)src)[k] : (float)src[k]) * s);
      } else {
        for (k = 0; k < xlen; k++)
          dst[k] = mxc_q_round_u8((x_s8 ? (float)((const int8_t *)src)[k] : (float)src[k]) * s);
      }
    }
    offset += xlen;
  }
  *(float *)c->out[1].data = neg;
  *(float *)c->out[2].data = pos;
  return 0;
}

/* _contrib_calibrate_entropy: the threshold of least KL divergence between a histogram
 * (float32 counts over symmetric bins, in: hist, hist_edges) and its quantization into
 * iattr[0] = num_quantized_bins bins; out: threshold, divergence. MXNet's loop
 * (calibrate.cc) with its types: the sliced counts are integers (size_t), the merged bins int
 * sums, the distributions and the entropy float. */
static int mxc_q_smooth(float *p, int64_t n) {
  const float eps = 0.0001f;
  int64_t zeros = 0, i;
  for (i = 0; i < n; i++) zeros += p[i] == 0.0f;
  if (zeros == n) return -1;
  const float eps1 = eps * (float)zeros / (float)(n - zeros);
  if (eps1 >= 1.0f) return -1;
  for (i = 0; i < n; i++) p[i] += eps * (float)(p[i] == 0.0f) - eps1 * (float)(p[i] != 0.0f);
  return 0;
}

static int mxc_q_calibrate_entropy(mxc_opcall *c) {
  const float *hist = (const float *)c->in[0].data, *edges = (const float *)c->in[1].data;
  const int64_t nbins = c->in[0].size, nq = c->iattr[0];
  const int64_t zero = nbins / 2, half = nq / 2;
  if (nq < 1 || c->in[1].size != nbins + 1 || half > zero) {
    snprintf(c->err, MXC_ERR_LEN, "_contrib_calibrate_entropy: needs hist_edges of hist's size + 1 "
             "and num_quantized_bins (%lld) in [1, %lld]", (long long)nq, (long long)nbins);
    return -1;
  }
  const int64_t nt = zero + 1 - half;
  float *thr = (float *)malloc((size_t)nt * sizeof(float));
  float *div = (float *)malloc((size_t)nt * sizeof(float));
  int fail = thr == NULL || div == NULL;
  int64_t i;
  MXC_PRAGMA(omp parallel for num_threads(c->nthreads) schedule(dynamic, 16))
  for (i = half; i <= zero; i++) {
    if (fail) continue;
    const int64_t start = zero - i, stop = zero + i + 1, len = stop - start;
    uint64_t *sliced = (uint64_t *)calloc((size_t)len, sizeof(uint64_t));
    float *p = (float *)calloc((size_t)len, sizeof(float));
    float *q = (float *)calloc((size_t)len, sizeof(float));
    float *qb = (float *)calloc((size_t)nq, sizeof(float));
    if (!sliced || !p || !q || !qb) {
      fail = 1;
    } else {
      int64_t j, k;
      thr[i - half] = edges[stop];
      for (j = 0; j < nbins; j++) {
        if (j <= start) p[0] += hist[j];
        else if (j >= stop) p[len - 1] += hist[j];
        else {
          sliced[j - start] = (uint64_t)hist[j];
          p[j - start] = hist[j];
        }
      }
      const int64_t merged = len / nq;
      for (j = 0; j < nq; j++) {
        int s = 0;
        for (k = j * merged; k < (j + 1) * merged; k++) s += (int)sliced[k];
        qb[j] = (float)s;
      }
      {
        int s = 0;
        for (k = nq * merged; k < len; k++) s += (int)sliced[k];
        qb[nq - 1] += (float)s;
      }
      for (j = 0; j < nq; j++) {
        const int64_t s0 = j * merged, s1 = (j == nq - 1) ? len : (j + 1) * merged;
        int norm = 0;
        for (k = s0; k < s1; k++) norm += sliced[k] != 0;
        if (norm)
          for (k = s0; k < s1; k++)
            if (p[k] != 0.0f) q[k] = qb[j] / (float)norm;
      }
      if (mxc_q_smooth(p, len) != 0 || mxc_q_smooth(q, len) != 0) {
        /* MXNet: an all-zero p gives an empty vector and its entropy check fails; an all-zero
         * q gives an infinite divergence */
        div[i - half] = INFINITY;
      } else {
        float ps = 0.0f, qs = 0.0f, e = 0.0f;
        for (k = 0; k < len; k++) ps += p[k];
        for (k = 0; k < len; k++) qs += q[k];
        for (k = 0; k < len; k++) {
          const float a = p[k] / ps, b = q[k] / qs;
          if (a != 0.0f && b != 0.0f) e += a * logf(a / b);
        }
        div[i - half] = e;
      }
    }
    free(sliced);
    free(p);
    free(q);
    free(qb);
  }
  if (fail) {
    free(thr);
    free(div);
    snprintf(c->err, MXC_ERR_LEN, "_contrib_calibrate_entropy: out of memory");
    return -1;
  }
  int64_t best = 0;
  float mind = FLT_MAX;
  for (i = 0; i < nt; i++)
    if (div[i] < mind) {
      mind = div[i];
      best = i;
    }
  *(float *)c->out[0].data = thr[best];
  *(float *)c->out[1].data = mind;
  free(thr);
  free(div);
  return 0;
}

/* _contrib_quantized_batch_norm (MKLDNNQuantizedBatchNormForward): in data (u8/s8), gamma, beta,
 * moving_mean, moving_var (float32, `channels` each), min/max of data; out s8, min, max (the
 * calibrated range). iattr: outer, channels, inner (the data as (outer, channels, inner) around
 * its channel axis); fattr: eps, min_calib_range, max_calib_range. MXNet folds the statistics
 * into oneDNN's scale/shift over the s8 domain, w = gamma / sqrt(var + eps) * |data| / |out| and
 * b = (beta - mean * gamma / sqrt(var + eps)) * 127.5 / |out|, and runs oneDNN's int8 batch norm
 * with mean 0 and variance 1, which still divides by sqrt(1 + eps): y = round(w / sqrt(1 + eps)
 * * x + b), saturated. gamma is used as given (fix_gamma has no effect here, as in MXNet). uint8
 * data is first reordered to int8 with scale 127.5 / 255.5 (rounded, saturated). */
static int mxc_q_batch_norm(mxc_opcall *c) {
  const mxc_tensor *X = &c->in[0];
  const int64_t outer = c->iattr[0], ch = c->iattr[1], inner = c->iattr[2];
  const double eps = c->fattr[0];
  const float d_abs = mxc_q_maxabs(mxc_q_scalar(&c->in[5]), mxc_q_scalar(&c->in[6]));
  const float omin = (float)c->fattr[1], omax = (float)c->fattr[2];
  const float o_abs = mxc_q_maxabs(omin, omax);
  const float *gamma = (const float *)c->in[1].data, *beta = (const float *)c->in[2].data;
  const float *mean = (const float *)c->in[3].data, *var = (const float *)c->in[4].data;
  const float unit = sqrtf(1.0f + (float)eps);
  const float u8s = MXC_Q_INT8_RANGE / MXC_Q_UINT8_RANGE;
  const int u8 = X->dtype == MXC_UINT8;
  int8_t *y = (int8_t *)c->out[0].data;
  float *w = (float *)malloc(sizeof(float) * (size_t)(2 * ch + 1));
  if (w == NULL)
    return snprintf(c->err, MXC_ERR_LEN, "_contrib_quantized_batch_norm: out of memory"), -1;
  float *b = w + ch;
  int64_t k;
  for (k = 0; k < ch; k++) {
    const float invstd = (float)(1.0 / sqrt((double)var[k] + eps));
    w[k] = gamma[k] * invstd * d_abs / o_abs / unit;
    b[k] = (beta[k] - mean[k] * gamma[k] * invstd) * MXC_Q_INT8_RANGE / o_abs;
  }
  const int64_t rows = outer * ch;
  const int nt = mxc_q_threads(c, rows * inner);
  int64_t r;
  (void)nt;
  MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
  for (r = 0; r < rows; r++) {
    const int64_t kk = r % ch, base = r * inner;
    const float sw = w[kk], sb = b[kk];
    int64_t i;
    if (u8) {
      const uint8_t *x = (const uint8_t *)X->data + base;
      for (i = 0; i < inner; i++)
        y[base + i] = mxc_q_round_s8(sw * (float)mxc_q_round_s8((float)x[i] * u8s) + sb);
    } else {
      const int8_t *x = (const int8_t *)X->data + base;
      for (i = 0; i < inner; i++) y[base + i] = mxc_q_round_s8(sw * (float)x[i] + sb);
    }
  }
  free(w);
  *(float *)c->out[1].data = omin;
  *(float *)c->out[2].data = omax;
  return 0;
}

/* _contrib_quantized_elemwise_mul (QuantizedElemwiseMulOpForward, MXNet's plain CPU loop): in
 * lhs, rhs (s8, one shape), min/max of lhs and of rhs; out c (and its min, max unless
 * float_output). iattr: calibrated, float_output; fattr: min_calib_range, max_calib_range.
 * Each scale is 127.5 / max(|min|, |max|). float_output: c = a * b / (s_a * s_b) in float32.
 * Calibrated: c = int8(a * b * (127.5 / |calib|) / s_a / s_b), truncated toward zero (the C cast
 * of MXNet's loop) and saturated at +-127 (MXNet's cast wraps products past the calibrated range
 * round: 1.5x the range reads as its negative). Otherwise c = a * b
 * in int32 with the S8S8 product range (one level of each times 2^31). */
static int mxc_q_elemwise_mul(mxc_opcall *c) {
  const int8_t *a = (const int8_t *)c->in[0].data, *bb = (const int8_t *)c->in[1].data;
  const float a_min = mxc_q_scalar(&c->in[2]), a_max = mxc_q_scalar(&c->in[3]);
  const float b_min = mxc_q_scalar(&c->in[4]), b_max = mxc_q_scalar(&c->in[5]);
  const int calibrated = c->iattr[0] != 0, float_out = c->iattr[1] != 0;
  const float a_scale = MXC_Q_INT8_RANGE / mxc_q_maxabs(a_min, a_max);
  const float b_scale = MXC_Q_INT8_RANGE / mxc_q_maxabs(b_min, b_max);
  const int64_t n = c->out[0].size;
  const int nt = mxc_q_threads(c, n);
  int64_t i;
  (void)nt;
  if (float_out) {
    const float scale = (float)(1.0 / a_scale / b_scale);
    float *o = (float *)c->out[0].data;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) o[i] = (float)(a[i] * bb[i]) * scale;
    return 0;
  }
  if (calibrated) {
    const float omin = (float)c->fattr[0], omax = (float)c->fattr[1];
    const float scale = MXC_Q_INT8_RANGE / mxc_q_maxabs(omin, omax) / a_scale / b_scale;
    int8_t *o = (int8_t *)c->out[0].data;
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
    for (i = 0; i < n; i++) {
      const int32_t v = (int32_t)((float)(a[i] * bb[i]) * scale);
      o[i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    *(float *)c->out[1].data = omin;
    *(float *)c->out[2].data = omax;
    return 0;
  }
  int32_t *o = (int32_t *)c->out[0].data;
  MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
  for (i = 0; i < n; i++) o[i] = (int32_t)a[i] * (int32_t)bb[i];
  mxc_q_product_range(mxc_q_maxabs(a_min, a_max), 127.0f, mxc_q_maxabs(b_min, b_max), 127.0f,
                      (float *)c->out[1].data, (float *)c->out[2].data);
  return 0;
}

/* _contrib_quantized_embedding (QuantizedEmbeddingOpForward): in data (indices of any real or
 * integer dtype, truncated toward zero and clipped into [0, input_dim), as Embedding), weight
 * (s8, input_dim x output_dim), min/max of weight; out the looked-up s8 rows, and the weight's
 * range. Keyed by the data's dtype. */
#define MXC_Q_EMBEDDING(SUF, T)                                                                 \
  static int mxc_q_embedding_##SUF(mxc_opcall *c) {                                            \
    const T *idx = (const T *)c->in[0].data;                                                   \
    const int8_t *w = (const int8_t *)c->in[1].data;                                           \
    const int64_t rows = c->in[1].shape[0], dim = c->in[1].shape[1], n = c->in[0].size;       \
    int8_t *y = (int8_t *)c->out[0].data;                                                      \
    const int nt = mxc_q_threads(c, n * dim);                                                  \
    int64_t i;                                                                                 \
    (void)nt;                                                                                  \
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                              \
    for (i = 0; i < n; i++) {                                                                  \
      const double v = (double)idx[i];                                                         \
      int64_t r = v != v ? 0 : v >= (double)rows ? rows - 1 : v <= 0 ? 0 : (int64_t)v;         \
      memcpy(y + i * dim, w + r * dim, (size_t)dim);                                           \
    }                                                                                          \
    *(float *)c->out[1].data = mxc_q_scalar(&c->in[2]);                                        \
    *(float *)c->out[2].data = mxc_q_scalar(&c->in[3]);                                        \
    return 0;                                                                                  \
  }
MXC_Q_EMBEDDING(f32, float)
MXC_Q_EMBEDDING(f64, double)
MXC_Q_EMBEDDING(s32, int32_t)
MXC_Q_EMBEDDING(s64, int64_t)
MXC_Q_EMBEDDING(u8, uint8_t)
MXC_Q_EMBEDDING(s8, int8_t)

static const mxc_code_entry mxc_quantization_table[] = {
  {"calibrate_entropy", MXC_FLOAT32, mxc_q_calibrate_entropy},
  {"quantize_v2", MXC_FLOAT32, mxc_q_quantize_v2},
  {"quantize_v2", MXC_INT8, mxc_q_quantize_v2},
  {"quantize_v2", MXC_UINT8, mxc_q_quantize_v2},
  {"quantize", MXC_FLOAT32, mxc_q_quantize},
  {"dequantize", MXC_UINT8, mxc_q_dequantize},
  {"dequantize", MXC_INT8, mxc_q_dequantize},
  {"dequantize", MXC_INT32, mxc_q_dequantize},
  {"requantize", MXC_INT32, mxc_q_requantize},
  {"fully_connected", MXC_UINT8, mxc_q_fully_connected},
  {"fully_connected", MXC_INT8, mxc_q_fully_connected},
  {"conv", MXC_UINT8, mxc_q_conv},
  {"conv", MXC_INT8, mxc_q_conv},
  {"pooling", MXC_UINT8, mxc_q_pooling},
  {"pooling", MXC_INT8, mxc_q_pooling},
  {"relu", MXC_UINT8, mxc_q_relu},
  {"relu", MXC_INT8, mxc_q_relu},
  {"flatten", MXC_UINT8, mxc_q_flatten},
  {"elemwise_add", MXC_UINT8, mxc_q_elemwise_add},
  {"elemwise_add", MXC_INT8, mxc_q_elemwise_add},
  {"concat", MXC_UINT8, mxc_q_concat},
  {"concat", MXC_INT8, mxc_q_concat},
  {"flatten", MXC_INT8, mxc_q_flatten},
  {"batch_norm", MXC_UINT8, mxc_q_batch_norm},
  {"batch_norm", MXC_INT8, mxc_q_batch_norm},
  {"elemwise_mul", MXC_INT8, mxc_q_elemwise_mul},
  {"embedding", MXC_FLOAT32, mxc_q_embedding_f32},
  {"embedding", MXC_FLOAT64, mxc_q_embedding_f64},
  {"embedding", MXC_INT32, mxc_q_embedding_s32},
  {"embedding", MXC_INT64, mxc_q_embedding_s64},
  {"embedding", MXC_UINT8, mxc_q_embedding_u8},
  {"embedding", MXC_INT8, mxc_q_embedding_s8},
  {NULL, 0, NULL}};

#endif
