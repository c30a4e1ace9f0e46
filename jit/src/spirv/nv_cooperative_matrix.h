// SPV_NV_cooperative_matrix (the legacy VK_NV_cooperative_matrix) on the KHR machinery.
//
// The NV instructions are the KHR ones with their operands in another order or form
// (SPV_NV_cooperative_matrix, "Memory Instructions", "Arithmetic Instructions"):
//  - OpCooperativeMatrixLoadNV  (Pointer, Stride, ColumnMajor, [Memory Access]) is
//    OpCooperativeMatrixLoadKHR (Pointer, Layout, Stride, [Memory Access]) with the boolean
//    ColumnMajor constant as the layout: false is RowMajorKHR (0), true ColumnMajorKHR (1).
//    Stride is in elements of the pointee type in both.
//  - OpCooperativeMatrixStoreNV likewise, (Pointer, Object, Stride, ColumnMajor, ...).
//  - OpCooperativeMatrixMulAddNV (A, B, C) takes the signedness of integer operands from
//    their component types' Signedness; the KHR form takes it from its Cooperative Matrix
//    Operands, which this pass writes from those types. NV has no saturating form.
//  - OpCooperativeMatrixLengthNV is OpCooperativeMatrixLengthKHR.
// OpTypeCooperativeMatrixNV stays as it is: it has no Use, and the lowering gives it a use
// that any operand position accepts (lower_types.cpp), since a matrix value's rep does not
// depend on its use (lower_coopmat.cpp).
#pragma once

#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

// Rewrites every NV cooperative-matrix instruction of `m` into its KHR form, in place.
// Returns the number rewritten. Malformed instructions (too few operands) are left for
// the lowering to reject.
uint32_t rewrite_nv_cooperative_matrix(Module& m);

}  // namespace coopvk::jit
