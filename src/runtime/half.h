// Host-only conversions between float and the 16-bit storage types (raw bits in uint16_t), used by the CPU
// backend, the tests and the benchmark. Round-to-nearest-even everywhere, like the GPU's cvt.rn.
//
// Written branch-light on purpose: the CPU backend converts whole chunks of weights in plain loops, and GCC
// vectorizes these functions there (no F16C needed), so they must stay free of calls and table lookups.
#pragma once

#include <cstdint>
#include <cstring>

#include "skinnygemm/dtype.h"

namespace skinnygemm {

namespace half_detail {
inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace half_detail

// bf16 is the upper half of a float, so widening is exact.
inline float bf16_to_float(uint16_t h) { return half_detail::float_of(static_cast<uint32_t>(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t u = half_detail::bits_of(f);
  // A NaN could round to infinity by the carry below; keep it a (quiet) NaN with its sign.
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; an overflow carries into the
  // exponent, which is exactly the right result (up to infinity).
  const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;  // exponent and mantissa
  // Normal numbers: move the fields into place and rebias the exponent from 15 to 127.
  uint32_t bits = (em << 13) + ((127u - 15u) << 23);
  // Infinity and NaN (exponent 31) need exponent 255: rebias once more; the mantissa (NaN payload) is kept.
  bits = em >= 0x7c00u ? bits + ((127u - 15u) << 23) : bits;
  // Zero and subnormals are em * 2^-24, exact in float (em < 2^10).
  const float sub = static_cast<float>(static_cast<int32_t>(em)) * 5.9604644775390625e-8f;  // 2^-24
  bits = em < 0x0400u ? half_detail::bits_of(sub) : bits;
  return half_detail::float_of(bits | sign);
}

inline uint16_t float_to_fp16(float f) {
  const uint32_t u = half_detail::bits_of(f);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x03ffu));  // quiet NaN
  // 65520 is halfway between 65504 (largest finite, odd mantissa) and 65536: ties-to-even gives infinity.
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  const uint32_t exp = a >> 23;
  if (exp < 113) {
    // Result is subnormal (or zero): the value in units of 2^-24 is mant * 2^(exp - 126); round that
    // integer shift to nearest even. Rounding up to 0x400 gives the smallest normal, as it should.
    const uint32_t shift = 126u - exp;  // >= 14
    if (shift > 24) return sign;        // below half of the smallest subnormal
    const uint32_t mant = (a & 0x007fffffu) | 0x00800000u;
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias the exponent, keep 10 mantissa bits, round the 13 dropped bits to nearest even. A carry
  // out of the mantissa correctly bumps the exponent.
  uint32_t h = ((exp - 112u) << 10) | ((a >> 13) & 0x03ffu);
  const uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

// Dispatch on a 16-bit dtype (BF16 or FP16; callers validated the problem).
inline float half_to_float(DType dtype, uint16_t h) {
  return dtype == DType::BF16 ? bf16_to_float(h) : fp16_to_float(h);
}
inline uint16_t float_to_half(DType dtype, float f) {
  return dtype == DType::BF16 ? float_to_bf16(f) : float_to_fp16(f);
}

}  // namespace skinnygemm
