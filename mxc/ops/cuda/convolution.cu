// Convolution and Deconvolution (1-D, 2-D, 3-D; groups; dilation) on the GPU without cuDNN:
// im2col + cuBLAS GEMMs (ops/cuda/convolution.py plans them), the kernels here move data.
//
// A chunk of nc samples is lowered at once, so one GEMM per group covers the whole chunk:
//   col (C * Kp, nc * O): row c * Kp + kk (channel, kernel offset), column n * O + o,
//   i.e. per group g the matrix rows g * (C/G) * Kp .. of a (G, CK, nc * O) tensor;
//   out-of-chunk outputs are kept channel-major as (M, nc * O) between the GEMMs and the
//   NC* layout of the arrays (permute_out / permute_in).
// col2im gathers (every input element sums the columns that read it, in kernel-offset order):
// no atomics, one writer per element, deterministic.
// Spatial sizes, kernel, stride, dilation and pad are 3-D (leading 1, 1, 1, 0 for 1-D/2-D).
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
// chunk and geometry, as int64s (ops/cuda/convolution.py _geom): first sample, samples in the
// chunk, input channels (of the convolution: a Deconvolution's output), output channels,
// input and output spatial sizes, kernel, stride, dilation, pad
struct conv_geom { i64 n0, nc, C, M, I[3], O[3], k[3], s[3], d[3], p[3]; };

MXC_DEV i64 cg_isz(const conv_geom &g) { return g.I[0] * g.I[1] * g.I[2]; }
MXC_DEV i64 cg_osz(const conv_geom &g) { return g.O[0] * g.O[1] * g.O[2]; }
MXC_DEV i64 cg_kp(const conv_geom &g) { return g.k[0] * g.k[1] * g.k[2]; }
}  // namespace mxc

template <class T>
__global__ void mxc_im2col(const T *x, T *col, conv_geom g) {
  const i64 osz = cg_osz(g), isz = cg_isz(g), kp = cg_kp(g);
  MXC_LOOP(e, g.C * kp * g.nc * osz) {
    const i64 o = e % osz, r = e / osz, n = r % g.nc, r2 = r / g.nc, kk = r2 % kp, c = r2 / kp;
    const i64 oo[3] = {o / (g.O[1] * g.O[2]), (o / g.O[2]) % g.O[1], o % g.O[2]};
    const i64 ko[3] = {kk / (g.k[1] * g.k[2]), (kk / g.k[2]) % g.k[1], kk % g.k[2]};
    i64 at = 0;
    bool in = true;
    for (int j = 0; j < 3; ++j) {
      const i64 i = oo[j] * g.s[j] - g.p[j] + ko[j] * g.d[j];
      in = in && i >= 0 && i < g.I[j];
      at = at * g.I[j] + i;
    }
    col[e] = in ? x[((g.n0 + n) * g.C + c) * isz + at] : store<T>((typename acc<T>::type)0);
  }
}

// x[n0 + n, c, i] = the sum of the columns that read input element i (+ bias[c]: a
// Deconvolution's bias, or null)
template <class T>
__global__ void mxc_col2im(const T *col, const T *bias, T *x, conv_geom g) {
  typedef typename acc<T>::type A;
  const i64 osz = cg_osz(g), isz = cg_isz(g), kp = cg_kp(g);
  MXC_LOOP(e, g.nc * g.C * isz) {
    const i64 i = e % isz, r = e / isz, c = r % g.C, n = r / g.C;
    const i64 ii[3] = {i / (g.I[1] * g.I[2]), (i / g.I[2]) % g.I[1], i % g.I[2]};
    A s = 0;
    for (i64 kk = 0; kk < kp; ++kk) {
      const i64 ko[3] = {kk / (g.k[1] * g.k[2]), (kk / g.k[2]) % g.k[1], kk % g.k[2]};
      i64 o = 0;
      bool hit = true;
      for (int j = 0; j < 3 && hit; ++j) {
        const i64 t = ii[j] + g.p[j] - ko[j] * g.d[j];
        hit = t >= 0 && t % g.s[j] == 0 && t / g.s[j] < g.O[j];
        o = o * g.O[j] + t / g.s[j];
      }
      if (hit) s += load(col[((c * kp + kk) * g.nc + n) * osz + o]);
    }
    if (bias) s += load(bias[c]);
    x[((g.n0 + n) * g.C + c) * isz + i] = store<T>(s);
  }
}

// y[n0 + n, m, o] = tmp[m, n * O + o] (+ bias[m], or null)
template <class T>
__global__ void mxc_conv_permute_out(const T *tmp, const T *bias, T *y, i64 n0, i64 nc, i64 M,
                                     i64 osz) {
  typedef typename acc<T>::type A;
  MXC_LOOP(e, nc * M * osz) {
    const i64 o = e % osz, r = e / osz, m = r % M, n = r / M;
    const T v = tmp[(m * nc + n) * osz + o];
    y[(n0 * M) * osz + e] = bias ? store<T>(load(v) + load(bias[m])) : v;
  }
}

// dyp[m, n * O + o] = dy[n0 + n, m, o]
template <class T>
__global__ void mxc_conv_permute_in(const T *dy, T *dyp, i64 n0, i64 nc, i64 M, i64 osz) {
  MXC_LOOP(e, nc * M * osz) {
    const i64 o = e % osz, r = e / osz, m = r % M, n = r / M;
    dyp[(m * nc + n) * osz + o] = dy[(n0 * M) * osz + e];
  }
}

// y[n, m, o] += b[m]: the bias after a cuDNN convolution pass (ops/cuda/cudnn_conv.py)
template <class T>
__global__ void mxc_conv_add_bias(T *y, const T *b, i64 total, i64 M, i64 osz) {
  MXC_LOOP(e, total) {
    y[e] = store<T>(load(y[e]) + load(b[(e / osz) % M]));
  }
}

// db[m] = the sum of dy[:, m, :] (in double)
template <class T>
__global__ void mxc_conv_bias_grad(const T *dy, T *db, i64 N, i64 M, i64 osz) {
  MXC_LOOP(m, M) {
    double s = 0;
    for (i64 n = 0; n < N; ++n)
      for (i64 o = 0; o < osz; ++o) s += (double)load(dy[(n * M + m) * osz + o]);
    db[m] = store<T>((typename acc<T>::type)s);
  }
}
