// Reference values for cooperative-matrix tests: elements of any component format put
// into and read from byte buffers, and what a multiply-add must produce from the exact
// sum of products (computed by the test in double): one rounding to D's float format
// (kernels/number_formats.h's scalar conversions, tested exhaustively on their own), or
// an integer D's low bits (wrapping) or clamp (saturating), per SPV_KHR_cooperative_matrix.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coopvk/kernels/number_formats.h"

namespace coopvk::test {

using kernels::NumberFormat;

inline bool is_int_format(NumberFormat f) { return !kernels::format_is_float(f); }
inline bool is_signed_format(NumberFormat f) {
  return f == NumberFormat::I8 || f == NumberFormat::I16 || f == NumberFormat::I32 || f == NumberFormat::I64;
}
inline unsigned format_bits(NumberFormat f) { return unsigned(kernels::format_size(f)) * 8; }
inline double int_lo(NumberFormat f) { return is_signed_format(f) ? -std::ldexp(1.0, int(format_bits(f)) - 1) : 0.0; }
inline double int_hi(NumberFormat f) {
  return is_signed_format(f) ? std::ldexp(1.0, int(format_bits(f)) - 1) - 1 : std::ldexp(1.0, int(format_bits(f))) - 1;
}

// The bits of v (a value the format holds exactly, or rounded to nearest even) in format f.
inline uint64_t encode(NumberFormat f, double v) {
  using NF = NumberFormat;
  switch (f) {
    case NF::F16: return kernels::f32_to_f16(float(v));
    case NF::BF16: return kernels::f32_to_bf16(float(v));
    case NF::E4M3: return kernels::f32_to_e4m3(float(v), kernels::Overflow::Ieee);
    case NF::E5M2: return kernels::f32_to_e5m2(float(v), kernels::Overflow::Ieee);
    case NF::F32: {
      float x = float(v);
      uint32_t b;
      std::memcpy(&b, &x, 4);
      return b;
    }
    case NF::F64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return b;
    }
    default: {  // integers: two's complement, the format's low bits
      uint64_t b = uint64_t(int64_t(v));
      return format_bits(f) < 64 ? b & ((uint64_t(1) << format_bits(f)) - 1) : b;
    }
  }
}

inline double decode(NumberFormat f, uint64_t bits) {
  using NF = NumberFormat;
  switch (f) {
    case NF::F16: return kernels::f16_to_f32(uint16_t(bits));
    case NF::BF16: return kernels::bf16_to_f32(uint16_t(bits));
    case NF::E4M3: return kernels::e4m3_to_f32(uint8_t(bits));
    case NF::E5M2: return kernels::e5m2_to_f32(uint8_t(bits));
    case NF::F32: {
      float x;
      uint32_t b = uint32_t(bits);
      std::memcpy(&x, &b, 4);
      return x;
    }
    case NF::F64: {
      double x;
      std::memcpy(&x, &bits, 8);
      return x;
    }
    default: {
      unsigned w = format_bits(f);
      if (w < 64) bits &= (uint64_t(1) << w) - 1;
      if (is_signed_format(f) && w < 64 && (bits >> (w - 1)) & 1) return double(int64_t(bits | ~((uint64_t(1) << w) - 1)));
      return is_signed_format(f) ? double(int64_t(bits)) : double(bits);
    }
  }
}

inline void put(std::vector<uint8_t>& buf, size_t i, NumberFormat f, double v) {
  uint64_t bits = encode(f, v);
  std::memcpy(buf.data() + i * kernels::format_size(f), &bits, kernels::format_size(f));
}
inline uint64_t get_bits(const std::vector<uint8_t>& buf, size_t i, NumberFormat f) {
  uint64_t bits = 0;
  std::memcpy(&bits, buf.data() + i * kernels::format_size(f), kernels::format_size(f));
  return bits;
}
inline double get(const std::vector<uint8_t>& buf, size_t i, NumberFormat f) { return decode(f, get_bits(buf, i, f)); }

// What D holds for an exact C + sum(A x B) (an integer below 2^53, or a float sum every
// partial sum of which is exact in f32): the bits of D's element.
inline uint64_t muladd_result(NumberFormat d, double exact, bool saturating) {
  if (!is_int_format(d)) return encode(d, exact);
  if (saturating) return encode(d, std::min(std::max(exact, int_lo(d)), int_hi(d)));
  double span = int_hi(d) - int_lo(d) + 1;
  double r = std::fmod(exact - int_lo(d), span);
  if (r < 0) r += span;
  return encode(d, r + int_lo(d));
}

}  // namespace coopvk::test
