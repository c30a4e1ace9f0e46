// The seam between convert()'s planner (convert_dispatch.cpp) and the per-instruction-set
// translation units (convert_<arch>.cpp). Each arch converts between its formats and f32
// bit patterns in bulk; the planner chains the two halves through a small f32 buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels::detail {

struct ConvertKernels {
  // n elements of `sf` to f32 bit patterns. The exact widenings (F16, BF16, E4M3, E5M2,
  // I8..U16) plus F32 itself and I32 (rounded to nearest even). False: not handled.
  bool (*to_f32)(NumberFormat sf, const void* src, uint32_t* dst, size_t n);
  // n f32 bit patterns to `df` (F32, F16, BF16, E4M3, E5M2, I8..I32). False: not handled.
  bool (*from_f32)(NumberFormat df, const uint32_t* src, void* dst, size_t n, Overflow o);
};

// nullptr when the arch was not compiled into this build.
const ConvertKernels* convert_kernels_portable();
const ConvertKernels* convert_kernels_avx2();
const ConvertKernels* convert_kernels_avx512();

}  // namespace coopvk::kernels::detail
