// Cooperative-vector matrix-vector products batched over a subgroup's lanes: the work of
// OpCooperativeVectorMatrixMulNV / MatrixMulAddNV (SPV_NV_cooperative_vector) when every lane
// multiplies by the same matrix (uniform Matrix, MatrixOffset, layout, stride and bias).
//
// The lanes' input vectors, side by side, are the columns of a K x lanes matrix X, and the
// results the columns of an M x lanes matrix Y = A X + bias, so the product is one tile
// multiply-add (tile_mma.h) with A = the matrix (M x K), B = X and C = the bias broadcast
// across the lanes. That is why the data are laid out component-major ("structure of
// arrays"): component j of lane l at index j * ld + l, the layout the JIT keeps cooperative
// vectors in, and the one B and D of a tile multiply-add already have.
//
// Semantics (the spec leaves order and internal precision to the implementation, Vulkan
// appendix "Precision and Operation of SPIR-V Instructions"; integer arithmetic is exact at
// the precision of the result, SPV_NV_cooperative_vector "OpCooperativeVectorMatrixMulAddNV"):
//  - x holds the input already converted to InputInterpretation (the arithmetic or bitcast
//    conversion the SPIR-V text defines is the caller's: it is per lane and elementwise).
//  - Floats: every element widens exactly to f32; each result starts from the bias (or 0) and
//    accumulates A(i, j) * x(j) for j = 0..K-1 by f32 fused multiply-adds (the tile kernels'
//    order and departures, tile_mma.h), then rounds once, to nearest even, to the result's
//    format.
//  - Integers: 8-bit matrix and input elements (signedness from their formats) into 32 bits,
//    wrapping modulo 2^32.
//  - The matrix is read raw in MatrixInterpretation (no conversion), at any layout of
//    coopvec_layout.h; with `transpose` it is stored K x M and used transposed (only the
//    optimal layouts allow that, SPV_NV_cooperative_vector).
#pragma once

#include <cstddef>
#include <cstdint>

#include "coopvk/kernels/coopvec_layout.h"
#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels {

struct CoopVecBatchDesc {
  NumberFormat input = NumberFormat::F32;   // InputInterpretation: the elements of x
  NumberFormat matrix = NumberFormat::F32;  // MatrixInterpretation
  NumberFormat bias = NumberFormat::F32;    // BiasInterpretation (only with has_bias)
  NumberFormat result = NumberFormat::F32;  // the result vector's components
  uint32_t m = 0, k = 0;                    // result and (logical) input components
  MatrixLayout layout = MatrixLayout::RowMajor;
  size_t stride = 0;  // bytes between rows / columns of the stored matrix (RowMajor / ColumnMajor)
  bool transpose = false;
  bool has_bias = false;
};

// Why `d` cannot be computed (an unsupported combination of formats, a zero size, a
// transposed row- or column-major matrix, a stride too small), or nullptr.
const char* coopvec_batch_error(const CoopVecBatchDesc& d);

// Bytes of the matrix the product reads, from its start (MatrixOffset applied): what a
// caller checks against the bound buffer before calling.
size_t coopvec_batch_matrix_bytes(const CoopVecBatchDesc& d);

// y(i, l) = sum_j A(i, j) * x(j, l) [+ bias(i)] for i < m, l < lanes; x(j, l) is element
// j * ldx + l of x (input format), y(i, l) element i * ldy + l of y (result format), bias(i)
// element i of bias (d.bias format; ignored without has_bias). ldx, ldy >= lanes. d must be
// valid (coopvec_batch_error() null). Thread-safe; uses per-thread scratch buffers.
//
// cache_token: nonzero promises that the matrix bytes at `matrix` stay the same for as long
// as calls pass this token (the SPIR-V text makes it so for one dispatch: the matrix is read
// "as if ... NonWritable and Restrict" and "must not be modified while a shader might be
// using them"), so the matrix brought to the kernel's layout (dense, widened) is kept per
// thread and reused; 0 reads the matrix afresh.
void coopvec_batch_matmul(const CoopVecBatchDesc& d, const void* matrix, const void* bias, const void* x,
                    size_t ldx, void* y, size_t ldy, uint32_t lanes, uint64_t cache_token = 0);

// The scalar reference of the same semantics (element by element, doubles for the float
// sums rounded to f32 step by step as the kernels do), for the tests.
void coopvec_batch_reference(const CoopVecBatchDesc& d, const void* matrix, const void* bias,
                              const void* x, size_t ldx, void* y, size_t ldy, uint32_t lanes);

}  // namespace coopvk::kernels
