// Init kernels: fill (zeros, ones, full), arange (with repeat), eye (with offset k), linspace.
#include "mxc/common.cuh"

using namespace mxc;

template <class T>
__global__ void mxc_fill(T *y, i64 n, double value) {
  const T v = from_double<T>(value);
  MXC_LOOP(i, n) y[i] = v;
}

// MXNet's arange: value(i) = start + (i / repeat) * step, computed in double
template <class T>
__global__ void mxc_arange(T *y, i64 n, double start, double step, i64 repeat) {
  MXC_LOOP(i, n) y[i] = from_double<T>(start + (double)(i / repeat) * step);
}

// linspace: start + i * step, the last element exactly `stop` when endpoint
template <class T>
__global__ void mxc_linspace(T *y, i64 n, double start, double step, double stop, int endpoint) {
  MXC_LOOP(i, n) y[i] = from_double<T>((endpoint && i == n - 1) ? stop : start + (double)i * step);
}

// eye(N, M, k): 1 where col - row == k
template <class T>
__global__ void mxc_eye(T *y, i64 rows, i64 cols, i64 k) {
  MXC_LOOP(i, rows * cols) y[i] = from_double<T>((i % cols) - (i / cols) == k ? 1.0 : 0.0);
}
