// Number formats used by cooperative matrices and vectors, and conversions between them.
//
// Scalar conversions here are the reference semantics; the bulk `convert()` is the
// vectorized (xsimd, runtime-dispatched) version and must match them bit for bit.
// Rounding is round-to-nearest-even everywhere a float is narrowed.
//
// Float rules (every float destination):
//  - Round to nearest, ties to even; denormals are produced and consumed exactly (never
//    flushed), independent of the thread's MXCSR FTZ/DAZ bits.
//  - Overflow is decided after rounding with an unbounded exponent, as IEEE 754 does:
//    E4M3 rounds 464 to 448 (tie to even) and 465 to NaN; E5M2 rounds 61440 to +inf.
//  - NaN stays NaN and is always quiet: the quiet bit is set and the payload keeps its
//    top bits (narrowing drops low payload bits, widening appends zeros), the sign is
//    kept. E4M3 has one NaN per sign (S.1111.111), so every NaN becomes that.
//  - Overflow::Saturate maps finite overflow *and infinities* to the largest finite value
//    of the same sign, but leaves NaN a NaN: SPV_EXT_float8, "Conversion Instructions"
//    ("out-of-range values and infinity are converted to largest representable finite
//    value with a matching sign if ... SaturatedToLargestFloat8NormalConversionEXT");
//    NaN is neither out of range nor infinite, so it is not saturated.
//
// Integer rules (any conversion with an integer source or destination):
//  These are the arithmetic conversions of cooperative vectors, SPV_NV_cooperative_vector,
//  OpCooperativeVectorMatrixMul(Add)NV, 'InputInterpretation': "Integer to integer
//  conversion saturates. ... Float to integer conversion is round-to-nearest-even and
//  saturating. Integer to float conversion is round-to-nearest-even." That is where a bulk
//  conversion to int8/uint8 is needed; the shader opcodes OpConvertFToS/U (truncate,
//  undefined on overflow) and OpSConvert/OpUConvert (wrap) are lowered by the JIT itself
//  and do not use this function.
//  - float -> int: round half to even, then clamp to [min, max] of the destination;
//    +-inf saturate; NaN -> 0 (the spec leaves NaN open; 0 is what saturating
//    conversions such as LLVM's fptosi.sat produce).
//  - int -> int: clamp to the destination's range (U8 <- -5 gives 0, I8 <- 300 gives 127).
//  - int -> float: round to nearest even, with the float overflow rule above (an integer
//    beyond 65519 is +inf in F16, 448 saturates or NaNs in E4M3).
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

// One element of any supported pair, by bit pattern (integers in two's complement in the
// low format_size() bytes, sign- or zero-extension above ignored on input and zero on
// output). This is the reference convert() is checked against. Returns false for a pair
// convert() does not support.
bool convert_scalar(NumberFormat sf, uint64_t src_bits, NumberFormat df, uint64_t* dst_bits,
                    Overflow o = Overflow::Ieee);

// Converts n elements from `src` (format sf) to `dst` (format df); src and dst must not
// overlap. Float -> float narrows with round-to-nearest-even and the given overflow rule.
// Supported: every pair of formats above (floats, integers, mixed, same-format copies).
// Returns false (and writes nothing) for a pair it does not support.
bool convert(NumberFormat sf, const void* src, NumberFormat df, void* dst, size_t n,
             Overflow o = Overflow::Ieee);

}  // namespace coopvk::kernels
