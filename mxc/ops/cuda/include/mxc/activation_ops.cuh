// The activation functions of activation.cu (Activation and LeakyReLU forward and backward, in
// the compute type acc<T>), also applied by the generated kernels of fused pointwise chains
// (mxc/ops/cuda/fusion.py).
#pragma once
#include "mxc/common.cuh"

namespace mxc {
// act_type codes (specs.py ACT_TYPES): 0 relu, 1 sigmoid, 2 tanh, 3 softrelu, 4 softsign
template <class A> MXC_DEV A act_fwd(int t, A x) {
  switch (t) {
    case 0: return x > (A)0 ? x : (A)0;
    case 1: return (A)1 / ((A)1 + exp(-x));
    case 2: return tanh(x);
    case 3: return x > (A)20 ? x : log1p(exp(x));  // MXNet's softrelu threshold
    default: return x / ((A)1 + fabs(x));
  }
}
// gradient from the output y (relu, sigmoid, tanh, softrelu) or the input x (softsign)
template <class A> MXC_DEV A act_bwd(int t, A g, A y, A x) {
  switch (t) {
    case 0: return g * (y > (A)0 ? (A)1 : (y != y ? y : (A)0));  // nan propagates, as the CPU
    case 1: return g * y * ((A)1 - y);
    case 2: return g * ((A)1 - y * y);
    case 3: return g * -expm1(-y);
    default: {
      const A d = (A)1 + fabs(x);
      return g / (d * d);
    }
  }
}
// gelu and its derivative as the CPU's (csrc/kernels/activation.h): float x/2 erfc(-x/sqrt2) in
// double, rounded once (1 + erff(x/sqrt2) loses every digit in the negative tail); double the
// erf form
MXC_DEV float gelu_fwd(float x) {
  return (float)(0.5 * (double)x * erfc(-(double)x * 0.7071067811865476));
}
MXC_DEV double gelu_fwd(double x) { return 0.5 * x * (1.0 + erf(x * 0.7071067811865476)); }
MXC_DEV float gelu_bwd(float g, float x) {
  const double xd = x;
  return (float)((double)g * (0.5 * erfc(-xd * 0.7071067811865476) +
                              xd * 0.3989422804014327 * exp(-0.5 * xd * xd)));
}
MXC_DEV double gelu_bwd(double g, double x) {
  return g * (0.5 * (1.0 + erf(x * 0.7071067811865476)) +
              x * 0.3989422804014327 * exp(-0.5 * x * x));
}
// LeakyReLU act_type codes: 0 leaky, 1 elu, 2 selu, 3 gelu (erf form), 4 prelu, 5 rrelu
MXC_DEV double kSeluAlpha() { return 1.6732632423543772848170429916717; }
MXC_DEV double kSeluLambda() { return 1.0507009873554804934193349852946; }
template <class A> MXC_DEV A leaky_fwd(int t, A x, A slope) {
  switch (t) {
    case 1: return x > (A)0 ? x : slope * expm1(x);
    case 2: return (A)kSeluLambda() * (x > (A)0 ? x : (A)kSeluAlpha() * expm1(x));
    case 3: return gelu_fwd(x);
    default: return x > (A)0 ? x : slope * x;
  }
}
// x: what decides the branch (the output y for leaky, elu, selu, rrelu; the input for gelu and
// prelu), y: the output (elu, selu)
template <class A> MXC_DEV A leaky_bwd(int t, A g, A x, A y, A slope) {
  switch (t) {
    case 1: return x > (A)0 ? g : g * (y + slope);
    // MXNet 1.9.1's selu' from the output: L * (A + y) for y <= 0 (as the CPU kernel)
    case 2: return x > (A)0 ? g * (A)kSeluLambda() : g * ((A)kSeluLambda() * ((A)kSeluAlpha() + y));
    case 3: return gelu_bwd(g, x);
    default: return x > (A)0 ? g : g * slope;
  }
}
}  // namespace mxc
