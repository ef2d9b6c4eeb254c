// Activation (relu, sigmoid, tanh, softrelu, softsign), LeakyReLU (leaky, elu, selu, gelu,
// prelu, rrelu at inference) and their backward kernels, and Dropout's apply (the mask comes from
// random.cu). Float types only, as MXNet; compute in acc<T>.
#include "mxc/common.cuh"

#include "mxc/activation_ops.cuh"

using namespace mxc;

template <class T>
__global__ void mxc_activation(const T *x, T *y, i64 n, int act) {
  MXC_LOOP(i, n) y[i] = store<T>(act_fwd(act, load(x[i])));
}

template <class T>
__global__ void mxc_activation_grad(const T *dy, const T *y, const T *x, T *dx, i64 n, int act) {
  typedef typename acc<T>::type A;
  MXC_LOOP(i, n) dx[i] = store<T>(act_bwd(act, load(dy[i]), load(y[i]), x ? load(x[i]) : (A)0));
}

// LeakyReLU: slope = the scalar `slope`, or for prelu gamma[(i / inner) % channels] (gamma has
// one value per channel of axis 1, or one value: channels == 1)
template <class T>
__global__ void mxc_leaky_relu(const T *x, const T *gamma, T *y, i64 n, int act, double slope,
                               i64 inner, i64 channels) {
  typedef typename acc<T>::type A;
  MXC_LOOP(i, n) {
    const A s = gamma ? load(gamma[(i / inner) % channels]) : (A)slope;
    y[i] = store<T>(leaky_fwd(act, load(x[i]), s));
  }
}

template <class T>
__global__ void mxc_leaky_relu_grad(const T *dy, const T *x, const T *y, const T *gamma, T *dx,
                                    i64 n, int act, double slope, i64 inner, i64 channels) {
  typedef typename acc<T>::type A;
  MXC_LOOP(i, n) {
    const A s = gamma ? load(gamma[(i / inner) % channels]) : (A)slope;
    dx[i] = store<T>(leaky_bwd(act, load(dy[i]), load(x[i]), y ? load(y[i]) : (A)0, s));
  }
}

// prelu's gamma gradient: per channel, sum over the other axes of dy * x where x <= 0; one block
// per channel (outer = size before axis 1, inner = size after)
template <class T>
__global__ void mxc_prelu_gamma_grad(const T *dy, const T *x, T *dgamma, i64 outer, i64 channels,
                                     i64 inner) {
  typedef typename acc<T>::type A;
  __shared__ A scratch[32];
  for (i64 c = blockIdx.x; c < channels; c += gridDim.x) {
    A s = 0;
    for (i64 j = threadIdx.x; j < outer * inner; j += blockDim.x) {
      const i64 o = (j / inner) * channels * inner + c * inner + j % inner;
      const A xv = load(x[o]);
      if (!(xv > (A)0)) s += load(dy[o]) * xv;
    }
    s = block_reduce(s, add_op(), (A)0, scratch);
    if (threadIdx.x == 0) dgamma[c] = store<T>(s);
  }
}
