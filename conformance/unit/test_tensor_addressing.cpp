// The run-time tensor loads and stores (jit/src/runtime/tensor_addressing.cpp) on random
// layouts, views, slices, clamp modes and bound ranges, against the addressing functions of
// SPV_NV_cooperative_matrix2 ("Tensor Layout and View") written out again here, element by
// element. Many of the cases are ones the runtime copies as whole strided rows (no view or
// a view over the layout's spans in any order, rows inside the tensor), so that path is
// held to the element-by-element result; the rest go element by element.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "runtime/tensor_addressing.h"

using namespace coopvk::jit;

namespace {

struct Case {
  uint32_t layout[kTlWords] = {};
  uint32_t view[kTvWords] = {};
  TensorAccess a{};
};

enum class Kind { Keep, Clamp, Read };

int64_t mod_sign_of_divisor(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// The spec's chain for element (row, col): what the element becomes and which tensor element.
Kind reference(const Case& k, bool store, uint32_t row, uint32_t col, uint64_t* element, uint32_t* block_coord = nullptr,
               uint32_t* coord_in_block = nullptr) {
  const uint32_t* t = k.layout;
  const uint32_t* v = k.view;
  const TensorAccess& a = k.a;
  uint64_t lin = uint64_t(row) * a.cols + col;  // matrixCoordToLinear
  if (a.view_dims) {
    const uint64_t ro = v[kTvClipRowOffset], rs = v[kTvClipRowSpan], co = v[kTvClipColOffset], cs = v[kTvClipColSpan];
    if (row < ro || row >= ro + rs || col < co || col >= co + cs) return Kind::Keep;
    lin = (row - ro) * std::min<uint64_t>(cs, a.cols) + (col - co);
    std::vector<uint64_t> dim(a.view_dims), stride(a.view_dims), c(a.view_dims);
    for (uint32_t d = 0; d < a.view_dims; ++d) dim[d] = a.view_has_dims ? v[kTvDim + d] : t[kTlSpan + d];
    for (int d = int(a.view_dims) - 1; d >= 0; --d) {  // linearToViewCoord
      const uint32_t p = a.permutation[d];
      if (dim[p] == 0) return Kind::Keep;
      c[p] = lin % dim[p];
      lin /= dim[p];
    }
    for (int d = int(a.view_dims) - 1; d >= 0; --d)
      stride[d] = a.view_has_dims ? v[kTvStride + d] : (d + 1 == int(a.view_dims) ? 1 : stride[d + 1] * dim[d + 1]);
    lin = 0;  // viewCoordToLinear
    for (uint32_t d = 0; d < a.view_dims; ++d) lin += c[d] * stride[d];
  }
  std::vector<int64_t> c(a.layout_dims);
  for (int d = int(a.layout_dims) - 1; d >= 0; --d) {  // linearToSpanCoord
    if (t[kTlSpan + d] == 0) return Kind::Keep;
    c[d] = int64_t(lin % t[kTlSpan + d]);
    lin /= t[kTlSpan + d];
  }
  uint64_t e = 0;
  for (uint32_t d = 0; d < a.layout_dims; ++d) {  // spanCoordToTensorCoord, tensorCoordToLinear
    int64_t x = c[d] + int32_t(t[kTlOffset + d]);
    const int64_t n = t[kTlDim + d];
    if (x < 0 || x >= n) {
      if (store || a.clamp_mode == 1) return store ? Kind::Keep : Kind::Clamp;
      if (a.clamp_mode == 2) x = x < 0 ? 0 : n - 1;
      if (a.clamp_mode == 3) x = mod_sign_of_divisor(x, n);
      if (a.clamp_mode == 4) {
        x = n == 1 ? 0 : mod_sign_of_divisor(x, 2 * n - 2);
        if (x >= n) x = 2 * n - 2 - x;
      }
    }
    e += uint64_t(x / int64_t(t[kTlBlock + d])) * t[kTlStride + d];
    if (block_coord) block_coord[d] = uint32_t(x / int64_t(t[kTlBlock + d]));
    if (coord_in_block) coord_in_block[d] = uint32_t(x % int64_t(t[kTlBlock + d]));
  }
  *element = e;
  return Kind::Read;
}

Case random_case(std::mt19937& rng) {
  auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  Case k;
  TensorAccess& a = k.a;
  a.layout_dims = pick(1, 4);
  a.clamp_mode = pick(1, 4);  // not Undefined: its out-of-bounds values are undefined
  a.element_size = std::vector<uint32_t>{1, 2, 4, 8, 3}[pick(0, 4)];
  a.rows = pick(1, 7);
  a.cols = pick(1, 9);
  a.first_row = pick(0, 1) ? 0 : pick(0, a.rows - 1);
  a.row_count = a.first_row == 0 && pick(0, 1) ? a.rows : pick(1, a.rows - a.first_row);
  const uint32_t L = a.layout_dims;
  uint64_t packed = 1;
  for (int d = int(L) - 1; d >= 0; --d) {
    k.layout[kTlDim + d] = pick(1, 12);
    k.layout[kTlBlock + d] = pick(0, 7) ? 1 : 2;
    k.layout[kTlStride + d] = pick(0, 3) ? uint32_t(packed) : pick(0, 40);
    packed *= k.layout[kTlDim + d];
    k.layout[kTlOffset + d] = uint32_t(int32_t(pick(0, 3) ? pick(0, 3) : pick(0, 6)) - (pick(0, 3) ? 0 : 4));
    k.layout[kTlSpan + d] = pick(1, 9);
  }
  // Mostly spans that hold the matrix's rows whole in the innermost dimension.
  if (pick(0, 2)) k.layout[kTlSpan + L - 1] = a.cols * pick(1, 2);
  k.layout[kTlClampValue] = rng();
  if (pick(0, 2)) {  // a view
    a.view_dims = pick(0, 3) ? L : pick(1, 5);
    a.view_has_dims = pick(0, 3) ? 0 : 1;
    if (!a.view_has_dims) a.view_dims = L;
    std::vector<uint32_t> perm(a.view_dims);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (uint32_t d = 0; d < a.view_dims; ++d) a.permutation[d] = perm[d];
    for (uint32_t d = 0; d < a.view_dims; ++d) {
      k.view[kTvDim + d] = pick(1, 9);
      k.view[kTvStride + d] = pick(0, 12);
    }
    if (!a.view_has_dims && pick(0, 1)) {  // innermost permuted span a multiple of the width
      k.layout[kTlSpan + perm[a.view_dims - 1]] = a.cols * pick(1, 2);
    }
    const bool full_clip = pick(0, 2) != 0;
    k.view[kTvClipRowOffset] = full_clip ? 0 : pick(0, 2);
    k.view[kTvClipRowSpan] = full_clip ? ~0u : pick(0, 8);
    k.view[kTvClipColOffset] = full_clip ? 0 : pick(0, 2);
    k.view[kTvClipColSpan] = full_clip ? ~0u : pick(0, 10);
  }
  return k;
}

uint64_t tensor_elements(const Case& k) {
  uint64_t most = 0;
  for (uint32_t d = 0; d < k.a.layout_dims; ++d)
    most += uint64_t((k.layout[kTlDim + d] + k.layout[kTlBlock + d] - 1) / k.layout[kTlBlock + d]) * k.layout[kTlStride + d];
  return most + 1;
}

}  // namespace

TEST_CASE("tensor loads give what the spec's addressing gives, element by element") {
  std::mt19937 rng(20261207);
  for (int iter = 0; iter < 20000; ++iter) {
    Case k = random_case(rng);
    const TensorAccess& a = k.a;
    const uint64_t esz = a.element_size, n = tensor_elements(k);
    std::vector<uint8_t> tensor(n * esz);
    for (auto& b : tensor) b = uint8_t(rng());
    // Bound range: the whole tensor, no bound, or a part of it (robust access reads zeros).
    k.a.lo = uint64_t(reinterpret_cast<uintptr_t>(tensor.data()));
    const uint32_t bound = rng() % 3;
    k.a.range = bound == 0 ? tensor.size() : bound == 1 ? ~uint64_t(0) : (rng() % (tensor.size() + 1));
    const uint64_t dense = uint64_t(a.row_count) * a.cols * esz;
    std::vector<uint8_t> got(dense, 0xA5), want(dense, 0xA5);
    for (uint32_t r = 0; r < a.row_count; ++r) {
      const uint32_t row = a.first_row + r;
      for (uint32_t col = 0; col < a.cols; ++col) {
        uint8_t* out = want.data() + (uint64_t(r) * a.cols + col) * esz;
        uint64_t e = 0;
        switch (reference(k, false, row, col, &e)) {
          case Kind::Keep: break;
          case Kind::Clamp:
            std::memset(out, 0, esz);
            std::memcpy(out, &k.layout[kTlClampValue], std::min<uint64_t>(esz, 4));
            break;
          case Kind::Read:
            if ((e + 1) * esz <= std::min<uint64_t>(k.a.range, tensor.size())) std::memcpy(out, tensor.data() + e * esz, esz);
            else std::memset(out, 0, esz);
            break;
        }
      }
    }
    coopvk_rt_tensor_load(got.data(), tensor.data(), k.layout, k.view, &k.a);
    INFO("case " << iter << ": " << a.layout_dims << " dims, view " << a.view_dims << " (dims " << a.view_has_dims
                 << "), element " << esz << " bytes, matrix " << a.rows << "x" << a.cols << " rows " << a.first_row
                 << "+" << a.row_count << ", clamp " << a.clamp_mode);
    REQUIRE(got == want);
  }
}

TEST_CASE("tensor stores write what the spec's addressing says and nothing else") {
  std::mt19937 rng(7122026);
  for (int iter = 0; iter < 20000; ++iter) {
    Case k = random_case(rng);
    const TensorAccess& a = k.a;
    const uint64_t esz = a.element_size, n = tensor_elements(k);
    std::vector<uint8_t> got(n * esz);
    for (auto& b : got) b = uint8_t(rng());
    std::vector<uint8_t> want = got;
    k.a.lo = uint64_t(reinterpret_cast<uintptr_t>(got.data()));
    k.a.range = rng() % 2 ? got.size() : (rng() % (got.size() + 1));
    std::vector<uint8_t> dense(uint64_t(a.row_count) * a.cols * esz);
    for (auto& b : dense) b = uint8_t(rng());
    for (uint32_t r = 0; r < a.row_count; ++r) {
      const uint32_t row = a.first_row + r;
      for (uint32_t col = 0; col < a.cols; ++col) {
        uint64_t e = 0;
        if (reference(k, true, row, col, &e) != Kind::Read || (e + 1) * esz > k.a.range) continue;
        std::memcpy(want.data() + e * esz, dense.data() + (uint64_t(r) * a.cols + col) * esz, esz);
      }
    }
    coopvk_rt_tensor_store(dense.data(), got.data(), k.layout, k.view, &k.a);
    INFO("case " << iter << ": " << a.layout_dims << " dims, view " << a.view_dims << " (dims " << a.view_has_dims
                 << "), element " << esz << " bytes, matrix " << a.rows << "x" << a.cols << " rows " << a.first_row
                 << "+" << a.row_count << ", clamp " << a.clamp_mode);
    REQUIRE(got == want);
  }
}

TEST_CASE("decode plans give each element's status, address and block coordinates as the spec's addressing") {
  std::mt19937 rng(1207);
  for (int iter = 0; iter < 20000; ++iter) {
    Case k = random_case(rng);
    // Decode functions read whole blocks: block sizes up to 32, as ggml's quantized types.
    for (uint32_t d = 0; d < k.a.layout_dims; ++d)
      if (rng() % 2) k.layout[kTlBlock + d] = std::vector<uint32_t>{1, 2, 4, 32}[rng() % 4];
    const TensorAccess& a = k.a;
    const uint32_t L = a.layout_dims;
    const uint64_t n = uint64_t(a.row_count) * a.cols;
    std::vector<uint32_t> status(n, 7), coords(2 * L * n, 7);
    std::vector<uint64_t> addresses(n, 7);
    static const uint8_t base[1] = {};
    k.a.range = ~uint64_t(0);
    coopvk_rt_tensor_plan(status.data(), addresses.data(), coords.data(), n, base, k.layout, k.view, &k.a);
    INFO("case " << iter << ": " << L << " dims, view " << a.view_dims << " (dims " << a.view_has_dims << "), matrix "
                 << a.rows << "x" << a.cols << " rows " << a.first_row << "+" << a.row_count << ", clamp " << a.clamp_mode);
    for (uint32_t r = 0; r < a.row_count; ++r)
      for (uint32_t col = 0; col < a.cols; ++col) {
        const uint64_t e = uint64_t(r) * a.cols + col;
        const uint32_t row = a.first_row + r;
        if (row >= a.rows) {
          REQUIRE(status[e] == 0);
          continue;
        }
        uint64_t el = 0;
        uint32_t bc[5] = {}, cib[5] = {};
        const Kind want = reference(k, false, row, col, &el, bc, cib);
        REQUIRE(status[e] == (want == Kind::Read ? 2u : want == Kind::Clamp ? 1u : 0u));
        if (want != Kind::Read) continue;
        REQUIRE(addresses[e] == uint64_t(reinterpret_cast<uintptr_t>(base)) + el * a.element_size);
        for (uint32_t d = 0; d < L; ++d) {
          REQUIRE(coords[d * n + e] == bc[d]);
          REQUIRE(coords[(L + d) * n + e] == cib[d]);
        }
      }
  }
}
