// IEEE binary16 <-> float conversions for the benches' CPU references (bench_peak's
// per-operation fp16 rounding, bench_elementwise's fp16 buffers). Portable bit
// manipulation rather than _Float16 or F16C, so a reference never depends on what the
// host compiler or CPU offers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace bench {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    const float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  const uint32_t bits = exp == 31 ? sign | 0x7F800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even, as fp16 arithmetic does; overflow goes to infinity. Finite inputs
// only (the benches never produce NaN on purpose).
inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = int32_t((x >> 23) & 255) - 127 + 15;
  uint32_t man = x & 0x7FFFFFu;
  if (exp <= 0) {  // subnormal or zero in fp16
    if (exp < -10) return uint16_t(sign);
    man |= 0x800000u;
    const uint32_t shift = uint32_t(14 - exp);
    uint32_t h = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(exp) << 10) | (man >> 13);
  const uint32_t rem = man & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return uint16_t(sign | std::min<uint32_t>(h, 0x7C00u));
}

// The value fp16 arithmetic would hold for `f`: one rounding to fp16.
inline float round_half(float f) { return half_to_float(float_to_half(f)); }

}  // namespace bench
