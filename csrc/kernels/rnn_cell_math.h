/* The per-unit steps of the fused RNN operator's gates (mxc/ops/rnn.py), shared by the CPU
 * kernels (csrc/kernels/rnn_cell.h) and the GPU kernels (mxc/ops/cuda/rnn_cell.cu), so both
 * devices compute the same expressions in the same order.
 *
 * LSTM (cuDNN's gate order i, f, g, o): the pre-activations a = x W_i^T + b_i + h W_h^T + b_h of
 * one unit and its previous cell cp give c = sig(af) cp + sig(ai) tanh(ag), clipped to [lo, hi]
 * when clip (nan stays nan, as clip), and h = sig(ao) tanh(c). The backward takes dh and the
 * gradient reaching the new cell from later steps (dc) and gives the four pre-activation
 * gradients and the previous cell's; the clip passes the gradient where lo <= c_raw <= hi.
 * GRU (r, z, n): x-side pre-activations (xr, xz, xn, with b_i) and h-side (hr, hz, hn, with
 * b_h): r = sig(xr + hr), z = sig(xz + hz), n = tanh(xn + r hn), h' = n + z (h - n). Its
 * backward gives the gradients of the x-side (dr, dz, dn), of hn (r dn), and of h directly
 * (z dh'); those of hr and hz equal dr and dz.
 * Each function exists for float (_f, float math) and double (_d).
 */
#ifndef MXC_KERNELS_RNN_CELL_MATH_H
#define MXC_KERNELS_RNN_CELL_MATH_H
#include "kernels/hd_math.h"

#define MXC_RNN_CELL_MATH(S, R, EXP, TANH)                                                       \
  MXC_HD R mxc_rnn_sigmoid_##S(R x) { return (R)1 / ((R)1 + EXP(-x)); }                          \
  MXC_HD R mxc_lstm_fwd_##S(R ai, R af, R ag, R ao, R cp, int clip, R lo, R hi, R *c) {          \
    const R i = mxc_rnn_sigmoid_##S(ai), f = mxc_rnn_sigmoid_##S(af);                             \
    R cn = f * cp + i * TANH(ag);                                                                \
    if (clip) cn = cn > hi ? hi : (cn < lo ? lo : cn);                                           \
    *c = cn;                                                                                     \
    return mxc_rnn_sigmoid_##S(ao) * TANH(cn);                                                   \
  }                                                                                              \
  MXC_HD void mxc_lstm_bwd_##S(R ai, R af, R ag, R ao, R cp, int clip, R lo, R hi, R dh, R dc,   \
                               R *da, R *dcp) {                                                  \
    const R i = mxc_rnn_sigmoid_##S(ai), f = mxc_rnn_sigmoid_##S(af);                             \
    const R g = TANH(ag), o = mxc_rnn_sigmoid_##S(ao);                                           \
    const R raw = f * cp + i * g;                                                                \
    const R cn = clip ? (raw > hi ? hi : (raw < lo ? lo : raw)) : raw;                           \
    const R tc = TANH(cn);                                                                       \
    R d = dc + dh * o * ((R)1 - tc * tc);                                                        \
    if (clip && !(raw >= lo && raw <= hi)) d = (R)0;                                             \
    da[0] = d * g * i * ((R)1 - i);                                                              \
    da[1] = d * cp * f * ((R)1 - f);                                                             \
    da[2] = d * i * ((R)1 - g * g);                                                              \
    da[3] = dh * tc * o * ((R)1 - o);                                                            \
    *dcp = d * f;                                                                                \
  }                                                                                              \
  MXC_HD R mxc_gru_fwd_##S(R xr, R xz, R xn, R hr, R hz, R hn, R h) {                            \
    const R r = mxc_rnn_sigmoid_##S(xr + hr), z = mxc_rnn_sigmoid_##S(xz + hz);                  \
    const R n = TANH(xn + r * hn);                                                               \
    return n + z * (h - n);                                                                      \
  }                                                                                              \
  MXC_HD void mxc_gru_bwd_##S(R xr, R xz, R xn, R hr, R hz, R hn, R h, R dh, R *dx, R *dhn,      \
                              R *dhp) {                                                          \
    const R r = mxc_rnn_sigmoid_##S(xr + hr), z = mxc_rnn_sigmoid_##S(xz + hz);                  \
    const R n = TANH(xn + r * hn);                                                               \
    const R dn = dh * ((R)1 - z) * ((R)1 - n * n);                                               \
    dx[0] = dn * hn * r * ((R)1 - r);                                                            \
    dx[1] = dh * (h - n) * z * ((R)1 - z);                                                       \
    dx[2] = dn;                                                                                  \
    *dhn = dn * r;                                                                               \
    *dhp = dh * z;                                                                               \
  }

/* float exp and tanh: libm's (or the GPU's built-ins) unless the includer names others (the
 * CPU kernels: elemwise_common.h's mxc_expf / mxc_tanhf, which vectorise) */
#ifndef MXC_RNN_EXPF
#define MXC_RNN_EXPF expf
#define MXC_RNN_TANHF tanhf
#endif
MXC_RNN_CELL_MATH(f, float, MXC_RNN_EXPF, MXC_RNN_TANHF)
MXC_RNN_CELL_MATH(d, double, exp, tanh)

#endif
