// The reference conversions: every pair goes through one exact intermediate, a sign, an
// integer significand and a binary exponent, so each result is rounded exactly once.
// Slow but simple; convert() vectorizes the pairs that matter and is tested against this.
#include <bit>
#include <cstring>

#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels {
namespace {

struct FloatSpec {
  int ebits;
  int mbits;
  int bias;
  bool has_inf;  // false: E4M3, whose top exponent holds finite values and one NaN
};

constexpr FloatSpec float_spec(NumberFormat f) {
  switch (f) {
    case NumberFormat::F32: return {8, 23, 127, true};
    case NumberFormat::F16: return {5, 10, 15, true};
    case NumberFormat::BF16: return {8, 7, 127, true};
    case NumberFormat::E4M3: return {4, 3, 7, false};
    case NumberFormat::E5M2: return {5, 2, 15, true};
    default: return {11, 52, 1023, true};  // F64
  }
}

// value = (-1)^neg * m * 2^e for Finite; payload is the NaN mantissa, left-aligned.
struct Value {
  enum Kind : uint8_t { Zero, Finite, Inf, NaN } kind;
  bool neg;
  uint64_t m;
  int e;
  uint64_t payload;
};

// m / 2^shift rounded to nearest, ties to even; shift >= 0 and may exceed 64.
uint64_t shift_right_rne(uint64_t m, int64_t shift) {
  if (shift == 0) return m;
  if (shift > 64) return 0;
  if (shift == 64) return m > (uint64_t{1} << 63) ? 1 : 0;  // a tie rounds to even 0
  const uint64_t q = m >> shift;
  const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
}

Value decode_float(const FloatSpec& f, uint64_t bits) {
  const uint64_t emask = (uint64_t{1} << f.ebits) - 1;
  const uint64_t mmask = (uint64_t{1} << f.mbits) - 1;
  const uint64_t exp = (bits >> f.mbits) & emask;
  const uint64_t mant = bits & mmask;
  Value v{Value::Finite, ((bits >> (f.ebits + f.mbits)) & 1) != 0, 0, 0, 0};
  const bool top = exp == emask;
  if ((f.has_inf && top) || (!f.has_inf && top && mant == mmask)) {
    v.kind = (f.has_inf && mant == 0) ? Value::Inf : Value::NaN;
    v.payload = mant << (64 - f.mbits);
    return v;
  }
  if (exp == 0) {
    if (mant == 0) {
      v.kind = Value::Zero;
      return v;
    }
    v.m = mant;
    v.e = 1 - f.bias - f.mbits;
  } else {
    v.m = mant | (uint64_t{1} << f.mbits);
    v.e = int(exp) - f.bias - f.mbits;
  }
  return v;
}

uint64_t encode_float(const FloatSpec& f, const Value& v, Overflow o) {
  const uint64_t sign = uint64_t{v.neg} << (f.ebits + f.mbits);
  const uint64_t all_ones = (uint64_t{1} << (f.ebits + f.mbits)) - 1;
  const uint64_t exp_ones = ((uint64_t{1} << f.ebits) - 1) << f.mbits;
  // Largest finite magnitude: below infinity, or below E4M3's single NaN.
  const uint64_t max_code = f.has_inf ? exp_ones - 1 : all_ones - 1;
  const uint64_t overflow_code =
      o == Overflow::Saturate ? max_code : (f.has_inf ? exp_ones : all_ones);
  switch (v.kind) {
    case Value::Zero: return sign;
    case Value::Inf: return sign | overflow_code;
    case Value::NaN:
      if (!f.has_inf) return sign | all_ones;
      return sign | exp_ones | (uint64_t{1} << (f.mbits - 1)) | (v.payload >> (64 - f.mbits));
    case Value::Finite: break;
  }
  const int emin = 1 - f.bias;
  const int64_t top_exp = int64_t(63 - std::countl_zero(v.m)) + v.e;  // value in [2^t, 2^t+1)
  // Far beyond the largest finite value: decide here so the arithmetic below stays small.
  if (top_exp > (int64_t{1} << f.ebits) - f.bias) return sign | overflow_code;
  // The exponent of the last significand bit: fixed below the normal range (denormals).
  const int64_t quantum = (top_exp >= emin ? top_exp : emin) - f.mbits;
  const int64_t shift = quantum - v.e;
  const uint64_t r = shift <= 0 ? v.m << -shift : shift_right_rne(v.m, shift);
  // A significand that carried to 2^(mbits+1), or a denormal that rounded up to 2^mbits,
  // lands on the next exponent by plain addition.
  const uint64_t code = (uint64_t(quantum + f.mbits - emin) << f.mbits) + r;
  if (code > max_code) return sign | overflow_code;
  return sign | code;
}

struct IntSpec {
  int bits;
  bool is_signed;
};

constexpr IntSpec int_spec(NumberFormat f) {
  switch (f) {
    case NumberFormat::I8: return {8, true};
    case NumberFormat::U8: return {8, false};
    case NumberFormat::I16: return {16, true};
    case NumberFormat::U16: return {16, false};
    case NumberFormat::I32: return {32, true};
    case NumberFormat::U32: return {32, false};
    case NumberFormat::I64: return {64, true};
    default: return {64, false};  // U64
  }
}

Value decode_int(const IntSpec& s, uint64_t bits) {
  if (s.bits < 64) bits &= (uint64_t{1} << s.bits) - 1;
  bool neg = false;
  if (s.is_signed && ((bits >> (s.bits - 1)) & 1)) {
    neg = true;
    bits = (~bits + 1) & (s.bits < 64 ? (uint64_t{1} << s.bits) - 1 : ~uint64_t{0});
    if (bits == 0) bits = uint64_t{1} << (s.bits - 1);  // cannot happen; keeps intent clear
  }
  if (bits == 0) return {Value::Zero, false, 0, 0, 0};
  return {Value::Finite, neg, bits, 0, 0};
}

// Round to an integer (half to even) and clamp to the destination range; NaN gives 0.
uint64_t encode_int(const IntSpec& s, const Value& v) {
  const uint64_t pos_max =
      s.is_signed ? (uint64_t{1} << (s.bits - 1)) - 1
                  : (s.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << s.bits) - 1);
  const uint64_t neg_max = s.is_signed ? uint64_t{1} << (s.bits - 1) : 0;  // magnitude
  const uint64_t width_mask = s.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << s.bits) - 1;
  uint64_t mag = 0;
  bool huge = false;
  switch (v.kind) {
    case Value::Zero:
    case Value::NaN: return 0;
    case Value::Inf: huge = true; break;
    case Value::Finite:
      if (v.e >= 0) {
        const int top = 63 - std::countl_zero(v.m);
        if (top + v.e > 63) huge = true;
        else mag = v.m << v.e;
      } else {
        mag = shift_right_rne(v.m, -int64_t{v.e});
      }
      break;
  }
  const uint64_t limit = v.neg ? neg_max : pos_max;
  if (huge || mag > limit) mag = limit;
  return (v.neg ? (~mag + 1) : mag) & width_mask;
}

Value decode_any(NumberFormat f, uint64_t bits) {
  return format_is_float(f) ? decode_float(float_spec(f), bits) : decode_int(int_spec(f), bits);
}

uint32_t f32_bits(float v) { return std::bit_cast<uint32_t>(v); }
float f32_from(uint64_t b) { return std::bit_cast<float>(uint32_t(b)); }

uint64_t narrow_f32(NumberFormat df, float v, Overflow o) {
  return encode_float(float_spec(df), decode_float(float_spec(NumberFormat::F32), f32_bits(v)), o);
}
float widen_to_f32(NumberFormat sf, uint64_t bits) {
  return f32_from(encode_float(float_spec(NumberFormat::F32), decode_float(float_spec(sf), bits),
                               Overflow::Ieee));
}

}  // namespace

size_t format_size(NumberFormat f) {
  switch (f) {
    case NumberFormat::E4M3:
    case NumberFormat::E5M2:
    case NumberFormat::I8:
    case NumberFormat::U8: return 1;
    case NumberFormat::F16:
    case NumberFormat::BF16:
    case NumberFormat::I16:
    case NumberFormat::U16: return 2;
    case NumberFormat::F32:
    case NumberFormat::I32:
    case NumberFormat::U32: return 4;
    case NumberFormat::F64:
    case NumberFormat::I64:
    case NumberFormat::U64: return 8;
  }
  return 0;
}

bool format_is_float(NumberFormat f) {
  switch (f) {
    case NumberFormat::F32:
    case NumberFormat::F16:
    case NumberFormat::BF16:
    case NumberFormat::E4M3:
    case NumberFormat::E5M2:
    case NumberFormat::F64: return true;
    default: return false;
  }
}

const char* format_name(NumberFormat f) {
  switch (f) {
    case NumberFormat::F32: return "f32";
    case NumberFormat::F16: return "f16";
    case NumberFormat::BF16: return "bf16";
    case NumberFormat::E4M3: return "e4m3";
    case NumberFormat::E5M2: return "e5m2";
    case NumberFormat::F64: return "f64";
    case NumberFormat::I8: return "i8";
    case NumberFormat::U8: return "u8";
    case NumberFormat::I16: return "i16";
    case NumberFormat::U16: return "u16";
    case NumberFormat::I32: return "i32";
    case NumberFormat::U32: return "u32";
    case NumberFormat::I64: return "i64";
    case NumberFormat::U64: return "u64";
  }
  return "?";
}

uint16_t f32_to_f16(float v) { return uint16_t(narrow_f32(NumberFormat::F16, v, Overflow::Ieee)); }
float f16_to_f32(uint16_t h) { return widen_to_f32(NumberFormat::F16, h); }
uint16_t f32_to_bf16(float v) { return uint16_t(narrow_f32(NumberFormat::BF16, v, Overflow::Ieee)); }
float bf16_to_f32(uint16_t b) { return widen_to_f32(NumberFormat::BF16, b); }
uint8_t f32_to_e4m3(float v, Overflow o) { return uint8_t(narrow_f32(NumberFormat::E4M3, v, o)); }
float e4m3_to_f32(uint8_t v) { return widen_to_f32(NumberFormat::E4M3, v); }
uint8_t f32_to_e5m2(float v, Overflow o) { return uint8_t(narrow_f32(NumberFormat::E5M2, v, o)); }
float e5m2_to_f32(uint8_t v) { return widen_to_f32(NumberFormat::E5M2, v); }

bool convert_scalar(NumberFormat sf, uint64_t src_bits, NumberFormat df, uint64_t* dst_bits,
                    Overflow o) {
  if (format_size(sf) == 0 || format_size(df) == 0) return false;
  const Value v = decode_any(sf, src_bits);
  *dst_bits = format_is_float(df) ? encode_float(float_spec(df), v, o) : encode_int(int_spec(df), v);
  return true;
}

}  // namespace coopvk::kernels
