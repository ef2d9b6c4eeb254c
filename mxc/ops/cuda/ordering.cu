// sort / argsort / topk: rows (pre, n, post) copied into a padded workspace of (key, index)
// pairs, p = next power of two >= n per row, then bitonic sorted in place by log2(p)^2/2 launches
// of mxc_bitonic_step (any row length, no shared-memory limit), then the first k written out.
// Keys are order-preserving unsigned integers of the values (descending: complemented), and
// pairs compare by (key, index): the result is the stable order the CPU kernels give (equal
// values keep input order; nan sorts by its sign bit, as the CPU's radix keys).
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
MXC_DEV u64 order_key(float v) {
  const unsigned u = __float_as_uint(v);
  return (u64)((u & 0x80000000u) ? ~u : (u | 0x80000000u));
}
MXC_DEV u64 order_key(__half v) { return order_key(__half2float(v)); }
MXC_DEV u64 order_key(double v) {
  const u64 u = (u64)__double_as_longlong(v);
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
MXC_DEV u64 order_key(unsigned char v) { return v; }
MXC_DEV u64 order_key(signed char v) { return (u64)(unsigned char)v ^ 0x80u; }
MXC_DEV u64 order_key(int v) { return (u64)((unsigned)v ^ 0x80000000u); }
MXC_DEV u64 order_key(long long v) { return (u64)v ^ 0x8000000000000000ull; }
}  // namespace mxc

// fill the workspace: keys[r * p + j], index[r * p + j]; padding sorts last
template <class T>
__global__ void mxc_sort_prepare(const T *x, u64 *keys, long long *index, i64 pre, i64 n,
                                 i64 post, i64 p, int ascend) {
  MXC_LOOP(i, pre * post * p) {
    const i64 r = i / p, j = i % p;
    if (j < n) {
      const u64 k = order_key(x[((r / post) * n + j) * post + r % post]);
      keys[i] = ascend ? k : ~k;
      index[i] = j;
    } else {
      keys[i] = ~0ull;
      index[i] = (long long)j;
    }
  }
}

// one compare-exchange stage (k: bitonic sequence size, s: partner distance) on every row
__global__ void mxc_bitonic_step(u64 *keys, long long *index, i64 rows, i64 p, i64 k, i64 s) {
  MXC_LOOP(i, rows * p) {
    const i64 j = i % p, l = j ^ s;
    if (l > j) {
      const i64 a = i, b = i - j + l;
      const bool up = (j & k) == 0;
      const u64 ka = keys[a], kb = keys[b];
      const long long ia = index[a], ib = index[b];
      const bool greater = ka > kb || (ka == kb && ia > ib);
      if (greater == up) {
        keys[a] = kb;
        keys[b] = ka;
        index[a] = ib;
        index[b] = ia;
      }
    }
  }
}

// write the first k of each row: values (ret & 1 == 0 or ret == 3) and/or indices as dtype To
template <class T, class To>
__global__ void mxc_sort_finish(const T *x, const long long *index, T *values, To *indices,
                                i64 pre, i64 n, i64 post, i64 p, i64 k) {
  MXC_LOOP(i, pre * post * k) {
    const i64 c = i % post, j = (i / post) % k, o = i / (post * k);
    const long long src = index[(o * post + c) * p + j];
    if (values) values[i] = x[(o * n + src) * post + c];
    if (indices) indices[i] = from_double<To>((double)src);
  }
}

// topk's ret_typ='mask': 1 at the first k positions of each sorted row (the mask, in the data's
// dtype, was zero-filled by the launch before)
template <class T>
__global__ void mxc_sort_mask(const long long *index, T *mask, i64 pre, i64 n, i64 post, i64 p,
                              i64 k) {
  MXC_LOOP(i, pre * post * k) {
    const i64 c = i % post, j = (i / post) % k, o = i / (post * k);
    mask[(o * n + index[(o * post + c) * p + j]) * post + c] = from_double<T>(1.0);
  }
}
