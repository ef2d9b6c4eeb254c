/* IEEE 754 binary16 <-> binary32, bit-exact with numpy's float16 (round to nearest even).
 * Kernels keep float16 data as uint16_t bits and compute in float32. */
#ifndef MXC_HALF_H
#define MXC_HALF_H
#include <stdint.h>
#include <string.h>

/* Both conversions are branch-free (every case computed, then selected), so loops over float16
 * data vectorise (with -fno-trapping-math, which lets the compiler compute the unused cases).
 * Checked equal to the earlier branchy versions on every half value and on all 2^32 floats. */
static inline float mxc_half_to_float(uint16_t h) {
  uint32_t o = (uint32_t)(h & 0x7fffu) << 13;            /* exponent and mantissa in place */
  uint32_t exp = o & (0x7c00u << 13);
  uint32_t normal = o + ((127u - 15u) << 23);            /* rebias */
  uint32_t infnan = o + ((255u - 31u) << 23);            /* inf / nan (payload kept) */
  /* zero and subnormals: read the mantissa as 2^-14 * (1 + m/1024), then take 2^-14 away as a
     float, which is exact: m * 2^-24 */
  uint32_t sub_bits = o + (113u << 23);
  float sub;
  memcpy(&sub, &sub_bits, sizeof sub);
  sub -= 6.103515625e-05f;                                /* 2^-14 */
  uint32_t subu;
  memcpy(&subu, &sub, sizeof subu);
  uint32_t bits = exp == (0x7c00u << 13) ? infnan : (exp == 0 ? subu : normal);
  bits |= (uint32_t)(h & 0x8000u) << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t mxc_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t a = x & 0x7fffffffu;
  /* subnormal results (|f| < 2^-14): adding 0.5 makes the FPU round |f| to a multiple of 2^-24
     (the ulp of [0.5, 1)), to nearest even; the bits above 0.5's are the half's mantissa (1024,
     when it rounds up to 2^-14, is the smallest normal's encoding) */
  float af;
  memcpy(&af, &a, sizeof af);
  float s = af + 0.5f;
  uint32_t su;
  memcpy(&su, &s, sizeof su);
  uint32_t sub = su - 0x3f000000u;
  /* normal results: rebias, round the 13 dropped bits to nearest even (a carry into the
     exponent is right, up to inf for |f| >= 65520) */
  uint32_t norm = (a + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  /* >= 65536, inf, nan: inf, or a quiet nan keeping the payload's top bits */
  uint32_t big = a > 0x7f800000u ? (0x7e00u | ((a >> 13) & 0x3ffu)) : 0x7c00u;
  uint32_t h = a >= 0x47800000u ? big : (a < 0x38800000u ? sub : norm);
  return (uint16_t)(sign | h);
}

/* bfloat16 (the top half of a float32) <-> binary32, bit-exact with ml_dtypes' bfloat16 (the
 * numpy dtype of mxc's bfloat16 arrays): round to nearest even; a nan becomes the quiet nan
 * 0x7fc0 with its sign (ml_dtypes drops the payload). Kernels compute bfloat16 in float32
 * (mxc/ops/bfloat16.py); these are the cast kernel's conversions. */
static inline float mxc_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t mxc_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  uint32_t nan = ((x >> 16) & 0x8000u) | 0x7fc0u;
  return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}
#endif
