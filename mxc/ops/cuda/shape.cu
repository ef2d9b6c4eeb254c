// Shape family: one gather through an index_map (common.cuh) serves transpose, slice (any
// steps), flip, tile, repeat, broadcast_to, and the per-input copies of concat/stack (and split's
// per-output copies: a slice); the scatter twin writes slice assignment. Works on element types
// by size (unsigned char/short/int/long long), since it only moves bytes.
#include "mxc/common.cuh"

using namespace mxc;

// y[i] = x[map(i)]
template <class T>
__global__ void mxc_gather_map(const T *x, T *y, i64 n, index_map m) {
  MXC_LOOP(i, n) y[i] = x[map_offset(m, i)];
}

// y[map(i)] = x[i] (slice assignment into y, the copy of the destination done before)
template <class T>
__global__ void mxc_scatter_map(const T *x, T *y, i64 n, index_map m) {
  MXC_LOOP(i, n) y[map_offset(m, i)] = x[i];
}

// y[map(i)] = value, the value already in y's storage bits (slice assignment of a scalar)
template <class T>
__global__ void mxc_scatter_value(T *y, i64 n, index_map m, T value) {
  MXC_LOOP(i, n) y[map_offset(m, i)] = value;
}
