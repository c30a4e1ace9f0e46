// The width the compiler picks when the application leaves it open
// (jit/src/width/subgroup_width.h): a register-blocked GEMM that cannot observe its subgroup
// runs at the host's natural width, the same GEMM with a subgroup operation at the reported
// one, a shader whose loops carry little at the reported one; and all give exact results.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "coopvk/jit/compiler.h"
#include "jit_run.h"
#include "width/subgroup_width.h"

using namespace coopvk::jit;
using namespace coopvk::test;

namespace {

// C = A * B for a grid of 2x2 workgroups (128x128), K = 24, checked exactly.
uint32_t run_register_blocked(const std::string& shader, bool serialized) {
  const uint32_t M = 128, N = 128, K = 24;
  std::vector<float> a(M * K), b(K * N), c(M * N, -1.0f);
  for (uint32_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 13 % 9) - 4);
  for (uint32_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 7 % 11) - 5);
  std::vector<uint8_t> ab = bytes_of(a), bb = bytes_of(b), cb = bytes_of(c);
  Run r;
  r.buffers = {&ab, &bb, &cb};
  r.push = bytes_of(std::vector<uint32_t>{K});
  r.groups[0] = N / 64;
  r.groups[1] = M / 64;
  r.serialized = serialized;
  CompiledShader s = run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, shader), r);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      float want = 0.0f;
      for (uint32_t k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
      INFO(shader << " at width " << s.subgroup_size << ", C[" << i << "][" << j << "]");
      REQUIRE(at<float>(cb, i * N + j) == want);
    }
  return s.subgroup_size;
}

}  // namespace

TEST_CASE("a register-blocked GEMM that cannot see its subgroup runs at the host's natural width") {
  REQUIRE_FALSE(subgroup_size_from_environment());  // COOPVK_SUBGROUP_SIZE pins every width
  const bool serialized = GENERATE(false, true);
  const uint32_t reported = default_subgroup_size(), natural = natural_subgroup_width();
  INFO("reported width " << reported << ", natural " << natural);
  // 16 accumulators of 32-bit lanes: at a width of two registers per value they take 32.
  const uint32_t want = reported > natural ? natural : reported;
  CHECK(run_register_blocked("register_blocked", serialized) == want);
  // A subgroup operation makes the width observable: it stays the reported one.
  CHECK(run_register_blocked("register_blocked_subgroup", serialized) == reported);
}

TEST_CASE("a shader whose loops carry little keeps the reported width") {
  const uint32_t n = 1000;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i), y[i] = float(2 * i);
  std::vector<uint8_t> xb = bytes_of(x), yb = bytes_of(y);
  Run r;
  r.buffers = {&xb, &yb};
  struct { float a; uint32_t n; } push{3.0f, n};
  r.push.resize(sizeof push);
  std::memcpy(r.push.data(), &push, sizeof push);
  r.groups[0] = (n + 63) / 64;
  CompiledShader s = run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, "saxpy"), r);
  CHECK(s.subgroup_size == default_subgroup_size());
  for (uint32_t i = 0; i < n; ++i) {
    INFO("y[" << i << "]");
    REQUIRE(at<float>(yb, i) == 3.0f * float(i) + float(2 * i));
  }
}

TEST_CASE("what loops carry is counted in registers of the host's width") {
  // Narrower only from a width wider than the natural one, and only past half the file.
  const uint32_t natural = natural_subgroup_width();
  CHECK(narrower_subgroup_width(natural, 1000) == 0);
  CHECK(narrower_subgroup_width(natural * 2, 4) == 0);
  CHECK(narrower_subgroup_width(natural * 2, 32) == natural);
  // What spills at both widths stays wide: each spilled register then serves more lanes.
  CHECK(narrower_subgroup_width(natural * 2, 128) == 0);
}
