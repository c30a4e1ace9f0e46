// Cooperative-vector matrix-vector products batched over a subgroup's lanes: the work of
// OpCooperativeVectorMatrixMulNV / MatrixMulAddNV (SPV_NV_cooperative_vector) when every
// lane multiplies by the same matrix (uniform Matrix, MatrixOffset, layout, stride and bias).
//
// The lanes' input vectors, side by side, are the columns of a K x lanes matrix X, and the
// results the columns of an M x lanes matrix Y = A X + bias, so the product is one tile
// multiply-add (tile_mma.h) with A = the matrix (M x K), B = X and C = the bias broadcast
// across the lanes. That is why the vectors are laid out component-major ("structure of
// arrays"): component j of lane l at j * stride + l elements, the layout the JIT keeps
// cooperative vectors in (lowerer.h), and the one B and D of a tile multiply-add have.
//
// The semantics are coopvec_matmul()'s (coopvec_ops.h), bit for bit for every lane: the
// same input conversion, f32 accumulation from the bias in the order k = 0, 1, ... (the tile
// kernels' order; the f32 kernels' departures, tile_mma.h, do not arise: every product here
// is of values exact in f32 and one FMA), one rounding to the result; integers exact, wrapping
// or saturating.
#pragma once

#include <cstdint>

#include "coopvk/kernels/coopvec_ops.h"

namespace coopvk::kernels {

// coopvec_matmul(d, args of lane l) for lanes l = 0 .. lanes-1, where lane l's input and
// result are a.input and a.result advanced by l elements (of the input's and the result's
// component type; a.input_stride and a.result_stride are the bytes from one component to the
// next, as for one lane), and the matrix, stride, bias and robust bounds are common to all.
// d must pass coopvec_matmul_error(). With robust bounds that cut into the matrix or the
// bias, the lanes run one by one (coopvec_matmul() reads zero there).
//
// cache_token: nonzero promises that the matrix bytes stay the same for as long as calls pass
// this token (SPV_NV_cooperative_vector makes it so for one dispatch: the matrix is read "as if
// ... NonWritable and Restrict" and "must not be modified while a shader might be using
// them"), so the matrix brought to the kernel's layout (dense, widened to f32 for floats) is
// kept per thread and reused; 0 reads the matrix afresh. Thread-safe.
void coopvec_matmul_lanes(const CoopVecMatMulDesc& d, const CoopVecMatMulArgs& a, uint32_t lanes,
                          uint64_t cache_token = 0);

}  // namespace coopvk::kernels
