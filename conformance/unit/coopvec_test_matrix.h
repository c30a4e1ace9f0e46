// Test matrices for cooperative-vector multiplies: a logical M x K matrix A of exact
// values, stored (transposed: as K x M) in any of the four layouts through the kernels'
// own layout conversion (coopvec_layout.h), which the layout tests check on their own.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <vector>

#include "coopvk/kernels/coopvec_layout.h"
#include "matrix_reference.h"

namespace coopvk::test {

inline size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

struct StoredMatrix {
  std::vector<uint8_t> bytes;
  size_t stride = 0;  // MatrixStride for row- / column-major
};

// a[m * K + k] = A(m, k); the stored matrix is A (rows M) or A^T (rows K) in `layout`,
// elements of format `f`. Row- and column-major rows are padded by 16 bytes past the
// 16-byte multiple, as in a bigger matrix.
inline StoredMatrix store_matrix(const std::vector<double>& a, uint32_t M, uint32_t K, kernels::NumberFormat f,
                                 kernels::MatrixLayout layout, bool transpose) {
  using kernels::MatrixLayout;
  using kernels::NumberFormat;
  const uint32_t rows = transpose ? K : M, cols = transpose ? M : K;
  // The source: dense row-major, in f itself for integers, in f32 for floats (the
  // conversion narrows to fp8 / f16 by RNE; the test values are exact in every format).
  const NumberFormat sf = kernels::format_is_float(f) ? NumberFormat::F32 : f;
  const size_t ssz = kernels::format_size(sf), esz = kernels::format_size(f);
  std::vector<uint8_t> src(size_t(rows) * cols * ssz);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) put(src, size_t(r) * cols + c, sf, transpose ? a[size_t(c) * K + r] : a[size_t(r) * K + c]);
  kernels::MatrixDesc sd{rows, cols, sf, MatrixLayout::RowMajor, size_t(cols) * ssz};
  StoredMatrix out;
  if (layout == MatrixLayout::RowMajor) out.stride = round_up(size_t(cols) * esz, 16) + 16;
  if (layout == MatrixLayout::ColumnMajor) out.stride = round_up(size_t(rows) * esz, 16) + 16;
  kernels::MatrixDesc dd{rows, cols, f, layout, out.stride};
  size_t size = 0;
  REQUIRE(kernels::convert_matrix(sd, src.data(), src.size(), dd, nullptr, &size) == kernels::ConvertStatus::Success);
  out.bytes.assign(round_up(size, 64), 0);
  const char* why = nullptr;
  REQUIRE(kernels::convert_matrix(sd, src.data(), src.size(), dd, out.bytes.data(), &size, &why) ==
          kernels::ConvertStatus::Success);
  return out;
}

}  // namespace coopvk::test
