// Transposes of small matrices of 1-, 2-, 4- or 8-byte elements: what moves the lanes'
// cooperative vectors between memory (one vector after another) and the JIT's buffers
// (one component of every lane after another).
#pragma once

#include <cstdint>

namespace coopvk::kernels {

// dst[c][r] = src[r][c] for r < rows, c < cols; row strides in bytes (any sign, any
// alignment; src rows may overlap, dst rows must not). esz must be 1, 2, 4 or 8.
void transpose_elements(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, uint32_t rows,
                        uint32_t cols, uint32_t esz);

}  // namespace coopvk::kernels
