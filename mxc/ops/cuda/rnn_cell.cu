// The RNN operator's fused gate steps (ops/rnn.py: _rnn_lstm_cell, _rnn_gru_cell and their
// backward kernels), one thread per (row, unit). The arithmetic is
// csrc/kernels/rnn_cell_math.h's, shared with the CPU kernels (csrc/kernels/rnn_cell.h);
// float16 computes in float. The GEMMs around them (the input projection of every step, the
// recurrent product) are FullyConnected / dot through cuBLAS.
#include "mxc/common.cuh"
#include "kernels/rnn_cell_math.h"

using namespace mxc;

namespace mxc {
// the shared functions by compute type (the header is C: one name per type)
MXC_DEV float lstm_fwd(float ai, float af, float ag, float ao, float cp, int clip, float lo,
                       float hi, float *c) {
  return mxc_lstm_fwd_f(ai, af, ag, ao, cp, clip, lo, hi, c);
}
MXC_DEV double lstm_fwd(double ai, double af, double ag, double ao, double cp, int clip,
                        double lo, double hi, double *c) {
  return mxc_lstm_fwd_d(ai, af, ag, ao, cp, clip, lo, hi, c);
}
MXC_DEV void lstm_bwd(float ai, float af, float ag, float ao, float cp, int clip, float lo,
                      float hi, float dh, float dc, float *da, float *dcp) {
  mxc_lstm_bwd_f(ai, af, ag, ao, cp, clip, lo, hi, dh, dc, da, dcp);
}
MXC_DEV void lstm_bwd(double ai, double af, double ag, double ao, double cp, int clip,
                      double lo, double hi, double dh, double dc, double *da, double *dcp) {
  mxc_lstm_bwd_d(ai, af, ag, ao, cp, clip, lo, hi, dh, dc, da, dcp);
}
MXC_DEV float gru_fwd(float xr, float xz, float xn, float hr, float hz, float hn, float h) {
  return mxc_gru_fwd_f(xr, xz, xn, hr, hz, hn, h);
}
MXC_DEV double gru_fwd(double xr, double xz, double xn, double hr, double hz, double hn,
                       double h) {
  return mxc_gru_fwd_d(xr, xz, xn, hr, hz, hn, h);
}
MXC_DEV void gru_bwd(float xr, float xz, float xn, float hr, float hz, float hn, float h,
                     float dh, float *dx, float *dhn, float *dhp) {
  mxc_gru_bwd_f(xr, xz, xn, hr, hz, hn, h, dh, dx, dhn, dhp);
}
MXC_DEV void gru_bwd(double xr, double xz, double xn, double hr, double hz, double hn, double h,
                     double dh, double *dx, double *dhn, double *dhp) {
  mxc_gru_bwd_d(xr, xz, xn, hr, hz, hn, h, dh, dx, dhn, dhp);
}
}  // namespace mxc

// gates (N, 4H) i, f, g, o; c (N, H) -> h, cn (N, H); n = N * H
template <class T>
__global__ void mxc_lstm_cell(const T *gates, const T *c, T *h, T *cn, i64 n, i64 H, int clip,
                              double lo, double hi) {
  typedef typename acc<T>::type A;
  MXC_LOOP(k, n) {
    const i64 o = (k / H) * 4 * H + k % H;
    A cv;
    const A hv = lstm_fwd(load(gates[o]), load(gates[o + H]), load(gates[o + 2 * H]),
                          load(gates[o + 3 * H]), load(c[k]), clip, (A)lo, (A)hi, &cv);
    h[k] = store<T>(hv);
    cn[k] = store<T>(cv);
  }
}

// (gates, c, dh, dc') -> dgates (N, 4H), dc (N, H)
template <class T>
__global__ void mxc_lstm_cell_grad(const T *gates, const T *c, const T *dh, const T *dcn,
                                   T *dgates, T *dc, i64 n, i64 H, int clip, double lo,
                                   double hi) {
  typedef typename acc<T>::type A;
  MXC_LOOP(k, n) {
    const i64 o = (k / H) * 4 * H + k % H;
    A d[4], dcv;
    lstm_bwd(load(gates[o]), load(gates[o + H]), load(gates[o + 2 * H]), load(gates[o + 3 * H]),
             load(c[k]), clip, (A)lo, (A)hi, load(dh[k]), load(dcn[k]), d, &dcv);
    dgates[o] = store<T>(d[0]);
    dgates[o + H] = store<T>(d[1]);
    dgates[o + 2 * H] = store<T>(d[2]);
    dgates[o + 3 * H] = store<T>(d[3]);
    dc[k] = store<T>(dcv);
  }
}

// xs, hh (N, 3H) r, z, n; h (N, H) -> h' (N, H)
template <class T>
__global__ void mxc_gru_cell(const T *xs, const T *hh, const T *h, T *hn, i64 n, i64 H) {
  MXC_LOOP(k, n) {
    const i64 o = (k / H) * 3 * H + k % H;
    hn[k] = store<T>(gru_fwd(load(xs[o]), load(xs[o + H]), load(xs[o + 2 * H]), load(hh[o]),
                             load(hh[o + H]), load(hh[o + 2 * H]), load(h[k])));
  }
}

// (xs, hh, h, dh') -> dxs, dhh (N, 3H), dh (N, H)
template <class T>
__global__ void mxc_gru_cell_grad(const T *xs, const T *hh, const T *h, const T *dhn, T *dxs,
                                  T *dhh, T *dh, i64 n, i64 H) {
  typedef typename acc<T>::type A;
  MXC_LOOP(k, n) {
    const i64 o = (k / H) * 3 * H + k % H;
    A dx[3], dhv, dhp;
    gru_bwd(load(xs[o]), load(xs[o + H]), load(xs[o + 2 * H]), load(hh[o]), load(hh[o + H]),
            load(hh[o + 2 * H]), load(h[k]), load(dhn[k]), dx, &dhv, &dhp);
    dxs[o] = dhh[o] = store<T>(dx[0]);
    dxs[o + H] = dhh[o + H] = store<T>(dx[1]);
    dxs[o + 2 * H] = store<T>(dx[2]);
    dhh[o + 2 * H] = store<T>(dhv);
    dh[k] = store<T>(dhp);
  }
}
