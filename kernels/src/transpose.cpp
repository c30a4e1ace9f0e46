// Small transposes (transpose.h), in blocks that keep both sides' lines in L1.
#include "coopvk/kernels/transpose.h"

#include <algorithm>
#include <cstring>

namespace coopvk::kernels {

namespace {

template <typename T>
void transpose_t(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds, uint32_t rows, uint32_t cols) {
  constexpr uint32_t kBlock = 16;
  for (uint32_t c0 = 0; c0 < cols; c0 += kBlock) {
    const uint32_t c1 = std::min(cols, c0 + kBlock);
    for (uint32_t r0 = 0; r0 < rows; r0 += kBlock) {
      const uint32_t r1 = std::min(rows, r0 + kBlock);
      for (uint32_t c = c0; c < c1; ++c) {
        uint8_t* d = dst + int64_t(c) * ds;
        for (uint32_t r = r0; r < r1; ++r) {
          T v;
          std::memcpy(&v, src + int64_t(r) * ss + int64_t(c) * int64_t(sizeof(T)), sizeof(T));
          std::memcpy(d + int64_t(r) * int64_t(sizeof(T)), &v, sizeof(T));
        }
      }
    }
  }
}

}  // namespace

void transpose_elements(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, uint32_t rows,
                        uint32_t cols, uint32_t esz) {
  auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  switch (esz) {
    case 1: transpose_t<uint8_t>(s, src_stride, d, dst_stride, rows, cols); break;
    case 2: transpose_t<uint16_t>(s, src_stride, d, dst_stride, rows, cols); break;
    case 4: transpose_t<uint32_t>(s, src_stride, d, dst_stride, rows, cols); break;
    case 8: transpose_t<uint64_t>(s, src_stride, d, dst_stride, rows, cols); break;
    default: break;  // no other element size exists (the JIT asks for these only)
  }
}

}  // namespace coopvk::kernels
