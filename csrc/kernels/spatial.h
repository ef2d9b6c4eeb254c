/* CPU kernels of MXNet's ROIPooling, BilinearSampler (also SpatialTransformer's sampler) and
 * Correlation, forward and backward, on NCHW float32/float64 tensors; arithmetic in the tensor's
 * type as MXNet's CPU code.
 */
#ifndef MXC_KERNELS_SPATIAL_H
#define MXC_KERNELS_SPATIAL_H

#include <math.h>
#include <string.h>
#include <float.h>
#include "mxc/opcall.h"
#include "kernels/common.h"
#include "kernels/half.h"

#define MXC_SP_PAR_MIN 4096

#define MXC_SPATIAL_IMPL(S, T, SUF, LOWEST, LD, ST)                                                           \
  /* in: data (B, C, H, W), rois (R, 5); out: (R, C, PH, PW), argmax int64; fattr[0] scale */     \
  static int mxc_sp_roipool_##SUF(mxc_opcall *call) {                                              \
    const S *data = (const S *)call->in[0].data, *rois = (const S *)call->in[1].data;              \
    S *out = (S *)call->out[0].data;                                                               \
    int64_t *arg = (int64_t *)call->out[1].data;                                                   \
    const int64_t B = call->in[0].shape[0], C = call->in[0].shape[1];                              \
    const int64_t H = call->in[0].shape[2], W = call->in[0].shape[3];                              \
    const int64_t R = call->out[0].shape[0], PH = call->out[0].shape[2], PW = call->out[0].shape[3];\
    const int64_t rw = call->in[1].shape[1];                                                       \
    const float scale = (float)call->fattr[0];                                                     \
    int64_t rc;                                                                                    \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (R * C * PH * PW >= MXC_SP_PAR_MIN)) \
    for (rc = 0; rc < R * C; rc++) {                                                               \
      int64_t n = rc / C, c = rc % C, ph, pw;                                                      \
      const S *roi = rois + n * rw;                                                                \
      int sw = (int)roundf((float)LD(roi[1]) * scale), sh = (int)roundf((float)LD(roi[2]) * scale);        \
      int ew = (int)roundf((float)LD(roi[3]) * scale), eh = (int)roundf((float)LD(roi[4]) * scale);        \
      int64_t bi = (int64_t)LD(roi[0]);                                                                \
      int invalid = bi < 0 || bi >= B;                                                             \
      int rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1, rwd = ew - sw + 1 > 1 ? ew - sw + 1 : 1;          \
      T bh = (T)rh / (T)PH, bw = (T)rwd / (T)PW;                                                   \
      int64_t base = invalid ? 0 : (bi * C + c) * H * W;                                           \
      for (ph = 0; ph < PH; ph++)                                                                  \
        for (pw = 0; pw < PW; pw++) {                                                              \
          int hs = (int)floor((T)ph * bh), ws = (int)floor((T)pw * bw);                            \
          int he = (int)ceil((T)(ph + 1) * bh), we = (int)ceil((T)(pw + 1) * bw);                  \
          int64_t o = (rc * PH + ph) * PW + pw, h, w;                                              \
          T best = LOWEST;                                                                         \
          int64_t bidx = -1;                                                                       \
          hs = hs + sh < 0 ? 0 : (hs + sh > H ? (int)H : hs + sh);                                 \
          he = he + sh < 0 ? 0 : (he + sh > H ? (int)H : he + sh);                                 \
          ws = ws + sw < 0 ? 0 : (ws + sw > W ? (int)W : ws + sw);                                 \
          we = we + sw < 0 ? 0 : (we + sw > W ? (int)W : we + sw);                                 \
          if (he <= hs || we <= ws || invalid) { out[o] = ST((T)0); arg[o] = -1; continue; }              \
          for (h = hs; h < he; h++)                                                                \
            for (w = ws; w < we; w++) {                                                            \
              T v = LD(data[base + h * W + w]);                                                        \
              if (v > best) { best = v; bidx = base + h * W + w; }                                 \
            }                                                                                      \
          out[o] = ST(best);                                                                           \
          arg[o] = bidx;                                                                           \
        }                                                                                          \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* in: ograd (R, C, PH, PW), argmax int64; out: gdata (data's shape) */                          \
  static int mxc_sp_roipool_bwd_##SUF(mxc_opcall *call) {                                          \
    const S *g = (const S *)call->in[0].data;                                                      \
    const int64_t *arg = (const int64_t *)call->in[1].data;                                        \
    S *gd = (S *)call->out[0].data;                                                                \
    int64_t i, cnt = call->in[0].size;                                                             \
    memset(gd, 0, sizeof(S) * (size_t)call->out[0].size);                                          \
    for (i = 0; i < cnt; i++)                                                                      \
      if (arg[i] >= 0) ACC(gd[arg[i]], LD(g[i]));                                                         \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* in: data (N, C, IH, IW), grid (N, 2, OH, OW); out (N, C, OH, OW) */                           \
  static int mxc_sp_bilinear_##SUF(mxc_opcall *call) {                                             \
    const S *data = (const S *)call->in[0].data, *grid = (const S *)call->in[1].data;              \
    S *out = (S *)call->out[0].data;                                                               \
    const int64_t N = call->out[0].shape[0], C = call->out[0].shape[1];                            \
    const int64_t OH = call->out[0].shape[2], OW = call->out[0].shape[3];                          \
    const int64_t IH = call->in[0].shape[2], IW = call->in[0].shape[3];                            \
    int64_t nc;                                                                                    \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (N * C * OH * OW >= MXC_SP_PAR_MIN)) \
    for (nc = 0; nc < N * C; nc++) {                                                               \
      int64_t n = nc / C, h, w;                                                                    \
      const S *d = data + nc * IH * IW;                                                            \
      for (h = 0; h < OH; h++)                                                                     \
        for (w = 0; w < OW; w++) {                                                                 \
          int64_t gi = n * OH * OW * 2 + h * OW + w;                                               \
          T y = (LD(grid[gi + OH * OW]) + 1) * (T)(IH - 1) / 2;                                        \
          T x = (LD(grid[gi]) + 1) * (T)(IW - 1) / 2;                                                  \
          int64_t ty = (int64_t)floor(y), tx = (int64_t)floor(x);                                  \
          T wy = (T)1.0 - (y - (T)ty), wx = (T)1.0 - (x - (T)tx);                                  \
          T tl = 0, tr = 0, bl = 0, br = 0;                                                        \
          int iny0 = ty >= 0 && ty <= IH - 1, iny1 = ty + 1 >= 0 && ty + 1 <= IH - 1;              \
          int inx0 = tx >= 0 && tx <= IW - 1, inx1 = tx + 1 >= 0 && tx + 1 <= IW - 1;              \
          if (iny0 && inx0) tl = LD(d[ty * IW + tx]);                                                  \
          if (iny0 && inx1) tr = LD(d[ty * IW + tx + 1]);                                              \
          if (iny1 && inx0) bl = LD(d[(ty + 1) * IW + tx]);                                            \
          if (iny1 && inx1) br = LD(d[(ty + 1) * IW + tx + 1]);                                        \
          out[(nc * OH + h) * OW + w] = ST(tl * wy * wx + tr * wy * ((T)1.0 - wx) +                   \
                                        bl * ((T)1.0 - wy) * wx + br * ((T)1.0 - wy) * ((T)1.0 - wx)); \
        }                                                                                          \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* in: ograd (N, C, OH, OW), data, grid; out: gdata, ggrid */                                    \
  static int mxc_sp_bilinear_bwd_##SUF(mxc_opcall *call) {                                         \
    const S *g = (const S *)call->in[0].data, *data = (const S *)call->in[1].data;                 \
    const S *grid = (const S *)call->in[2].data;                                                   \
    S *gd = (S *)call->out[0].data, *gg = (S *)call->out[1].data;                                  \
    const int64_t N = call->in[0].shape[0], C = call->in[0].shape[1];                              \
    const int64_t OH = call->in[0].shape[2], OW = call->in[0].shape[3];                            \
    const int64_t IH = call->in[1].shape[2], IW = call->in[1].shape[3];                            \
    int64_t n;                                                                                     \
    memset(gd, 0, sizeof(S) * (size_t)call->out[0].size);                                          \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (N * C * OH * OW >= MXC_SP_PAR_MIN)) \
    for (n = 0; n < N; n++) {                                                                      \
      int64_t h, w, c;                                                                             \
      for (h = 0; h < OH; h++)                                                                     \
        for (w = 0; w < OW; w++) {                                                                 \
          int64_t gi = n * OH * OW * 2 + h * OW + w;                                               \
          T y = (LD(grid[gi + OH * OW]) + 1) * (T)(IH - 1) / 2;                                        \
          T x = (LD(grid[gi]) + 1) * (T)(IW - 1) / 2;                                                  \
          int64_t ty = (int64_t)floor(y), tx = (int64_t)floor(x);                                  \
          T wy = (T)1.0 - (y - (T)ty), wx = (T)1.0 - (x - (T)tx);                                  \
          T gy = 0, gx = 0;                                                                        \
          int iny0 = ty >= 0 && ty <= IH - 1, iny1 = ty + 1 >= 0 && ty + 1 <= IH - 1;              \
          int inx0 = tx >= 0 && tx <= IW - 1, inx1 = tx + 1 >= 0 && tx + 1 <= IW - 1;              \
          for (c = 0; c < C; c++) {                                                                \
            const S *d = data + (n * C + c) * IH * IW;                                             \
            S *dd = gd + (n * C + c) * IH * IW;                                                    \
            T go = LD(g[((n * C + c) * OH + h) * OW + w]);                                             \
            T tl = 0, tr = 0, bl = 0, br = 0;                                                      \
            if (iny0 && inx0) { ACC(dd[ty * IW + tx], go * wy * wx); tl = LD(d[ty * IW + tx]); }           \
            if (iny0 && inx1) {                                                                    \
              ACC(dd[ty * IW + tx + 1], go * wy * ((T)1.0 - wx)); tr = LD(d[ty * IW + tx + 1]);           \
            }                                                                                      \
            if (iny1 && inx0) {                                                                    \
              ACC(dd[(ty + 1) * IW + tx], go * ((T)1.0 - wy) * wx); bl = LD(d[(ty + 1) * IW + tx]);       \
            }                                                                                      \
            if (iny1 && inx1) {                                                                    \
              ACC(dd[(ty + 1) * IW + tx + 1], go * ((T)1.0 - wy) * ((T)1.0 - wx));                    \
              br = LD(d[(ty + 1) * IW + tx + 1]);                                                      \
            }                                                                                      \
            gy -= go * (tr - br + (tl - tr - bl + br) * wx);                                       \
            gx -= go * (bl - br + (tl - tr - bl + br) * wy);                                       \
          }                                                                                        \
          gg[gi + OH * OW] = ST(gy * (T)(IH - 1) / 2);                                                 \
          gg[gi] = ST(gx * (T)(IW - 1) / 2);                                                           \
        }                                                                                          \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* iattr: kernel_size, max_displacement, stride1, stride2, pad_size, is_multiply */             \
  static int mxc_sp_corr_##SUF(mxc_opcall *call) {                                                 \
    const S *d1 = (const S *)call->in[0].data, *d2 = (const S *)call->in[1].data;                  \
    S *out = (S *)call->out[0].data;                                                               \
    const int64_t K = call->iattr[0], MD = call->iattr[1], S1 = call->iattr[2];                    \
    const int64_t S2 = call->iattr[3], P = call->iattr[4], mul = call->iattr[5];                   \
    const int64_t N = call->in[0].shape[0], C = call->in[0].shape[1];                              \
    const int64_t H = call->in[0].shape[2], W = call->in[0].shape[3];                              \
    const int64_t TC = call->out[0].shape[1], TH = call->out[0].shape[2], TW = call->out[0].shape[3]; \
    const int64_t R = MD / S2, GW = 2 * R + 1;                                                     \
    const T sumelems = (T)(K * K * C);                                                             \
    int64_t ntc;                                                                                   \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (N * TC * TH * TW >= MXC_SP_PAR_MIN)) \
    for (ntc = 0; ntc < N * TC; ntc++) {                                                           \
      int64_t n = ntc / TC, tc = ntc % TC, i, j, h, w, c;                                          \
      int64_t s2o = (tc % GW - R) * S2, s2p = (tc / GW - R) * S2;                                  \
      for (i = 0; i < TH; i++)                                                                     \
        for (j = 0; j < TW; j++) {                                                                 \
          int64_t x1 = j * S1 + MD - P, y1 = i * S1 + MD - P, x2 = x1 + s2o, y2 = y1 + s2p;        \
          T acc = 0;                                                                               \
          for (h = 0; h < K; h++)                                                                  \
            for (w = 0; w < K; w++) {                                                              \
              int64_t ya = y1 + h, xa = x1 + w, yb = y2 + h, xb = x2 + w;                          \
              int ina = ya >= 0 && ya < H && xa >= 0 && xa < W;                                    \
              int inb = yb >= 0 && yb < H && xb >= 0 && xb < W;                                    \
              for (c = 0; c < C; c++) {                                                            \
                T a = ina ? LD(d1[((n * C + c) * H + ya) * W + xa]) : (T)0;                            \
                T b = inb ? LD(d2[((n * C + c) * H + yb) * W + xb]) : (T)0;                            \
                acc += mul ? a * b : (T)fabs((double)(a - b));                                     \
              }                                                                                    \
            }                                                                                      \
          out[((n * TC + tc) * TH + i) * TW + j] = ST(acc / sumelems);                                 \
        }                                                                                          \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* in: ograd, data1, data2; out: g1, g2 (serial over the batch's scatter, parallel over n) */   \
  static int mxc_sp_corr_bwd_##SUF(mxc_opcall *call) {                                             \
    const S *g = (const S *)call->in[0].data;                                                      \
    const S *d1 = (const S *)call->in[1].data, *d2 = (const S *)call->in[2].data;                  \
    S *g1 = (S *)call->out[0].data, *g2 = (S *)call->out[1].data;                                  \
    const int64_t K = call->iattr[0], MD = call->iattr[1], S1 = call->iattr[2];                    \
    const int64_t S2 = call->iattr[3], P = call->iattr[4], mul = call->iattr[5];                   \
    const int64_t N = call->in[1].shape[0], C = call->in[1].shape[1];                              \
    const int64_t H = call->in[1].shape[2], W = call->in[1].shape[3];                              \
    const int64_t TC = call->in[0].shape[1], TH = call->in[0].shape[2], TW = call->in[0].shape[3]; \
    const int64_t R = MD / S2, GW = 2 * R + 1;                                                     \
    const T sumelems = (T)(K * K * C);                                                             \
    int64_t n;                                                                                     \
    memset(g1, 0, sizeof(S) * (size_t)call->out[0].size);                                          \
    memset(g2, 0, sizeof(S) * (size_t)call->out[1].size);                                          \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (N * TC * TH * TW >= MXC_SP_PAR_MIN)) \
    for (n = 0; n < N; n++) {                                                                      \
      int64_t tc, i, j, h, w, c;                                                                   \
      for (i = 0; i < TH; i++)                                                                     \
        for (j = 0; j < TW; j++)                                                                   \
          for (tc = 0; tc < TC; tc++) {                                                            \
            int64_t s2o = (tc % GW - R) * S2, s2p = (tc / GW - R) * S2;                            \
            int64_t x1 = j * S1 + MD - P, y1 = i * S1 + MD - P, x2 = x1 + s2o, y2 = y1 + s2p;      \
            T go = LD(g[((n * TC + tc) * TH + i) * TW + j]) / sumelems;                                \
            for (h = 0; h < K; h++)                                                                \
              for (w = 0; w < K; w++) {                                                            \
                int64_t ya = y1 + h, xa = x1 + w, yb = y2 + h, xb = x2 + w;                        \
                int ina = ya >= 0 && ya < H && xa >= 0 && xa < W;                                  \
                int inb = yb >= 0 && yb < H && xb >= 0 && xb < W;                                  \
                for (c = 0; c < C; c++) {                                                          \
                  int64_t ia = ((n * C + c) * H + ya) * W + xa, ib = ((n * C + c) * H + yb) * W + xb; \
                  T a = ina ? LD(d1[ia]) : (T)0, b = inb ? LD(d2[ib]) : (T)0;                              \
                  if (mul) {                                                                       \
                    if (ina) ACC(g1[ia], go * b);                                                     \
                    if (inb) ACC(g2[ib], go * a);                                                     \
                  } else {                                                                         \
                    T sg = a >= b ? (T)1 : (T)-1;                                                  \
                    if (ina) ACC(g1[ia], go * sg);                                                    \
                    if (inb) ACC(g2[ib], -go * sg);                                                    \
                  }                                                                                \
                }                                                                                  \
              }                                                                                    \
          }                                                                                        \
    }                                                                                              \
    return 0;                                                                                      \
  }

#define MXC_SP_ID(x) (x)
#define ACC(dst, v) ((dst) += (v))
MXC_SPATIAL_IMPL(float, float, f32, -FLT_MAX, MXC_SP_ID, MXC_SP_ID)
MXC_SPATIAL_IMPL(double, double, f64, -DBL_MAX, MXC_SP_ID, MXC_SP_ID)
#undef ACC
#define ACC(dst, v) ((dst) = mxc_float_to_half(mxc_half_to_float(dst) + (v)))
MXC_SPATIAL_IMPL(uint16_t, float, f16, -FLT_MAX, mxc_half_to_float, mxc_float_to_half)
#undef ACC

#define MXC_SP_ENTRY(name) {#name, MXC_FLOAT32, mxc_sp_##name##_f32}, \
                           {#name, MXC_FLOAT64, mxc_sp_##name##_f64}, \
                           {#name, MXC_FLOAT16, mxc_sp_##name##_f16}

static const mxc_code_entry mxc_spatial_table[] = {
    MXC_SP_ENTRY(roipool),  MXC_SP_ENTRY(roipool_bwd), MXC_SP_ENTRY(bilinear),
    MXC_SP_ENTRY(bilinear_bwd), MXC_SP_ENTRY(corr), MXC_SP_ENTRY(corr_bwd),
};
static const int mxc_spatial_table_len =
    (int)(sizeof(mxc_spatial_table) / sizeof(mxc_spatial_table[0]));

#endif
