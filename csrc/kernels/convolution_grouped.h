/* Direct convolution of 1-D and 2-D problems with few input channels per group (depthwise:
 * one), without a column matrix. Included by convolution.h after mxc_conv_geom, which it uses.
 *
 * im2col + GEMM per group is a product of cog x (cig * ksz) by (cig * ksz) x osz: for a
 * depthwise 3x3 layer a 1 x 9 by 9 x osz GEMM per channel and sample, after an im2col that
 * copies every input 9 times (MobileNetV2 at batch 8 ran at 0.78x MXNet's oneDNN inference and
 * 0.65x its training). Here each input plane is copied once into a zero-padded plane split into
 * its stride phases: with strides (sh, sw), phase (a, b) holds the padded rows a, a + sh, ... and
 * columns b, b + sw, ..., as a plane of rp rows of ww columns. The tap (kh, kw) of output (oh, ow)
 * then reads phase ((kh dh) % sh, (kw dw) % sw) at row oh + (kh dh) / sh and column
 * ow + (kw dw) / sw: for every tap, the whole output plane laid out in rows of ww ("wide" rows:
 * ww >= ow, the extra columns are computed and dropped) is ONE contiguous run over one phase at
 * one offset, whatever the strides, dilation and padding:
 *
 *   forward         wide[i] += W[oc, c, tap] * phase_tap[i + offset_tap]      (X padded)
 *   backward data   phase_tap[i + offset_tap] += W[oc, c, tap] * wide[i]      (wide = dY, zero
 *                                                                              in the extras)
 *   backward weight dW[oc, c, tap] += sum_i wide[i] * phase_tap[i + offset_tap]
 *
 * for i < od[1] * ww. Small planes (7x7) thus cost a few vector loops instead of one short loop
 * per row and tap. Threads own output planes (forward), input planes (backward data: every output
 * channel of the group adds into the same dX plane from one thread) and weight rows (backward
 * weight: sums over all samples in one thread, so the result does not depend on the thread
 * count). Each thread's phases and wide rows live in the caller's scratch (mxc_convg_scratch).
 */
#ifndef MXC_KERNELS_CONVOLUTION_GROUPED_H
#define MXC_KERNELS_CONVOLUTION_GROUPED_H

/* Groups of at most this many input channels take the direct loops. Measured per shape, batch 8,
 * one thread, CPU ms of forward / backward, im2col + GEMM -> direct: depthwise 144@56x56
 * 13.7/20.2 -> 4.2/14.2, 960@7x7 2.8/12.8 -> 0.84/3.0; but two channels per group, 64@56x56
 * 4.0/8.9 -> 2.9/13.2, 64@112x112 12.4/29.8 -> 11.3/38.1; four, 128@56x56 8.1/18.6 ->
 * 11.8/32.9; eight, 512@14x14 5.4/11.6 -> 6.8/17.5 (the backward rebuilds each input plane's
 * phases for every output channel of its group). So depthwise only; the loops take any count.
 * Depthwise 3x3 layers with strides 1-2 on planes up to MXC_CONVDW_MAX_POS positions take the
 * channel blocks of convolution_depthwise.h instead (faster there on every MobileNetV2 shape). */
#ifndef MXC_CONV_GROUPED_MAX_CIG
#define MXC_CONV_GROUPED_MAX_CIG 1
#endif

/* the direct loops apply: a 1-D/2-D problem of more than one group with few channels each */
static int mxc_conv_grouped_usable(const mxc_conv_geom *g) {
  return g->flat && g->g > 1 && g->cig <= MXC_CONV_GROUPED_MAX_CIG;
}

/* The phase planes and wide rows of one problem (see the header's comment) */
typedef struct {
  int64_t ww, rp;      /* columns and rows of a phase plane; wide rows have ww positions too */
  int64_t psz, plen;   /* one phase plane (rp * ww), all sh * sw of them */
  int64_t nwide;       /* od[1] * ww */
  int64_t per;         /* scratch elements per thread: phases, wide rows, ksz doubles */
  int64_t lead;        /* scratch elements before the threads' (the tap table) */
  int64_t *tap;        /* where tap t reads: phase plane offset + offset in the plane */
} mxc_convg_plan;

static void mxc_convg_plan_make(mxc_convg_plan *q, const mxc_conv_geom *g) {
  const int64_t sh = g->s[1], sw = g->s[2];
  /* wide rows cover every output column and the columns its taps read; the extra row below
   * the last one taps read holds what the extra columns of the last wide row read */
  q->ww = g->od[2] + (g->k[2] - 1) * g->d[2] / sw;
  q->rp = g->od[1] + (g->k[1] - 1) * g->d[1] / sh + 1;
  q->psz = q->rp * q->ww;
  q->plen = q->psz * sh * sw;
  q->nwide = g->od[1] * q->ww;
  q->per = ((q->plen + q->nwide + 7) / 8 + (g->ksz + 3) / 4 + 1) * 8; /* whole 32 bytes */
  q->lead = (g->ksz + 3) / 4 * 8;  /* ksz int64s in elements of 4 or 8 bytes, whole 32 bytes */
  q->tap = NULL;
}

/* elements of scratch that the direct loops of nt threads need (see mxc_convg_plan) */
static int64_t mxc_convg_scratch(const mxc_conv_geom *g, int nt) {
  mxc_convg_plan q;
  mxc_convg_plan_make(&q, g);
  return q.lead + q.per * (nt > 0 ? nt : 1);
}

/* the plan with its tap table at the start of buf (the threads' scratch follows it): tap t
 * reads its phase plane (offset in the phases) at its offset in the plane */
static void mxc_convg_plan_taps(mxc_convg_plan *q, const mxc_conv_geom *g, void *buf) {
  const int64_t sh = g->s[1], sw = g->s[2];
  int64_t t;
  mxc_convg_plan_make(q, g);
  q->tap = (int64_t *)buf;
  for (t = 0; t < g->ksz; t++) {
    const int64_t kh = (t / g->k[2]) * g->d[1], kw = (t % g->k[2]) * g->d[2];
    q->tap[t] = ((kh % sh) * sw + kw % sw) * q->psz + (kh / sh) * q->ww + kw / sw;
  }
}

/* The three inner loops, compiled once for the baseline instruction set and once (suffix 2) for
 * AVX2 + FMA where the CPU has them (chosen at run time, as Winograd's kernels: the package is
 * built without -march). They are written on 32-byte vectors of GCC/Clang's vector extension
 * (VT, VN elements; unaligned loads and stores through memcpy): the auto-vectoriser left the
 * forward's loop scalar (it cannot tell that the wide rows and the phases do not overlap), at
 * a quarter of the speed. VSUF: the variant's suffix; ATTR: its target attribute. */
#define MXC_CONVG_INNER_DEFINE(T, VT, SUF, VSUF, ATTR)                                             \
/* y[i] += kv * x[i], i < n, on VT vectors (the taps' forward and adjoint loops) */                \
ATTR static inline void mxc_convg_axpy_##SUF##VSUF(T *y, const T *x, T kv, int64_t n) {            \
  const int64_t vn = (int64_t)(sizeof(VT) / sizeof(T));                                            \
  int64_t i;                                                                                       \
  for (i = 0; i + vn <= n; i += vn) {                                                              \
    VT v, a;                                                                                       \
    memcpy(&v, y + i, sizeof(VT));                                                                 \
    memcpy(&a, x + i, sizeof(VT));                                                                 \
    v += kv * a;                                                                                   \
    memcpy(y + i, &v, sizeof(VT));                                                                 \
  }                                                                                                \
  for (; i < n; i++) y[i] += kv * x[i];                                                            \
}                                                                                                  \
                                                                                                   \
/* wide[i] += sum over taps of w[t] * ph[tap(t) + i], i < nwide */                                 \
ATTR static void mxc_convg_taps_##SUF##VSUF(T *wide, const T *ph, const T *w,                      \
                                            const mxc_conv_geom *g, const mxc_convg_plan *q) {     \
  const int64_t n = q->nwide, vn = (int64_t)(sizeof(VT) / sizeof(T));                              \
  int64_t t, i;                                                                                    \
  if (g->k[2] == 3) { /* a kernel row in one pass */                                               \
    for (t = 0; t < g->ksz; t += 3) {                                                              \
      const T *r0 = ph + q->tap[t], *r1 = ph + q->tap[t + 1], *r2 = ph + q->tap[t + 2];            \
      const T k0 = w[t], k1 = w[t + 1], k2 = w[t + 2];                                             \
      for (i = 0; i + vn <= n; i += vn) {                                                          \
        VT y, a, b, c;                                                                             \
        memcpy(&y, wide + i, sizeof(VT));                                                          \
        memcpy(&a, r0 + i, sizeof(VT));                                                            \
        memcpy(&b, r1 + i, sizeof(VT));                                                            \
        memcpy(&c, r2 + i, sizeof(VT));                                                            \
        y += k0 * a + k1 * b + k2 * c;                                                             \
        memcpy(wide + i, &y, sizeof(VT));                                                          \
      }                                                                                            \
      for (; i < n; i++) wide[i] += k0 * r0[i] + k1 * r1[i] + k2 * r2[i];                          \
    }                                                                                              \
    return;                                                                                        \
  }                                                                                                \
  for (t = 0; t < g->ksz; t++) mxc_convg_axpy_##SUF##VSUF(wide, ph + q->tap[t], w[t], n);          \
}                                                                                                  \
                                                                                                   \
/* ph[tap(t) + i] += w[t] * wide[i] over the taps, i < nwide */                                    \
ATTR static void mxc_convg_adj_##SUF##VSUF(T *ph, const T *wide, const T *w,                       \
                                           const mxc_conv_geom *g, const mxc_convg_plan *q) {      \
  int64_t t;                                                                                       \
  for (t = 0; t < g->ksz; t++) mxc_convg_axpy_##SUF##VSUF(ph + q->tap[t], wide, w[t], q->nwide);   \
}                                                                                                  \
                                                                                                   \
/* acc[t] += sum_i wide[i] * ph[tap(t) + i] over the taps (VN running sums, then in order) */      \
ATTR static void mxc_convg_dots_##SUF##VSUF(double *acc, const T *wide, const T *ph,               \
                                            const mxc_conv_geom *g, const mxc_convg_plan *q) {     \
  const int64_t n = q->nwide, vn = (int64_t)(sizeof(VT) / sizeof(T));                              \
  int64_t t, i, l;                                                                                 \
  for (t = 0; t < g->ksz; t++) {                                                                   \
    const T *r = ph + q->tap[t];                                                                   \
    VT s;                                                                                          \
    T part = 0;                                                                                    \
    memset(&s, 0, sizeof(VT));                                                                     \
    for (i = 0; i + vn <= n; i += vn) {                                                            \
      VT a, b;                                                                                     \
      memcpy(&a, wide + i, sizeof(VT));                                                            \
      memcpy(&b, r + i, sizeof(VT));                                                               \
      s += a * b;                                                                                  \
    }                                                                                              \
    for (; i < n; i++) part += wide[i] * r[i];                                                     \
    for (l = 0; l < vn; l++) part += s[l];                                                         \
    acc[t] += (double)part;                                                                        \
  }                                                                                                \
}

typedef float mxc_convg_v8f __attribute__((vector_size(32)));
typedef double mxc_convg_v4d __attribute__((vector_size(32)));

#ifdef MXC_WINO
#define MXC_CONVG_FAST() mxc_wino_cpu()
#define MXC_CONVG_INNER(T, VT, SUF)                                                                \
  MXC_CONVG_INNER_DEFINE(T, VT, SUF, , )                                                           \
  MXC_CONVG_INNER_DEFINE(T, VT, SUF, 2, MXC_WT)
#else
#define MXC_CONVG_FAST() 0
#define MXC_CONVG_INNER(T, VT, SUF)                                                                \
  MXC_CONVG_INNER_DEFINE(T, VT, SUF, , )                                                           \
  MXC_CONVG_INNER_DEFINE(T, VT, SUF, 2, )
#endif

#define MXC_CONV_GROUPED_DEFINE(T, VT, SUF)                                                        \
MXC_CONVG_INNER(T, VT, SUF)                                                                        \
/* d[0:n] = s[0:n] for short rows (7 to 112 elements): 32-byte moves that the compiler inlines,    \
 * where a memcpy call per row of a 7x7 plane cost as much as its arithmetic */                    \
static inline void mxc_convg_copy_##SUF(T *d, const T *s, int64_t n) {                             \
  const int64_t vn = (int64_t)(sizeof(VT) / sizeof(T));                                            \
  int64_t i;                                                                                       \
  for (i = 0; i + vn <= n; i += vn) {                                                              \
    VT v;                                                                                          \
    memcpy(&v, s + i, sizeof(VT));                                                                 \
    memcpy(d + i, &v, sizeof(VT));                                                                 \
  }                                                                                                \
  for (; i < n; i++) d[i] = s[i];                                                                  \
}                                                                                                  \
                                                                                                   \
/* dir 0: ph = the phases of plane xp where they hold the plane (the rest, padding, is left as it  \
 * is: zeros, the same positions for every plane); dir 1: xp = the positions of the phases that    \
 * are inside the plane (the adjoint's gather; positions no tap reads get 0) */                    \
static void mxc_convg_phases_##SUF(T *ph, T *xp, const mxc_conv_geom *g, const mxc_convg_plan *q,  \
                                   int dir) {                                                      \
  const int64_t sh = g->s[1], sw = g->s[2], ih = g->id[1], iw = g->id[2];                          \
  int64_t h, c;                                                                                    \
  for (h = 0; h < ih; h++) {                                                                       \
    const int64_t r = h + g->p[1], R = r / sh;                                                     \
    T *xr = xp + h * iw;                                                                           \
    T *prow = ph + (r % sh) * sw * q->psz + R * q->ww;                                             \
    int64_t c1 = (q->ww * sw - g->p[2]) < iw ? q->ww * sw - g->p[2] : iw; /* columns inside */     \
    if (R >= q->rp) c1 = 0;                                                                        \
    if (c1 < 0) c1 = 0;                                                                            \
    if (sw == 1) {                                                                                 \
      if (dir == 0) mxc_convg_copy_##SUF(prow + g->p[2], xr, c1);                                  \
      else mxc_convg_copy_##SUF(xr, prow + g->p[2], c1);                                           \
    } else if (sw == 2) { /* pairs of columns into the two phases, in one vectorisable loop */     \
      T *e0 = prow, *e1 = prow + q->psz;                                                           \
      int64_t s0 = 0, k, np;                                                                       \
      if ((g->p[2] & 1) && c1 > 0) { /* column 0 is odd in the padded row: phase 1 */              \
        if (dir == 0) e1[g->p[2] / 2] = xr[0];                                                     \
        else xr[0] = e1[g->p[2] / 2];                                                              \
        s0 = 1;                                                                                    \
      }                                                                                            \
      np = (c1 - s0) / 2;                                                                          \
      e0 += (s0 + g->p[2]) / 2;                                                                    \
      e1 += (s0 + g->p[2]) / 2;                                                                    \
      if (dir == 0)                                                                                \
        for (k = 0; k < np; k++) {                                                                 \
          e0[k] = xr[s0 + 2 * k];                                                                  \
          e1[k] = xr[s0 + 2 * k + 1];                                                              \
        }                                                                                          \
      else                                                                                         \
        for (k = 0; k < np; k++) {                                                                 \
          xr[s0 + 2 * k] = e0[k];                                                                  \
          xr[s0 + 2 * k + 1] = e1[k];                                                              \
        }                                                                                          \
      if (s0 + 2 * np < c1) { /* a last even column */                                             \
        if (dir == 0) e0[np] = xr[s0 + 2 * np];                                                    \
        else xr[s0 + 2 * np] = e0[np];                                                             \
      }                                                                                            \
    } else { /* phase b holds the columns c with (c + p) % sw == b, from (c + p) / sw on */        \
      int64_t b;                                                                                   \
      for (b = 0; b < sw; b++) {                                                                   \
        const int64_t c0 = ((b - g->p[2]) % sw + sw) % sw;                                         \
        T *e = prow + b * q->psz + (c0 + g->p[2]) / sw;                                            \
        int64_t k;                                                                                 \
        if (dir == 0)                                                                              \
          for (c = c0, k = 0; c < c1; c += sw, k++) e[k] = xr[c];                                  \
        else                                                                                       \
          for (c = c0, k = 0; c < c1; c += sw, k++) xr[c] = e[k];                                  \
      }                                                                                            \
    }                                                                                              \
    if (dir == 1)                                                                                  \
      for (c = c1; c < iw; c++) xr[c] = 0;                                                         \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* wide = the output plane yp in wide rows (dir 0; the extra columns are left as they are: zeros)  \
 * or back (dir 1) */                                                                              \
static void mxc_convg_wide_##SUF(T *wide, T *yp, const mxc_conv_geom *g, const mxc_convg_plan *q,  \
                                 int dir) {                                                        \
  const int64_t ow = g->od[2];                                                                     \
  int64_t o;                                                                                       \
  for (o = 0; o < g->od[1]; o++) {                                                                 \
    if (dir == 1)                                                                                  \
      mxc_convg_copy_##SUF(yp + o * ow, wide + o * q->ww, ow);                                     \
    else                                                                                           \
      mxc_convg_copy_##SUF(wide + o * q->ww, yp + o * ow, ow);                                     \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* every thread's phases and wide rows zero (what mxc_convg_phases and mxc_convg_wide leave) */    \
static void mxc_convg_zero_##SUF(T *buf, const mxc_convg_plan *q, int nt) {                        \
  int i;                                                                                           \
  for (i = 0; i < (nt > 0 ? nt : 1); i++)                                                          \
    memset(buf + q->lead + i * q->per, 0, sizeof(T) * (size_t)(q->plen + q->nwide));               \
}                                                                                                  \
                                                                                                   \
/* Y = direct convolution of X (+ bias) */                                                         \
static void mxc_convg_forward_##SUF(const T *x, const T *w, T *y, const mxc_conv_geom *g,          \
                                    const T *bias, T *buf, int nt, int64_t n0, int64_t n1) {       \
  const int64_t planes = (n1 - n0) * g->co;                                                        \
  mxc_convg_plan q;                                                                                \
  int64_t pl;                                                                                      \
  const int fast = MXC_CONVG_FAST();                                                               \
  mxc_convg_plan_taps(&q, g, buf);                                                                 \
  mxc_convg_zero_##SUF(buf, &q, nt);                                                               \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static)                                       \
           if (planes * g->osz * g->cig * g->ksz > 32768))                                         \
  for (pl = 0; pl < planes; pl++) {                                                                \
    const int64_t n = n0 + pl / g->co, oc = pl % g->co, ic0 = (oc / g->cog) * g->cig;              \
    T *ph = buf + q.lead + MXC_TID() * q.per, *wide = ph + q.plen;                                 \
    const T b = bias ? bias[oc] : (T)0;                                                            \
    int64_t c, i;                                                                                  \
    for (i = 0; i < q.nwide; i++) wide[i] = b;                                                     \
    for (c = 0; c < g->cig; c++) {                                                                 \
      mxc_convg_phases_##SUF(ph, (T *)(x + (n * g->ci + ic0 + c) * g->isz), g, &q, 0);             \
      if (fast)                                                                                    \
        mxc_convg_taps_##SUF##2(wide, ph, w + (oc * g->cig + c) * g->ksz, g, &q);                  \
      else                                                                                         \
        mxc_convg_taps_##SUF(wide, ph, w + (oc * g->cig + c) * g->ksz, g, &q);                     \
    }                                                                                              \
    mxc_convg_wide_##SUF(wide, y + (n * g->co + oc) * g->osz, g, &q, 1);                           \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* dX = the adjoint of the forward applied to dY (dX is overwritten) */                            \
static void mxc_convg_bwd_data_##SUF(const T *dy, const T *w, T *dx, const mxc_conv_geom *g,       \
                                     T *buf, int nt, int64_t n0, int64_t n1) {                     \
  const int64_t planes = (n1 - n0) * g->ci;                                                        \
  mxc_convg_plan q;                                                                                \
  int64_t pl;                                                                                      \
  const int fast = MXC_CONVG_FAST();                                                               \
  mxc_convg_plan_taps(&q, g, buf);                                                                 \
  mxc_convg_zero_##SUF(buf, &q, nt);                                                               \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static)                                       \
           if (planes * g->osz * g->cog * g->ksz > 32768))                                         \
  for (pl = 0; pl < planes; pl++) {                                                                \
    const int64_t n = n0 + pl / g->ci, ic = pl % g->ci, gr = ic / g->cig, c = ic % g->cig;         \
    T *ph = buf + q.lead + MXC_TID() * q.per, *wide = ph + q.plen;                                 \
    int64_t j;                                                                                     \
    memset(ph, 0, sizeof(T) * (size_t)q.plen);                                                     \
    for (j = 0; j < g->cog; j++) {                                                                 \
      const int64_t oc = gr * g->cog + j;                                                          \
      const T *wp = w + (oc * g->cig + c) * g->ksz;                                                \
      mxc_convg_wide_##SUF(wide, (T *)(dy + (n * g->co + oc) * g->osz), g, &q, 0);                 \
      if (fast)                                                                                    \
        mxc_convg_adj_##SUF##2(ph, wide, wp, g, &q);                                               \
      else                                                                                         \
        mxc_convg_adj_##SUF(ph, wide, wp, g, &q);                                                  \
    }                                                                                              \
    mxc_convg_phases_##SUF(ph, dx + (n * g->ci + ic) * g->isz, g, &q, 1);                          \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* dW = sum over samples and positions of dY times the tap's input (dW is overwritten) */          \
static void mxc_convg_bwd_weight_##SUF(const T *dy, const T *x, T *dw, const mxc_conv_geom *g,     \
                                       T *buf, int nt, int64_t n0, int64_t n1) {                   \
  const int64_t rows = g->co * g->cig;                                                             \
  mxc_convg_plan q;                                                                                \
  int64_t r;                                                                                       \
  const int fast = MXC_CONVG_FAST();                                                               \
  mxc_convg_plan_taps(&q, g, buf);                                                                 \
  mxc_convg_zero_##SUF(buf, &q, nt);                                                               \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static)                                       \
           if ((n1 - n0) * rows * g->osz * g->ksz > 32768))                                        \
  for (r = 0; r < rows; r++) {                                                                     \
    const int64_t oc = r / g->cig, ic = (oc / g->cog) * g->cig + r % g->cig;                       \
    T *ph = buf + q.lead + MXC_TID() * q.per, *wide = ph + q.plen;                                 \
    /* after the phases and the wide rows, aligned for double */                                   \
    double *acc = (double *)(void *)(ph + (q.plen + q.nwide + 7) / 8 * 8);                         \
    int64_t n, t;                                                                                  \
    for (t = 0; t < g->ksz; t++) acc[t] = 0;                                                       \
    for (n = n0; n < n1; n++) {                                                                    \
      mxc_convg_phases_##SUF(ph, (T *)(x + (n * g->ci + ic) * g->isz), g, &q, 0);                  \
      mxc_convg_wide_##SUF(wide, (T *)(dy + (n * g->co + oc) * g->osz), g, &q, 0);                 \
      if (fast)                                                                                    \
        mxc_convg_dots_##SUF##2(acc, wide, ph, g, &q);                                             \
      else                                                                                         \
        mxc_convg_dots_##SUF(acc, wide, ph, g, &q);                                                \
    }                                                                                              \
    for (t = 0; t < g->ksz; t++) dw[r * g->ksz + t] = (T)acc[t];                                   \
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
