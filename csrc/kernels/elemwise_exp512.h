/* float32 exp for AVX-512 machines, written with intrinsics: the same algorithm as mxc_expf
 * (elemwise_common.h), but 2^k is applied by VSCALEFPS in one instruction (one rounding, exact
 * for subnormal results and saturating for huge k), so no input clamps and no integer exponent
 * arithmetic are needed. Within 0.94 ulp of exp over all 2^32 float32 inputs, with inf, 0 and
 * NaN exactly as expf (tools/check_exp512.py checks every input; the kernel tests sample it).
 * Picked per call when the CPU has AVX-512F. */
#ifndef MXC_ELEMWISE_EXP512_H
#define MXC_ELEMWISE_EXP512_H
#include "kernels/elemwise_unary.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define MXC_HAVE_EXP512 1

__attribute__((target("avx512f"))) static inline __m512 mxc_exp512(__m512 x) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  __m512 kf = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), magic), magic);
  __m512 r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  __m512 y = _mm512_scalef_ps(p, kf);
  /* the ends as expf: +inf above the overflow threshold, 0 below the underflow one, NaN as is */
  __mmask16 big = _mm512_cmp_ps_mask(x, _mm512_set1_ps(88.72283935546875f), _CMP_GT_OQ);
  __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-103.972084045410156f), _CMP_LT_OQ);
  __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  y = _mm512_mask_mov_ps(y, big, _mm512_set1_ps(INFINITY));
  y = _mm512_mask_mov_ps(y, tiny, _mm512_setzero_ps());
  return _mm512_mask_mov_ps(y, nan, x);
}

__attribute__((target("avx512f"))) static void mxc_ul_exp512_f32(const void *xv, void *yv,
                                                                int64_t n) {
  const float *x = (const float *)xv;
  float *y = (float *)yv;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, mxc_exp512(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, mxc_exp512(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

/* "unary:exp" for float32: the AVX-512 loop where the CPU has it, the generated clones elsewhere */
static int mxc_unary_exp_best_f32(mxc_opcall *c) {
  if (__builtin_cpu_supports("avx512f")) return mxc_run_unary(c, mxc_ul_exp512_f32, 4, 2);
  return mxc_unary_exp_f32(c);
}
#endif
#endif
