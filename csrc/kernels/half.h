/* IEEE 754 binary16 <-> binary32, bit-exact with numpy's float16 (round to nearest even).
 * Kernels keep float16 data as uint16_t bits and compute in float32. */
#ifndef MXC_HALF_H
#define MXC_HALF_H
#include <stdint.h>
#include <string.h>

static inline float mxc_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {              /* subnormal: normalise */
      int e = -1;
      do { man <<= 1; e++; } while (!(man & 0x400u));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);   /* inf / nan (payload kept) */
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t mxc_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {                       /* inf or nan */
    return sign | 0x7c00u | (absx > 0x7f800000u ? (uint16_t)(0x200u | ((absx >> 13) & 0x3ffu)) : 0);
  }
  if (absx >= 0x477ff000u) return sign | 0x7c00u;  /* rounds to >= 65520: overflow to inf */
  if (absx < 0x38800000u) {                        /* result is subnormal or zero */
    if (absx < 0x33000000u) return sign;           /* < 2^-25: rounds to zero */
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;                      /* 14..24 */
    uint32_t half_m = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half_m & 1u))) half_m++;
    return sign | (uint16_t)half_m;
  }
  uint32_t h = ((absx >> 13) - ((127u - 15u) << 10));
  uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;  /* may carry into exponent: correct */
  return sign | (uint16_t)h;
}
#endif
