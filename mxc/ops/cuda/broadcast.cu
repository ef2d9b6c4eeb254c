// Broadcasting kernels: binary ops whose operands broadcast to the output (the host collapses
// dims and passes per-operand strides, 0 on broadcast dims), broadcast_to, and the gradient
// reduction of a broadcast operand is a sum (reduce.cu). Ops and semantics: elemwise.cu.
#include "mxc/common.cuh"
#include "mxc/elemwise_ops.cuh"

using namespace mxc;

template <class Op, class T>
__global__ void mxc_bcast_binary(const T *a, const T *b, T *y, i64 n, bcast2 m) {
  MXC_LOOP(i, n) {
    i64 r = i, oa = 0, ob = 0;
    for (int d = (int)m.ndim - 1; d >= 0; --d) {
      const i64 c = r % m.shape[d];
      r /= m.shape[d];
      oa += c * m.sa[d];
      ob += c * m.sb[d];
    }
    y[i] = apply2(Op(), a[oa], b[ob]);
  }
}

// where(cond, x, y) with all three broadcast to the output
template <class T, class C>
__global__ void mxc_bcast_where(const C *cond, const T *x, const T *y, T *out, i64 n, bcast3 m) {
  MXC_LOOP(i, n) {
    i64 r = i, o0 = 0, o1 = 0, o2 = 0;
    for (int d = (int)m.ndim - 1; d >= 0; --d) {
      const i64 c = r % m.shape[d];
      r /= m.shape[d];
      o0 += c * m.s0[d];
      o1 += c * m.s1[d];
      o2 += c * m.s2[d];
    }
    out[i] = to_double(cond[o0]) != 0.0 ? x[o1] : y[o2];
  }
}
