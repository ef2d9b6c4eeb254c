/* Direct convolution of 1-D and 2-D problems with few input channels per group (depthwise:
 * one), without a column matrix. Included by convolution.h after mxc_conv_geom and
 * mxc_conv_span, which it uses.
 *
 * im2col + GEMM per group is a product of cog x (cig * ksz) by (cig * ksz) x osz: for a
 * depthwise 3x3 layer a 1 x 9 by 9 x osz GEMM per channel and sample, and an im2col that
 * copies every input 9 times (MobileNetV2 at batch 8 ran at 0.78x MXNet's oneDNN inference and
 * 0.65x its training). Here each output plane (n, oc) is accumulated row by row from the cig
 * input planes of its group:
 *
 *   forward         Y[n, oc, oh, :]  += W[oc, c, kh, kw] * X[n, ic, ih, w0 + s * (:)]
 *   backward data   dX[n, ic, ih, w0 + s * (:)] += W[oc, c, kh, kw] * dY[n, oc, oh, :]
 *   backward weight dW[oc, c, kh, kw] += dot(dY[n, oc, oh, :], X[n, ic, ih, w0 + s * (:)])
 *
 * with ih = oh * sh - ph + kh * dh and w0 = kw * dw - pw; columns whose tap reads padding are
 * left out of each row (mxc_conv_span). A kernel row of three taps (3x3 layers) is applied in one
 * pass over the output row where all three read inside the input, the edges tap by tap. Threads
 * own output planes (forward), input planes (backward data: every output channel of the group
 * adds into the same dX plane from one thread) and weight rows (backward weight: sums over all
 * samples in one thread, so the result does not depend on the thread count).
 */
#ifndef MXC_KERNELS_CONVOLUTION_GROUPED_H
#define MXC_KERNELS_CONVOLUTION_GROUPED_H

/* Groups of at most this many input channels take the direct loops. Measured per shape, batch 8,
 * 2 threads (tools/bench/bench_conv_grouped.py): depthwise (cig 1) is 3-10x faster direct than
 * through im2col + GEMM on every MobileNetV2 layer; cig 8 at 28x28 with 64 channels per group,
 * the direct loops were already 1.3x slower than the GEMM. */
#ifndef MXC_CONV_GROUPED_MAX_CIG
#define MXC_CONV_GROUPED_MAX_CIG 4
#endif

/* the direct loops apply: a 1-D/2-D problem of more than one group with few channels each */
static int mxc_conv_grouped_usable(const mxc_conv_geom *g) {
  return g->flat && g->g > 1 && g->cig <= MXC_CONV_GROUPED_MAX_CIG && g->k[2] <= 64;
}

/* The padded plane and the wide output rows of one problem (see the header's comment) */
typedef struct {
  int64_t pw, ph;   /* padded plane: width (a multiple of the stride) and rows */
  int64_t ww;       /* wide output row: pw / stride positions */
  int64_t nwide;    /* od[1] * ww */
  /* Runs of wide positions that one loop covers: with stride 1 down the rows, wide row oh + 1
   * continues wide row oh in the padded plane too, so the whole plane is one run; otherwise each
   * output row is a run of od[2] positions and the next starts s[1] padded rows further down */
  int64_t nrun, run, pstep;
  int64_t per;      /* scratch elements per thread: the plane, the wide rows, ksz doubles */
} mxc_convg_plan;

static void mxc_convg_plan_make(mxc_convg_plan *q, const mxc_conv_geom *g) {
  const int64_t s = g->s[2];
  int64_t need = (g->od[2] - 1) * s + (g->k[2] - 1) * g->d[2] + 1, pw = g->id[2] + 2 * g->p[2];
  if (need > pw) pw = need;
  q->pw = (pw + s - 1) / s * s;
  q->ww = q->pw / s;
  /* rows the taps read, plus one: the last wide row's extra columns read into it */
  q->ph = (g->od[1] - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 2;
  q->nwide = g->od[1] * q->ww;
  q->nrun = g->s[1] == 1 ? 1 : g->od[1];
  q->run = g->s[1] == 1 ? q->nwide : g->od[2];
  q->pstep = g->s[1] * q->pw;
  q->per = ((q->ph * q->pw + q->nwide + 7) / 8 + (g->ksz + 3) / 4 + 1) * 8; /* whole 32 bytes */
}

/* elements of scratch that the direct loops of nt threads need (see mxc_convg_plan) */
static int64_t mxc_convg_scratch(const mxc_conv_geom *g, int nt) {
  mxc_convg_plan q;
  mxc_convg_plan_make(&q, g);
  return q.per * (nt > 0 ? nt : 1);
}

#define MXC_CONV_GROUPED_DEFINE(T, A, SUF)                                                         \
/* pp = plane xp (id[1] x id[2]) placed at (p[1], p[2]) in zeros (q->ph x q->pw) */                \
static void mxc_convg_pad_##SUF(T *pp, const T *xp, const mxc_conv_geom *g,                        \
                                const mxc_convg_plan *q) {                                         \
  const int64_t iw = g->id[2], rows = g->id[1] < q->ph - g->p[1] ? g->id[1] : q->ph - g->p[1];     \
  const int64_t cols = iw < q->pw - g->p[2] ? iw : q->pw - g->p[2];                                \
  int64_t h;                                                                                       \
  memset(pp, 0, sizeof(T) * (size_t)(q->ph * q->pw));                                              \
  for (h = 0; h < rows; h++)                                                                       \
    memcpy(pp + (h + g->p[1]) * q->pw + g->p[2], xp + h * iw, sizeof(T) * (size_t)cols);           \
}                                                                                                  \
                                                                                                   \
/* wide[i] += sum over taps of w[tap] * pp[s * i + offset(tap)] over the plan's runs */            \
static void mxc_convg_taps_##SUF(T *restrict wide, const T *restrict pp, const T *w,               \
                                 const mxc_conv_geom *g, const mxc_convg_plan *q) {                \
  const int64_t s = g->s[2], n = q->run;                                                           \
  int64_t kh, kw, i, u;                                                                            \
  for (u = 0; u < q->nrun; u++, wide += q->ww, pp += q->pstep)                                     \
  for (kh = 0; kh < g->k[1]; kh++) {                                                               \
    const T *row = pp + kh * g->d[1] * q->pw;                                                      \
    if (g->k[2] == 3 && g->d[2] == 1) { /* a kernel row in one pass */                             \
      const T k0 = w[kh * 3], k1 = w[kh * 3 + 1], k2 = w[kh * 3 + 2];                              \
      if (s == 1)                                                                                  \
        for (i = 0; i < n; i++) wide[i] += k0 * row[i] + k1 * row[i + 1] + k2 * row[i + 2];        \
      else                                                                                         \
        for (i = 0; i < n; i++)                                                                    \
          wide[i] += k0 * row[s * i] + k1 * row[s * i + 1] + k2 * row[s * i + 2];                  \
      continue;                                                                                    \
    }                                                                                              \
    for (kw = 0; kw < g->k[2]; kw++) {                                                             \
      const T kv = w[kh * g->k[2] + kw], *r = row + kw * g->d[2];                                  \
      if (s == 1)                                                                                  \
        for (i = 0; i < n; i++) wide[i] += kv * r[i];                                              \
      else                                                                                         \
        for (i = 0; i < n; i++) wide[i] += kv * r[s * i];                                          \
    }                                                                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* Y = direct convolution of X (+ bias) */                                                         \
static void mxc_convg_forward_##SUF(const T *x, const T *w, T *y, const mxc_conv_geom *g,          \
                                    const T *bias, T *buf, int nt, int64_t n0, int64_t n1) {       \
  const int64_t planes = (n1 - n0) * g->co;                                                        \
  mxc_convg_plan q;                                                                                \
  mxc_convg_plan_make(&q, g);                                                                      \
  (void)nt;                                                                                        \
MXC_PRAGMA(omp parallel num_threads(nt) if (planes * g->osz * g->cig * g->ksz > 32768))            \
  {                                                                                                \
    T *pp = buf + MXC_TID() * q.per;                                                               \
    int64_t pl;                                                                                    \
MXC_PRAGMA(omp for schedule(static))                                                               \
    for (pl = 0; pl < planes; pl++) {                                                              \
      const int64_t n = n0 + pl / g->co, oc = pl % g->co, ic0 = (oc / g->cog) * g->cig;            \
      T *yp = y + (n * g->co + oc) * g->osz, *wide = pp + q.ph * q.pw;                             \
      const T b = bias ? bias[oc] : (T)0;                                                          \
      int64_t c, i, o;                                                                             \
      for (i = 0; i < q.nwide; i++) wide[i] = b;                                                   \
      for (c = 0; c < g->cig; c++) {                                                               \
        mxc_convg_pad_##SUF(pp, x + (n * g->ci + ic0 + c) * g->isz, g, &q);                        \
        mxc_convg_taps_##SUF(wide, pp, w + (oc * g->cig + c) * g->ksz, g, &q);                     \
      }                                                                                            \
      for (o = 0; o < g->od[1]; o++)                                                               \
        memcpy(yp + o * g->od[2], wide + o * q.ww, sizeof(T) * (size_t)g->od[2]);                  \
    }                                                                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* dX = the adjoint of the forward applied to dY (dX is overwritten) */                            \
static void mxc_convg_bwd_data_##SUF(const T *dy, const T *w, T *dx, const mxc_conv_geom *g,       \
                                     T *buf, int nt, int64_t n0, int64_t n1) {                     \
  const int64_t planes = (n1 - n0) * g->ci;                                                        \
  mxc_convg_plan q;                                                                                \
  mxc_convg_plan_make(&q, g);                                                                      \
  (void)nt;                                                                                        \
MXC_PRAGMA(omp parallel num_threads(nt) if (planes * g->osz * g->cog * g->ksz > 32768))            \
  {                                                                                                \
    T *pp = buf + MXC_TID() * q.per;                                                               \
    int64_t pl;                                                                                    \
MXC_PRAGMA(omp for schedule(static))                                                               \
    for (pl = 0; pl < planes; pl++) {                                                              \
      const int64_t n = n0 + pl / g->ci, ic = pl % g->ci, gr = ic / g->cig, c = ic % g->cig;       \
      const int64_t s = g->s[2], nw = q.run;                                                       \
      T *wide = pp + q.ph * q.pw, *xp = dx + (n * g->ci + ic) * g->isz;                            \
      int64_t j, kh, kw, i, o, u;                                                                  \
      memset(pp, 0, sizeof(T) * (size_t)(q.ph * q.pw + q.nwide));                                  \
      for (j = 0; j < g->cog; j++) {                                                               \
        const int64_t oc = gr * g->cog + j;                                                        \
        const T *yp = dy + (n * g->co + oc) * g->osz, *wp = w + (oc * g->cig + c) * g->ksz;        \
        for (o = 0; o < g->od[1]; o++) /* dY in wide rows, zeros in the extra columns */           \
          memcpy(wide + o * q.ww, yp + o * g->od[2], sizeof(T) * (size_t)g->od[2]);                \
        for (u = 0; u < q.nrun; u++)                                                               \
        for (kh = 0; kh < g->k[1]; kh++)                                                           \
          for (kw = 0; kw < g->k[2]; kw++) {                                                       \
            const T kv = wp[kh * g->k[2] + kw];                                                    \
            const T *restrict wd = wide + u * q.ww;                                                \
            T *restrict r = pp + u * q.pstep + kh * g->d[1] * q.pw + kw * g->d[2];                 \
            if (s == 1)                                                                            \
              for (i = 0; i < nw; i++) r[i] += kv * wd[i];                                         \
            else                                                                                   \
              for (i = 0; i < nw; i++) r[s * i] += kv * wd[i];                                     \
          }                                                                                        \
      }                                                                                            \
      {                                                                                            \
        const int64_t rows = g->id[1] < q.ph - g->p[1] ? g->id[1] : q.ph - g->p[1];                \
        const int64_t cols = g->id[2] < q.pw - g->p[2] ? g->id[2] : q.pw - g->p[2];                \
        if (rows < g->id[1] || cols < g->id[2]) /* inputs no tap reads */                          \
          memset(xp, 0, sizeof(T) * (size_t)g->isz);                                               \
        for (o = 0; o < rows; o++)                                                                 \
          memcpy(xp + o * g->id[2], pp + (o + g->p[1]) * q.pw + g->p[2],                           \
                 sizeof(T) * (size_t)cols);                                                        \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* dW = sum over samples and positions of dY times the tap's input (dW is overwritten) */          \
static void mxc_convg_bwd_weight_##SUF(const T *dy, const T *x, T *dw, const mxc_conv_geom *g,     \
                                       T *buf, int nt, int64_t n0, int64_t n1) {                   \
  const int64_t rows = g->co * g->cig;                                                             \
  mxc_convg_plan q;                                                                                \
  mxc_convg_plan_make(&q, g);                                                                      \
  (void)nt;                                                                                        \
MXC_PRAGMA(omp parallel num_threads(nt) if ((n1 - n0) * rows * g->osz * g->ksz > 32768))           \
  {                                                                                                \
    T *pp = buf + MXC_TID() * q.per;                                                               \
    /* after the plane and the wide rows, aligned for A */                                         \
    A *acc = (A *)(void *)(pp + ((q.ph * q.pw + q.nwide + 7) / 8 * 8));                            \
    int64_t r;                                                                                     \
MXC_PRAGMA(omp for schedule(static))                                                               \
    for (r = 0; r < rows; r++) {                                                                   \
      const int64_t oc = r / g->cig, ic = (oc / g->cog) * g->cig + r % g->cig;                     \
      const int64_t s = g->s[2], nw = q.run;                                                       \
      T *wide = pp + q.ph * q.pw;                                                                  \
      int64_t n, t, i, o, u;                                                                       \
      for (t = 0; t < g->ksz; t++) acc[t] = 0;                                                     \
      memset(wide, 0, sizeof(T) * (size_t)q.nwide);                                                \
      for (n = n0; n < n1; n++) {                                                                  \
        const T *yp = dy + (n * g->co + oc) * g->osz;                                              \
        mxc_convg_pad_##SUF(pp, x + (n * g->ci + ic) * g->isz, g, &q);                             \
        for (o = 0; o < g->od[1]; o++) /* zeros stay in the extra columns */                       \
          memcpy(wide + o * q.ww, yp + o * g->od[2], sizeof(T) * (size_t)g->od[2]);                \
        for (t = 0; t < g->ksz; t++) {                                                             \
          /* eight running sums, so that the products vectorise without reassociation */           \
          T lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                    \
          int l;                                                                                   \
          for (u = 0; u < q.nrun; u++) {                                                           \
          const T *restrict rr =                                                                   \
              pp + u * q.pstep + (t / g->k[2]) * g->d[1] * q.pw + (t % g->k[2]) * g->d[2];         \
          const T *restrict wd = wide + u * q.ww;                                                  \
          if (s == 1) {                                                                            \
            for (i = 0; i + 8 <= nw; i += 8)                                                       \
              for (l = 0; l < 8; l++) lane[l] += wd[i + l] * rr[i + l];                            \
          } else {                                                                                 \
            for (i = 0; i + 8 <= nw; i += 8)                                                       \
              for (l = 0; l < 8; l++) lane[l] += wd[i + l] * rr[s * (i + l)];                      \
          }                                                                                        \
          for (; i < nw; i++) lane[i & 7] += wd[i] * rr[s * i];                                    \
          }                                                                                        \
          acc[t] += (A)(((lane[0] + lane[1]) + (lane[2] + lane[3])) +                              \
                        ((lane[4] + lane[5]) + (lane[6] + lane[7])));                              \
        }                                                                                          \
      }                                                                                            \
      for (t = 0; t < g->ksz; t++) dw[r * g->ksz + t] = (T)acc[t];                                 \
    }                                                                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* mxc_conv_part for grouped problems (see mxc_conv_part for the roles of a, a2, o0, o1) */        \
static void mxc_convg_part_##SUF(int mode, const mxc_conv_geom *g, const T *a, const T *a2,        \
                                 const T *w, const T *b, T *o0, T *o1, T *buf, int nt, int64_t n0, \
                                 int64_t n1) {                                                     \
  switch (mode) {                                                                                  \
  case MXC_CONV_FWD:                                                                               \
    mxc_convg_forward_##SUF(a, w, o0, g, b, buf, nt, n0, n1);                                      \
    break;                                                                                         \
  case MXC_CONV_BWD:                                                                               \
    if (o0) mxc_convg_bwd_data_##SUF(a, w, o0, g, buf, nt, n0, n1);                                \
    mxc_convg_bwd_weight_##SUF(a, a2, o1, g, buf, nt, n0, n1);                                     \
    break;                                                                                         \
  case MXC_DECONV_FWD:                                                                             \
    mxc_convg_bwd_data_##SUF(a, w, o0, g, buf, nt, n0, n1);                                        \
    break;                                                                                         \
  default:                                                                                         \
    if (o0) mxc_convg_forward_##SUF(a, w, o0, g, NULL, buf, nt, n0, n1);                           \
    mxc_convg_bwd_weight_##SUF(a2, a, o1, g, buf, nt, n0, n1);                                     \
    break;                                                                                         \
  }                                                                                                \
}

#endif
