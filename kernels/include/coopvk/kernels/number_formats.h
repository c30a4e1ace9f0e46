// Number formats used by cooperative matrices and vectors, and conversions between them.
//
// Scalar conversions here are the reference semantics; the bulk `convert()` is the
// vectorized (xsimd, runtime-dispatched) version and must match them bit for bit.
// Rounding is round-to-nearest-even everywhere a float is narrowed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace coopvk::kernels {

enum class NumberFormat : uint8_t {
  F32,
  F16,
  BF16,
  E4M3,  // fp8, 4 exponent bits, 3 mantissa bits; no infinities (SPV_EXT_float8)
  E5M2,  // fp8, 5 exponent bits, 2 mantissa bits; IEEE-like with infinities
  F64,
  I8,
  U8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
};

// Size of one element in bytes.
size_t format_size(NumberFormat f);
bool format_is_float(NumberFormat f);
const char* format_name(NumberFormat f);

// How a float that is too large for the destination narrows (SPV_EXT_float8:
// SaturatedToLargestFloat8NormalConversionEXT). Ignored for integer destinations, whose
// rule is fixed by the conversion (see convert()).
enum class Overflow : uint8_t {
  Ieee,      // to infinity where the format has one, else to NaN (E4M3)
  Saturate,  // clamp to the largest finite value of the destination's sign
};

// Scalar references (the behaviour the vector code must reproduce exactly).
uint16_t f32_to_f16(float v);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float v);
float bf16_to_f32(uint16_t b);
uint8_t f32_to_e4m3(float v, Overflow o);
float e4m3_to_f32(uint8_t v);
uint8_t f32_to_e5m2(float v, Overflow o);
float e5m2_to_f32(uint8_t v);

// Converts n elements from `src` (format sf) to `dst` (format df); src and dst must not
// overlap. Float -> float narrows with round-to-nearest-even and the given overflow rule.
// Returns false (and writes nothing) for a pair it does not support.
bool convert(NumberFormat sf, const void* src, NumberFormat df, void* dst, size_t n,
             Overflow o = Overflow::Ieee);

}  // namespace coopvk::kernels
