/* Kernels of the extra shape operators: pad (and its gradient), diag, shape_array, size_array,
 * add_n (ElementWiseSum).
 *
 * pad: in x (I), out (O); iattr [n, mode, before_0, after_0, ..., before_n-1, after_n-1] with
 *   mode 0 constant (fattr[0] = value), 1 edge, 2 reflect (numpy's: the edge is not repeated).
 * pad_grad: in g (O), out (I): every element of g added to the input element it was read from
 *   (constant padding reads nothing). Threads split the leading unpadded dims (N, C).
 * diag: iattr [mode, k, axis1, axis2]; mode 0 extracts the k-th diagonal of in (N-D) into out
 *   (in's dims without axis1, axis2, then the diagonal); mode 1 is the inverse: out (N-D) is zero
 *   but for the diagonal, taken from in (also MXNet's 1-D -> 2-D diag, with axes 0, 1).
 * shape_array / size_array: out (int64) = in's shape / size.
 * add_n: out = sum of the nin inputs (float16 summed in float32, integers in int64).
 */
#ifndef MXC_KERNELS_SHAPE_EXTRA_H
#define MXC_KERNELS_SHAPE_EXTRA_H
#include "kernels/gather_util.h"

/* source index of output coordinate o along a padded dim, or -1 (constant padding) */
static inline int64_t mxc_sx_src(int64_t o, int64_t before, int64_t size, int mode) {
  int64_t s = o - before;
  if (s >= 0 && s < size) return s;
  if (mode == 0 || size == 0) return -1;
  if (mode == 1) return s < 0 ? 0 : size - 1;
  if (size == 1) return 0;
  {
    int64_t period = 2 * (size - 1);
    s %= period;
    if (s < 0) s += period;
    return s < size ? s : period - s;
  }
}

/* input offset of output row r (all dims but the last), or -1 when it lies in constant padding */
static int64_t mxc_sx_pad_row(const mxc_opcall *call, const mxc_tensor *in, const mxc_tensor *out,
                              int64_t r) {
  int n = (int)call->iattr[0], mode = (int)call->iattr[1], d;
  int64_t off = 0, stride = in->shape[n - 1];
  for (d = n - 2; d >= 0; d--) {
    int64_t o = r % out->shape[d], s;
    r /= out->shape[d];
    s = mxc_sx_src(o, call->iattr[2 + 2 * d], in->shape[d], mode);
    if (s < 0) return -1;
    off += s * stride;
    stride *= in->shape[d];
  }
  return off;
}

static int64_t mxc_sx_diag_len(const mxc_tensor *x, int64_t k, int a1, int a2) {
  int64_t r = x->shape[a1] - (k < 0 ? -k : 0), c = x->shape[a2] - (k > 0 ? k : 0);
  int64_t L = r < c ? r : c;
  return L > 0 ? L : 0;
}

#define MXC_SX_GEN(SUF, T, A, ACC, CODE)                                                        \
  static int mxc_sx_pad_##SUF(mxc_opcall *call) {                                               \
    const mxc_tensor *x = &call->in[0];                                                         \
    mxc_tensor *y = &call->out[0];                                                              \
    const int n = (int)call->iattr[0], mode = (int)call->iattr[1];                              \
    const int64_t W = y->shape[n - 1], IW = x->shape[n - 1], bw = call->iattr[2 + 2 * (n - 1)]; \
    const int64_t rows = W ? y->size / W : 0;                                                   \
    T fill;                                                                                     \
    int64_t r;                                                                                  \
    int nt = mxc_gu_threads(call, y->size);                                                     \
    (void)nt;                                                                                   \
    mxc_gu_st_##SUF(&fill, (A)call->fattr[0]);                                                  \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
    for (r = 0; r < rows; r++) {                                                                \
      T *yr = (T *)y->data + r * W;                                                             \
      int64_t off = mxc_sx_pad_row(call, x, y, r), j;                                           \
      if (off < 0) {                                                                            \
        for (j = 0; j < W; j++) yr[j] = fill;                                                   \
        continue;                                                                               \
      }                                                                                         \
      {                                                                                         \
        const T *xr = (const T *)x->data + off;                                                 \
        int64_t e = bw + IW < W ? bw + IW : W;                                                  \
        for (j = 0; j < bw && j < W; j++) {                                                     \
          int64_t s = mxc_sx_src(j, bw, IW, mode);                                              \
          yr[j] = s < 0 ? fill : xr[s];                                                         \
        }                                                                                       \
        if (e > bw) memcpy(yr + bw, xr, (size_t)(e - bw) * sizeof(T));                          \
        for (j = e > bw ? e : bw; j < W; j++) {                                                 \
          int64_t s = mxc_sx_src(j, bw, IW, mode);                                              \
          yr[j] = s < 0 ? fill : xr[s];                                                         \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_sx_pad_grad_##SUF(mxc_opcall *call) {                                          \
    const mxc_tensor *g = &call->in[0];                                                         \
    mxc_tensor *x = &call->out[0];                                                              \
    const int n = (int)call->iattr[0], mode = (int)call->iattr[1];                              \
    const int64_t W = g->shape[n - 1], IW = x->shape[n - 1], bw = call->iattr[2 + 2 * (n - 1)]; \
    int64_t planes = 1, prows = 1, xplane = 1, p;                                               \
    int d, lead = 0, nt;                                                                        \
    memset(x->data, 0, (size_t)x->size * sizeof(T));                                            \
    if (g->size == 0 || x->size == 0) return 0;                                                 \
    while (lead < n - 1 && call->iattr[2 + 2 * lead] == 0 && call->iattr[3 + 2 * lead] == 0)    \
      lead++;                                                                                   \
    for (d = 0; d < lead; d++) planes *= g->shape[d];                                           \
    for (d = lead; d < n - 1; d++) prows *= g->shape[d];                                        \
    for (d = lead; d < n; d++) xplane *= x->shape[d];                                           \
    (void)xplane;                                                                               \
    nt = mxc_gu_threads(call, g->size);                                                         \
    if (planes < 2) nt = 1;                                                                     \
    (void)nt;                                                                                   \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
    for (p = 0; p < planes; p++) {                                                              \
      int64_t rr, j;                                                                            \
      for (rr = 0; rr < prows; rr++) {                                                          \
        int64_t r = p * prows + rr, off = mxc_sx_pad_row(call, x, g, r);                        \
        const T *gr = (const T *)g->data + r * W;                                               \
        T *xr;                                                                                  \
        if (off < 0) continue;                                                                  \
        xr = (T *)x->data + off;                                                                \
        for (j = 0; j < W; j++) {                                                               \
          int64_t s = mxc_sx_src(j, bw, IW, mode);                                              \
          if (s >= 0) mxc_gu_st_##SUF(xr + s, (A)(mxc_gu_ld_##SUF(xr + s) + mxc_gu_ld_##SUF(gr + j))); \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_sx_diag_##SUF(mxc_opcall *call) {                                              \
    const int mode = (int)call->iattr[0];                                                       \
    const int64_t k = call->iattr[1];                                                           \
    const int a1 = (int)call->iattr[2], a2 = (int)call->iattr[3];                               \
    const mxc_tensor *X = mode == 0 ? &call->in[0] : &call->out[0];                             \
    T *xd = (T *)X->data;                                                                       \
    T *vd = (T *)(mode == 0 ? call->out[0].data : call->in[0].data);                            \
    int64_t st[MXC_MAX_NDIM], rs[MXC_MAX_NDIM], rsh[MXC_MAX_NDIM], L, outer = 1, o, l;         \
    int64_t r0 = k < 0 ? -k : 0, c0 = k > 0 ? k : 0;                                            \
    int d, nr = 0;                                                                              \
    st[X->ndim - 1] = 1;                                                                        \
    for (d = X->ndim - 2; d >= 0; d--) st[d] = st[d + 1] * X->shape[d + 1];                     \
    for (d = 0; d < X->ndim; d++) {                                                             \
      if (d == a1 || d == a2) continue;                                                         \
      rs[nr] = st[d];                                                                           \
      rsh[nr++] = X->shape[d];                                                                  \
      outer *= X->shape[d];                                                                     \
    }                                                                                           \
    L = mxc_sx_diag_len(X, k, a1, a2);                                                          \
    if (mode == 1) memset(xd, 0, (size_t)X->size * sizeof(T));                                  \
    for (o = 0; o < outer; o++) {                                                               \
      int64_t base = 0, rem = o;                                                                \
      for (d = nr - 1; d >= 0; d--) {                                                           \
        base += (rem % rsh[d]) * rs[d];                                                         \
        rem /= rsh[d];                                                                          \
      }                                                                                         \
      base += r0 * st[a1] + c0 * st[a2];                                                        \
      for (l = 0; l < L; l++) {                                                                 \
        T *xp = xd + base + l * (st[a1] + st[a2]);                                              \
        if (mode == 0) vd[o * L + l] = *xp;                                                     \
        else *xp = vd[o * L + l];                                                               \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_sx_add_n_##SUF(mxc_opcall *call) {                                             \
    const int64_t N = call->out[0].size;                                                        \
    T *y = (T *)call->out[0].data;                                                              \
    int64_t i;                                                                                  \
    int nt = mxc_gu_threads(call, N * call->nin);                                               \
    (void)nt;                                                                                   \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
    for (i = 0; i < N; i += 1024) {                                                             \
      int64_t e = i + 1024 < N ? i + 1024 : N, j;                                               \
      ACC acc[1024];                                                                            \
      int m;                                                                                    \
      for (j = i; j < e; j++) acc[j - i] = (ACC)mxc_gu_ld_##SUF((const T *)call->in[0].data + j); \
      for (m = 1; m < call->nin; m++) {                                                         \
        const T *xm = (const T *)call->in[m].data;                                              \
        for (j = i; j < e; j++) acc[j - i] += (ACC)mxc_gu_ld_##SUF(xm + j);                     \
      }                                                                                         \
      for (j = i; j < e; j++) mxc_gu_st_##SUF(y + j, (A)acc[j - i]);                            \
    }                                                                                           \
    return 0;                                                                                   \
  }

MXC_GU_ALL_TYPES(MXC_SX_GEN)

static int mxc_sx_shape_array(mxc_opcall *call) {
  int d;
  for (d = 0; d < call->in[0].ndim; d++) ((int64_t *)call->out[0].data)[d] = call->in[0].shape[d];
  return 0;
}

static int mxc_sx_size_array(mxc_opcall *call) {
  ((int64_t *)call->out[0].data)[0] = call->in[0].size;
  return 0;
}

#define MXC_SX_ENTRY(SUF, T, A, ACC, CODE)                                                      \
  {"pad", CODE, mxc_sx_pad_##SUF},                                                              \
  {"pad_grad", CODE, mxc_sx_pad_grad_##SUF},                                                    \
  {"diag", CODE, mxc_sx_diag_##SUF},                                                            \
  {"add_n", CODE, mxc_sx_add_n_##SUF},                                                          \
  {"shape_array", CODE, mxc_sx_shape_array},                                                    \
  {"size_array", CODE, mxc_sx_size_array},
static const mxc_code_entry mxc_shape_extra_table[] = {
  MXC_GU_ALL_TYPES(MXC_SX_ENTRY)
  {NULL, -1, NULL}
};
#endif
