// Cooperative-vector arithmetic of one invocation (SPV_NV_cooperative_vector): the
// matrix-vector multiply(-add) and the two training accumulations, on matrices in the
// layouts of coopvec_layout.h. Scalar code, one invocation per call: the JIT calls these
// once per active lane (jit/src/coopvec/lower_coopvec_matmul.cpp); lanes that share one
// matrix are batched into one matrix-matrix product by coopvec_batch.h instead.
//
// The descriptors are plain data the JIT writes into memory (runtime_symbols.h names the
// entry points): 4- and 8-byte fields only, in an order that leaves no padding, so the
// generated code and this header agree on the layout without sharing a compiler.
//
// Arithmetic (the SPIR-V text leaves float precision to the client API and Vulkan says
// nothing more, so this is the implementation's choice, stated once here):
//  - Input conversion (OpCooperativeVectorMatrixMul(Add)NV, 'InputInterpretation'):
//    convert_scalar() of number_formats.h, which implements that paragraph's rules
//    (int -> int saturates, float -> int rounds to nearest even and saturates, int -> float
//    rounds to nearest even); float -> float rounds to nearest even and, for the fp8
//    interpretations, saturates to the largest finite value ("preserves the value as
//    accurately as reasonably possible": the nearest finite value is closer than NaN or
//    infinity). Packed interpretations reinterpret the bytes of each 32-bit component,
//    lower-numbered values in lower bits.
//  - Float results: starting from the bias (converted to f32) or 0, every product and
//    partial sum in f32, as fmaf(a, x, acc) in order k = 0, 1, ... (the product of two f16 /
//    fp8 / bf16 values is exact in f32), then one rounding to the result format (RNE). So
//    the error against the exact result is at most K * 2^-24 * (sum |a_k x_k| + |bias|)
//    for the f32 sum, plus half an ulp of the result format.
//  - Integer results: exact products, summed modulo 2^32 ("performed at the precision of
//    the Result Type and are exact (with the usual wrapping rules)"), bias added the same
//    way. With `saturate` (the SaturatingAccumulation operand, which the SPIR-V text does
//    not forbid here) the exact sum including the bias is clamped to the result's range.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coopvk/kernels/coopvec_layout.h"
#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels {

// Fixed for one instruction (NumberFormat / MatrixLayout values as uint32_t).
struct CoopVecMatMulDesc {
  uint32_t input_format;   // Input's component type; integers signed iff MatrixBSignedComponents
  uint32_t input_interp;   // what Input converts to; I8 / U8 for the packed interpretations
  uint32_t input_packed;   // 1: Input's 32-bit components each hold 4 values (a bitcast)
  uint32_t matrix_format;  // MatrixInterpretation
  uint32_t bias_format;    // BiasInterpretation (when has_bias)
  uint32_t result_format;  // F16, F32, I32 (MatrixResultSignedComponents) or U32
  uint32_t m, k;           // output and (logical) input length
  uint32_t layout;         // MatrixLayout
  uint32_t transpose;      // 1: the stored matrix is K x M and used transposed
  uint32_t has_bias;
  uint32_t saturate;       // integer results: clamp instead of wrapping
};

// One invocation. Reads outside [lo, hi) of the matrix or bias read zero (robust buffer
// access); lo == hi == nullptr disables the check.
struct CoopVecMatMulArgs {
  const uint8_t* matrix;  // Matrix + MatrixOffset
  int64_t stride;         // MatrixStride, bytes between rows / columns (row- / column-major)
  const uint8_t* input;   // component 0 of Input
  int64_t input_stride;   // bytes from one component of Input to the next
  const uint8_t* bias;    // Bias + BiasOffset
  uint8_t* result;        // component 0 of the result
  int64_t result_stride;  // bytes from one result component to the next
  const uint8_t* matrix_lo;
  const uint8_t* matrix_hi;
  const uint8_t* bias_lo;
  const uint8_t* bias_hi;
};

// Why a multiply with `d` cannot run (unsupported format or combination, fp8 matrix in a
// non-optimal layout, transpose of a row- or column-major matrix, ...), or nullptr.
const char* coopvec_matmul_error(const CoopVecMatMulDesc& d);
// result = A * input (+ bias) as described above. `d` must pass coopvec_matmul_error().
void coopvec_matmul(const CoopVecMatMulDesc& d, const CoopVecMatMulArgs& a);

// OpCooperativeVectorOuterProductAccumulateNV: matrix[i][j] += a[i] * b[j] for the
// M x N matrix (M = length of a, N = length of b), each as a relaxed atomic add. The
// product and the sum are formed in f64 (the product of two f16 or f32 values is exact
// there, and so is the sum unless the exponents are ~29 apart) and rounded once to the
// element format (RNE): the error is half an ulp of the element, as a scalar add.
struct CoopVecOuterDesc {
  uint32_t vector_format;  // A's and B's component type: F16 or F32
  uint32_t matrix_format;  // MatrixInterpretation: F16 or F32
  uint32_t m, n;
  uint32_t layout;  // MatrixLayout
  uint32_t pad;
};
struct CoopVecOuterArgs {
  uint8_t* matrix;  // Pointer + Offset
  int64_t stride;   // MatrixStride (row- / column-major)
  const uint8_t* a;
  int64_t a_stride;
  const uint8_t* b;
  int64_t b_stride;
  const uint8_t* lo;  // robust access: elements outside [lo, hi) are not written
  const uint8_t* hi;
};
const char* coopvec_outer_error(const CoopVecOuterDesc& d);
void coopvec_outer_product_accumulate(const CoopVecOuterDesc& d, const CoopVecOuterArgs& a);

// OpCooperativeVectorReduceSumAccumulateNV: memory[i] += v[i] (relaxed atomic adds) for
// the `count` elements of format F16 or F32 after Pointer + Offset; each sum formed in
// f64 and rounded once to the format.
struct CoopVecReduceArgs {
  uint8_t* dst;
  const uint8_t* v;
  int64_t v_stride;
  const uint8_t* lo;
  const uint8_t* hi;
};
void coopvec_reduce_sum_accumulate(NumberFormat f, uint32_t count, const CoopVecReduceArgs& a);

// The byte offset of element (r, c) of a rows x cols matrix in `layout` (for row- and
// column-major, with `stride`); what every entry point above addresses with.
int64_t coopvec_element_offset(MatrixLayout layout, uint32_t r, uint32_t c, uint32_t cols, size_t elem_size,
                               int64_t stride);

}  // namespace coopvk::kernels
