// The element-wise operations test of cooperative matrices (shaders/coopmat/ops_body.glsl):
// its inputs and the C++ reference its outputs are checked against, shared by the JIT
// test (unit_jit_coopmat) and the one through the loader (e2e_cooperative_matrix).
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace coopvk::test {

// `tiles` 16x16 tiles of x (any sign) and y (1..9, so x / y is defined), the output
// buffers the shader writes (8 results per tile, then one length per invocation).
template <typename T>
struct MatrixOpsCase {
  uint32_t tiles, invocations;
  std::vector<T> x, y;
  std::vector<uint8_t> bx, by, out, len;

  MatrixOpsCase(uint32_t tile_count, uint32_t invocation_count, uint32_t seed)
      : tiles(tile_count), invocations(invocation_count), x(tile_count * 256), y(tile_count * 256) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dx(-20, 20), dy(1, 9);
    for (auto& v : x) v = T(dx(rng));
    for (auto& v : y) v = T(dy(rng));
    bx.resize(x.size() * sizeof(T));
    by.resize(y.size() * sizeof(T));
    std::memcpy(bx.data(), x.data(), bx.size());
    std::memcpy(by.data(), y.data(), by.size());
    out.assign(tile_count * 256 * 8 * sizeof(T), 0);
    len.assign(invocation_count * 4, 0);
  }

  // The first wrong output, described, or "" when all are right. b is y transposed (a
  // column-major load); result 7 is stored column-major.
  std::string first_error(uint32_t subgroup_size) const {
    for (uint32_t t = 0; t < tiles; ++t)
      for (uint32_t i = 0; i < 16; ++i)
        for (uint32_t j = 0; j < 16; ++j) {
          T a = x[t * 256 + i * 16 + j], b = y[t * 256 + j * 16 + i];
          T want[8] = {T(a + b), T(a - b), T(a * b), T(-a), T(a / b), T(a * T(3)), T(a * T(2) + T(1)), T(T(2) + T(5) + a)};
          for (int k = 0; k < 8; ++k) {
            size_t at = t * 256 * 8 + k * 256 + (k == 7 ? j * 16 + i : i * 16 + j);
            T got;
            std::memcpy(&got, out.data() + at * sizeof(T), sizeof(T));
            if (got != want[k])
              return "tile " + std::to_string(t) + " (" + std::to_string(i) + ", " + std::to_string(j) + ") result " +
                     std::to_string(k) + ": " + std::to_string(got) + " != " + std::to_string(want[k]);
          }
        }
    // OpCooperativeMatrixLengthKHR: each invocation's share of the 256 elements.
    for (uint32_t inv = 0; inv < invocations; ++inv) {
      uint32_t got;
      std::memcpy(&got, len.data() + inv * 4, 4);
      if (got != (256 + subgroup_size - 1) / subgroup_size)
        return "length of invocation " + std::to_string(inv) + ": " + std::to_string(got);
    }
    return "";
  }
};

}  // namespace coopvk::test
