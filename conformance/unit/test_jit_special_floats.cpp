// bfloat16 and float8 as plain shader types in the JIT (SPV_KHR_bfloat16, SPV_EXT_float8):
// conversions, loads and stores, and bfloat16 OpDot, against the scalar conversions of
// kernels/number_formats.h (tested exhaustively in unit_number_formats).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "coopvk/kernels/number_formats.h"
#include "jit_run.h"

using namespace coopvk;
using namespace coopvk::test;

namespace {

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
float bf16_value(float x) { return kernels::bf16_to_f32(kernels::f32_to_bf16(x)); }
// Same NaN-ness, otherwise the same value (a NaN's payload is not specified).
bool same(float got, float want) { return (std::isnan(got) && std::isnan(want)) || got == want; }

}  // namespace

TEST_CASE("bfloat16 and float8 conversions, stores and bfloat16 dot products") {
  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t n = 32;
  // Exact values, ties of each format, subnormals, the largest normals, overflow, NaN.
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.5f, 3.0f, 448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f,
                          1e6f, -1e6f, 0.1f, 1.0f / 3, 1.0f + 1.0f / 256, 1.0f + 3.0f / 256,
                          std::ldexp(1.0f, -9), std::ldexp(1.0f, -16), std::ldexp(1.0f, -20), 65504.0f,
                          3.4e38f, -7.75f, 2.5f, 17.0f, 19.0f, 240.0f, NAN, INFINITY, -INFINITY, 0.3f, 100.0f, -0.0625f};
  REQUIRE(x.size() == n);
  auto bx = bytes_of(x);
  std::vector<uint8_t> bf(n * 2), e4(n), e5(n), back(n * 6 * 4);
  Run r;
  r.buffers = {&bx, &bf, &e4, &e5, &back};
  r.subgroup_size = sg;
  run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, "special_floats"), r);
  using kernels::Overflow;
  for (uint32_t i = 0; i < n; ++i) {
    INFO("subgroup " << sg << " element " << i << " x = " << x[i]);
    const uint16_t want_bf = kernels::f32_to_bf16(x[i]);
    const uint8_t want_e4 = kernels::f32_to_e4m3(x[i], Overflow::Ieee);
    const uint8_t want_e5 = kernels::f32_to_e5m2(x[i], Overflow::Ieee);
    uint16_t got_bf;
    std::memcpy(&got_bf, &bf[2 * i], 2);
    if (std::isnan(x[i])) {
      CHECK(std::isnan(kernels::bf16_to_f32(got_bf)));
      CHECK(std::isnan(kernels::e4m3_to_f32(e4[i])));
      CHECK(std::isnan(kernels::e5m2_to_f32(e5[i])));
    } else {
      CHECK(got_bf == want_bf);
      CHECK(e4[i] == want_e4);
      CHECK(e5[i] == want_e5);
    }
    auto b = [&](int k) { return at<float>(back, 6 * i + k); };
    CHECK(same(b(0), kernels::bf16_to_f32(want_bf)));
    CHECK(same(b(1), kernels::e4m3_to_f32(want_e4)));
    CHECK(same(b(2), kernels::e5m2_to_f32(want_e5)));
    // The dot product: exact products of bf16 values, summed in order in f32, rounded once.
    float va[4] = {bf16_value(x[i]), bf16_value(x[i ^ 1u]), 1.5f, float(int(i) - 7)};
    float vb[4] = {bf16_value(x[(i + 3) % n]), bf16_value(x[i]), -0.25f, 3.0f};
    float sum = va[0] * vb[0];
    for (int k = 1; k < 4; ++k) sum += va[k] * vb[k];
    CHECK(same(b(3), bf16_value(sum)));
    // float8 to int truncates toward zero (NaN / infinity: undefined, not checked).
    float e4v = kernels::e4m3_to_f32(want_e4);
    if (std::isfinite(e4v)) CHECK(b(4) == std::trunc(e4v));
    CHECK(b(5) == bf16_value(float(int(i) * 1001)));
  }
}
