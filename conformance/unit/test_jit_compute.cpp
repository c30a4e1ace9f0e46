// The JIT end to end without Vulkan: SPIR-V from glslang -> reader -> lowering -> ORC
// -> WorkgroupRunner, checked against scalar C++ references at several subgroup sizes.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "coopvk/jit/compiler.h"
#include "coopvk/jit/spirv_reader.h"
#include "coopvk/jit/workgroup_runner.h"
#include "jit_run.h"
#include "shader_references.h"

using namespace coopvk::jit;
using namespace coopvk::test;

namespace {
CompiledShader run_shader(const std::string& name, Run& r) {
  return run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, name), r);
}
}  // namespace


TEST_CASE("saxpy over a partial last workgroup matches the C++ loop") {
  uint32_t sg = GENERATE(0u, 4u, 8u, 16u, 32u, 64u);
  const uint32_t n = 1000;  // not a multiple of 64: the tail must stay untouched
  std::vector<float> x(1024), y(1024);
  for (uint32_t i = 0; i < 1024; ++i) { x[i] = float(i) * 0.5f; y[i] = float(i % 7) - 3.0f; }
  auto bx = bytes_of(x), by = bytes_of(y);
  Run r;
  r.buffers = {&bx, &by};
  float a = 2.5f;
  r.push.resize(8);
  std::memcpy(r.push.data(), &a, 4);
  std::memcpy(r.push.data() + 4, &n, 4);
  r.groups[0] = 16;
  r.subgroup_size = sg;
  run_shader("saxpy", r);
  for (uint32_t i = 0; i < 1024; ++i) {
    float expect = i < n ? a * x[i] + y[i] : y[i];
    REQUIRE(at<float>(by, i) == expect);
  }
}

TEST_CASE("divergent loops, break, continue, switch and calls") {
  uint32_t sg = GENERATE(0u, 8u, 32u);
  const uint32_t n = 256;
  std::vector<uint8_t> out(n * 2 * 4, 0xEE), out2(n * 4, 0xEE);
  Run r;
  r.buffers = {&out, &out2};
  r.groups[0] = n / 32;
  r.subgroup_size = sg;
  run_shader("control_flow", r);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t s = collatz_steps(i);
    INFO("invocation " << i);
    REQUIRE(at<uint32_t>(out, i) == s);
    REQUIRE(at<uint32_t>(out2, i) == collatz_kind(s));
  }
}

TEST_CASE("uniform and divergent control flow nested in each other") {
  uint32_t sg = GENERATE(4u, 8u, 16u, 32u, 64u);
  int32_t flag = GENERATE(0, 1);
  const uint32_t groups = 3;
  const int32_t n = 7;
  std::vector<uint8_t> out(groups * 64 * 5 * 4, 0xEE);
  Run r;
  r.buffers = {&out};
  r.groups[0] = groups;
  r.subgroup_size = sg;
  r.push = bytes_of(std::vector<int32_t>{n, flag});
  CompiledShader meta = run_shader("mixed_control_flow", r);
  CHECK(meta.uses_workgroup_barrier);
  for (uint32_t g = 0; g < groups; ++g)
    for (int32_t l = 0; l < 64; ++l) {
      MixedControlFlowExpected e = mixed_control_flow_expected(l, n, flag);
      for (int k = 0; k < 5; ++k) {
        INFO("subgroup size " << sg << ", group " << g << ", invocation " << l << ", output " << k);
        REQUIRE(at<int32_t>(out, g * 320 + 64 * k + l) == e.out[k]);
      }
    }
}

TEST_CASE("a private array after a uniform early return (aligned slots)") {
  uint32_t sg = GENERATE(8u, 16u);
  const uint32_t rows = 3, groups = 4;  // the last workgroup returns at once
  std::vector<float> x(rows * 4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 1000) * 0.25f;
  auto bx = bytes_of(x);
  std::vector<uint8_t> y(groups * 4096 * 4, 0);
  Run r;
  r.buffers = {&bx, &y};
  r.groups[0] = groups;
  r.subgroup_size = sg;
  r.push = bytes_of(std::vector<uint32_t>{rows});
  run_shader("rep_array_after_return", r);
  for (uint32_t i = 0; i < rows * 4096; ++i) {
    uint32_t k = (i % 4096) / 256;
    INFO("element " << i);
    REQUIRE(at<float>(y, i) == x[i] * 2.0f + float(k));
  }
  for (uint32_t i = rows * 4096; i < groups * 4096; ++i) REQUIRE(at<float>(y, i) == 0.0f);
}

TEST_CASE("constant tables indexed per invocation and per workgroup") {
  uint32_t sg = GENERATE(8u, 16u, 32u);
  const uint32_t groups = 4, n = 64 * groups;
  static const uint32_t grid[16][2] = {{1, 2}, {3, 5}, {8, 13}, {21, 34}, {55, 89}, {144, 233}, {377, 610},
                                       {987, 1597}, {2584, 4181}, {6765, 10946}, {17711, 28657}, {46368, 75025},
                                       {0xFFFFFFFFu, 7}, {9, 0x80000000u}, {11, 12}, {13, 14}};
  struct S {
    uint32_t a;
    float b;
    uint32_t c[2];
  };
  static const S structs[3] = {{1, 0.5f, {7, 8}}, {65535, 2.75f, {9, 10}}, {3, 4.25f, {11, 12}}};
  std::vector<uint32_t> idx(n);
  for (uint32_t i = 0; i < n; ++i) idx[i] = i * 2654435761u >> 7;
  auto bi = bytes_of(idx);
  std::vector<uint8_t> out(n * 8, 0);
  Run r;
  r.buffers = {&bi, &out};
  r.groups[0] = groups;
  r.subgroup_size = sg;
  run_shader("const_table", r);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t* g = grid[idx[i] & 15u];
    const S& s = structs[(i / 64) % 3];
    const S& t = structs[idx[i] % 3];
    INFO("invocation " << i);
    REQUIRE(at<uint32_t>(out, 2 * i) == g[0] + s.a + uint32_t(s.b * 4.0f) + t.c[0]);
    REQUIRE(at<uint32_t>(out, 2 * i + 1) == g[1] + s.c[1] + t.a);
  }
}

TEST_CASE("shared-memory reduction with barriers") {
  uint32_t sg = GENERATE(0u, 8u, 16u, 64u);
  const uint32_t groups = 8;
  std::vector<uint32_t> v(128 * groups);
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint32_t(i * 2654435761u >> 12);
  auto bv = bytes_of(v);
  std::vector<uint8_t> sums(groups * 4, 0);
  Run r;
  r.buffers = {&bv, &sums};
  r.groups[0] = groups;
  r.subgroup_size = sg;
  CompiledShader meta = run_shader("shared_reduce", r);
  CHECK(meta.uses_workgroup_barrier);
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t expect = 0;
    for (uint32_t i = 0; i < 128; ++i) expect += v[g * 128 + i];
    REQUIRE(at<uint32_t>(sums, g) == expect);
  }
}

TEST_CASE("subgroup arithmetic, ballot, broadcast and shuffle") {
  uint32_t sg = GENERATE(4u, 8u, 16u, 32u, 64u);
  std::vector<uint8_t> out(9 * 64 * 4, 0);
  Run r;
  r.buffers = {&out};
  r.subgroup_size = sg;
  run_shader("subgroup_ops", r);
  auto field = [&](int f, uint32_t l) { return at<uint32_t>(out, f * 64 + l); };
  INFO("subgroup size " << sg);
  CHECK(first_subgroup_ops_mismatch(sg, field) == -1);
}

TEST_CASE("atomics under contention across workgroups") {
  const uint32_t groups = 32, n = groups * 64;
  std::vector<uint8_t> counters(12, 0), got(n * 4, 0xFF);
  Run r;
  r.buffers = {&counters, &got};
  r.groups[0] = groups;
  run_shader("atomics", r);
  CHECK(at<uint32_t>(counters, 0) == n * (n - 1) / 2);
  CHECK(at<uint32_t>(counters, 1) == n);
  CHECK(at<uint32_t>(counters, 2) == n - 1);
  std::vector<uint32_t> tickets;
  for (uint32_t i = 0; i < n; ++i) tickets.push_back(at<uint32_t>(got, i));
  std::sort(tickets.begin(), tickets.end());
  for (uint32_t i = 0; i < n; ++i) REQUIRE(tickets[i] == i);  // each ticket exactly once
}

TEST_CASE("8/16-bit storage, float16 and int64 arithmetic, specialization constants") {
  uint32_t sg = GENERATE(0u, 8u);
  const uint32_t local = 48, groups = 4, n = local * groups;  // 48: partial subgroups
  std::vector<int8_t> a8(n);
  std::vector<uint16_t> h(n);
  for (uint32_t i = 0; i < n; ++i) {
    a8[i] = int8_t(int(i) - 100);
    h[i] = 0;  // filled below with exactly representable quarters
  }
  // Quarters k/4 (k < 256) and k/2 + 1 are exact in fp16, so the expected result is
  // exact whatever the rounding; encoded here by rebiasing an exact float.
  auto f32_to_f16_exact = [](float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (f == 0.0f) return uint16_t(0);
    uint32_t e = (bits >> 23) & 255;
    return uint16_t(((bits >> 16) & 0x8000) | ((e - 127 + 15) << 10) | ((bits >> 13) & 1023));
  };
  for (uint32_t i = 0; i < n; ++i) h[i] = f32_to_f16_exact(float(i % 256) / 4.0f);
  auto b8 = bytes_of(a8), b16 = bytes_of(h);
  std::vector<uint8_t> o32(n * 4), o16(n * 2), o64(n * 8), o8(n);
  Run r;
  r.buffers = {&b8, &b16, &o32, &o16, &o64, &o8};
  r.groups[0] = groups;
  r.subgroup_size = sg;
  int32_t scale = -3;
  std::vector<uint8_t> ls(4), sc(4);
  std::memcpy(ls.data(), &local, 4);
  std::memcpy(sc.data(), &scale, 4);
  r.spec = {{0, ls}, {1, sc}};
  CompiledShader meta = run_shader("types_storage", r);
  CHECK(meta.local_size[0] == local);
  auto f16_to_f32 = [](uint16_t v) {
    if ((v & 0x7fff) == 0) return 0.0f;
    // Normal halves only in this test: rebias the exponent.
    uint32_t sign = uint32_t(v >> 15) << 31, e = (v >> 10) & 31, m = v & 1023;
    uint32_t bits = sign | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  for (uint32_t i = 0; i < n; ++i) {
    INFO("invocation " << i);
    REQUIRE(at<int32_t>(o32, i) == int32_t(a8[i]) * scale);
    float expect = f16_to_f32(h[i]) * 2.0f + 1.0f;
    REQUIRE(f16_to_f32(at<uint16_t>(o16, i)) == expect);  // exact: results are representable
    REQUIRE(at<uint64_t>(o64, i) == uint64_t(i) * 0x100000001ull + (1ull << 40));
    REQUIRE(at<uint8_t>(o8, i) == uint8_t(i * 7));
  }
}

TEST_CASE("buffer device addresses and integer dot products") {
  const uint32_t n = 64;
  std::vector<uint32_t> src(2 * n);
  for (uint32_t i = 0; i < 2 * n; ++i) src[i] = i * 0x9E3779B9u;
  src[5] = 0x7F7F7F7Fu;  // lane 5: 4 * 127 * 127 + near-INT_MAX accumulator saturates
  src[5 + 64] = 0x7F7F7F7Fu;
  std::vector<uint32_t> dst(3 * n, 0);
  Run r;
  r.push.resize(16);
  uint64_t ps = reinterpret_cast<uint64_t>(src.data()), pd = reinterpret_cast<uint64_t>(dst.data());
  std::memcpy(r.push.data(), &ps, 8);
  std::memcpy(r.push.data() + 8, &pd, 8);
  r.groups[0] = n / 32;
  run_shader("dot_bda", r);
  for (uint32_t i = 0; i < n; ++i) {
    DotExpected e = dot_expected(src[i], src[i + 64]);
    INFO("invocation " << i);
    REQUIRE(int32_t(dst[3 * i]) == e.sdot);
    REQUIRE(dst[3 * i + 1] == e.udot);
    REQUIRE(int32_t(dst[3 * i + 2]) == e.sdot_acc_sat);
  }
  CHECK(int32_t(dst[3 * 5 + 2]) == INT32_MAX);  // the saturating case really saturated
}

TEST_CASE("GLSL.std.450 and core arithmetic match libm and C++") {
  const uint32_t n = 64;
  std::vector<float> x(2 * n);
  for (uint32_t i = 0; i < 2 * n; ++i) x[i] = (float(int(i * 37 % 101) - 50)) / 7.25f;
  auto bx = bytes_of(x);
  std::vector<uint8_t> fo(n * 32 * 4), ko(n * 32 * 4);
  Run r;
  r.buffers = {&bx, &fo, &ko};
  r.groups[0] = n / 16;
  run_shader("glsl_math", r);
  auto near = [](float got, double want, double rel) {
    return std::fabs(double(got) - want) <= rel * std::max(1.0, std::fabs(want));
  };
  for (uint32_t i = 0; i < n; ++i) {
    double a = x[i], b = x[i + 64];
    auto F = [&](int j) { return at<float>(fo, i * 32 + j); };
    auto K = [&](int j) { return at<int32_t>(ko, i * 32 + j); };
    INFO("invocation " << i << " a=" << a << " b=" << b);
    CHECK(near(F(0), std::sqrt(std::fabs(a)), 1e-6));
    CHECK(near(F(1), 1.0 / std::sqrt(std::fabs(a) + 1.0), 1e-5));
    CHECK(near(F(2), std::exp(a * 0.1), 1e-5));
    CHECK(near(F(3), std::log(std::fabs(a) + 1.0), 1e-5));
    CHECK(near(F(4), std::pow(std::fabs(a) + 0.5, 1.5), 1e-5));
    CHECK(near(F(5), std::sin(a), 1e-5));
    CHECK(near(F(6), std::cos(a), 1e-5));
    CHECK(near(F(7), std::atan2(a, b), 1e-5));
    CHECK(F(8) == float(std::floor(a)));
    CHECK(near(F(9), a - std::floor(a), 1e-6));
    CHECK(F(10) == float(std::min(std::max(a, -1.0), 2.0)));
    CHECK(near(F(11), a + 0.25 * (b - a), 1e-6));
    CHECK(F(12) == (a < b ? 0.0f : 1.0f));
    double t = std::min(std::max((a + 1.0) / 4.0, 0.0), 1.0);
    CHECK(near(F(13), t * t * (3 - 2 * t), 1e-5));
    CHECK(near(F(14), a * b + 1.0, 1e-6));
    CHECK(near(F(15), std::sqrt(a * a + b * b + 1.0), 1e-6));
    CHECK(near(F(16), (b + 4.0) / std::sqrt(a * a + (b + 4.0) * (b + 4.0)), 1e-5));
    CHECK(near(F(17), a * a - b * 1.0, 1e-5));
    CHECK(F(18) == float(std::ldexp(a, int(i % 5) - 2)));
    int e = 0;
    double m = std::frexp(a + 10.0, &e);
    CHECK(near(F(19), m, 1e-6));
    CHECK(K(0) == e);
    double whole;
    double frac = std::modf(a, &whole);
    CHECK(near(F(20), frac, 1e-6));
    CHECK(F(21) == float(whole));
    double d = 0.6 * a + 0.8 * b;
    CHECK(near(F(22), a - 2 * d * 0.6, 1e-5));
    double fa = a - std::floor(a);
    CHECK(near(F(23), std::nearbyint(fa * 255.0) / 255.0, 1e-6));
    CHECK(near(F(24), b, 1e-3));  // through fp16
    double sg = a > 0 ? 1 : a < 0 ? -1 : 0;
    CHECK(near(F(25), sg * std::min(a, b) + std::max(a, b), 1e-6));
    CHECK(near(F(26), a - 1.5 * std::floor(a / 1.5), 1e-5));
    CHECK(near(F(27), a / (b + 100.0) - b * 0.5, 1e-6));
    int ia = int(float(a) * 10.0f), ib = int(float(b) * 10.0f);
    auto lsb = [](int v) { return v == 0 ? -1 : __builtin_ctz(uint32_t(v)); };
    auto msb = [](int v) {
      uint32_t u = uint32_t(v < 0 ? ~v : v);
      return u == 0 ? -1 : 31 - __builtin_clz(u);
    };
    CHECK(K(1) == lsb(ia));
    CHECK(K(2) == msb(ia));
    CHECK(K(3) == __builtin_popcount(uint32_t(ia)));
    CHECK(K(4) == (int32_t(uint32_t(ia) << (32 - 8)) >> (32 - 5)));
    uint32_t mask6 = 0x3Fu << 4;
    CHECK(K(5) == int32_t((uint32_t(ia) & ~mask6) | ((uint32_t(ib) << 4) & mask6)));
    uint32_t rev = 0;
    for (int bit = 0; bit < 32; ++bit) if (uint32_t(ia) & (1u << bit)) rev |= 1u << (31 - bit);
    CHECK(uint32_t(K(6)) == rev);
    if (ib != 0) {
      CHECK(K(7) == ia / ib);
      // glslang emits OpSMod for int %: the result takes the divisor's sign.
      int smod = ia % ib;
      if (smod != 0 && ((smod < 0) != (ib < 0))) smod += ib;
      CHECK(K(8) == smod);
    }
    CHECK(K(9) == std::abs(ia) + (ib > 0) - (ib < 0) + std::min(ia, ib) + std::max(ia, ib));
    CHECK(K(11) == int32_t((uint32_t(ia) << 3) ^ uint32_t(ib >> 2)));
  }
}

TEST_CASE("subgroup operations on vectors, component by component") {
  uint32_t sg = GENERATE(8u, 16u, 64u);
  std::vector<uint8_t> out(64 * 8 * 3, 0);
  Run r;
  r.buffers = {&out};
  r.subgroup_size = sg;
  run_shader("subgroup_vectors", r);
  for (uint32_t l = 0; l < 64; ++l) {
    INFO("lane " << l << " subgroup size " << sg);
    uint32_t base = l / sg * sg, s0 = 0, s1 = 0;
    for (uint32_t k = base; k <= l; ++k) {
      s0 += k;
      s1 += 2 * k + 1;
    }
    REQUIRE(at<uint32_t>(out, 2 * l) == s0);
    REQUIRE(at<uint32_t>(out, 2 * l + 1) == s1);
    REQUIRE(at<float>(out, 128 + 2 * l) == float(base + sg - 1));
    REQUIRE(at<float>(out, 128 + 2 * l + 1) == -float(base));
    uint32_t partner = l ^ 3u;
    REQUIRE(at<uint32_t>(out, 256 + 2 * l) == partner);
    REQUIRE(at<uint32_t>(out, 256 + 2 * l + 1) == partner * partner);
  }
}

TEST_CASE("vectors loaded a fixed stride apart per invocation and a loop counter read after the loop") {
  const uint32_t sg = GENERATE(8u, 16u, 32u, 64u);
  const bool robust = GENERATE(false, true);
  const uint32_t wrap = GENERATE(0u, 0xFFFFFFFCu);
  const uint32_t groups = 3, inv = groups * 64, n = inv - 37;
  const uint32_t vec4s = 200, limit = robust ? 190 : vec4s;  // robust: a4's range ends early
  std::vector<float> a4(vec4s * 4), a3(inv * 4);
  for (uint32_t j = 0; j < a4.size(); ++j) a4[j] = float(int(j % 97) - 40);
  for (uint32_t j = 0; j < a3.size(); ++j) a3[j] = j % 4 == 3 ? std::nanf("") : float(int(j % 89) - 44);
  // Small integers are exact in fp16: sign, exponent and mantissa by hand.
  auto f16 = [](int v) {
    if (v == 0) return uint16_t(0);
    uint32_t a = uint32_t(v < 0 ? -v : v), e = 31 - uint32_t(__builtin_clz(a));
    return uint16_t((v < 0 ? 0x8000 : 0) | ((e + 15) << 10) | ((a << (10 - e)) & 1023));
  };
  std::vector<uint16_t> h(inv * 4);
  std::vector<float> hv(h.size());
  for (uint32_t j = 0; j < h.size(); ++j) {
    int v = int(j % 61) - 30;
    h[j] = f16(v);
    hv[j] = float(v);
  }
  auto b4 = bytes_of(a4), bh = bytes_of(h), b3 = bytes_of(a3);
  std::vector<uint8_t> out(inv * 8 * 4, 0xEE);
  Run r;
  r.buffers = {&b4, &bh, &b3, &out};
  r.ranges = {size_t(limit) * 16, 0, 0, 0};
  r.robust = robust;
  r.groups[0] = groups;
  r.subgroup_size = sg;
  r.push.resize(8);
  std::memcpy(r.push.data(), &n, 4);
  std::memcpy(r.push.data() + 4, &wrap, 4);
  run_shader("strided_vector_loads", r);
  // Component c of vec4 element j: out-of-bounds reads give zero under robust access.
  auto A4 = [&](uint32_t j, uint32_t c) { return j < limit ? a4[4 * j + c] : 0.0f; };
  for (uint32_t gid = 0; gid < inv; ++gid) {
    const uint32_t t = gid % 64;
    INFO("invocation " << gid << ", subgroup size " << sg << (robust ? ", robust" : "") << ", wrap " << wrap);
    CHECK(at<float>(out, gid * 8 + 0) == A4(gid, 0) + 2 * A4(gid, 1) + 4 * A4(gid, 2) + 8 * A4(gid, 3));
    CHECK(at<float>(out, gid * 8 + 1) == hv[4 * gid] + 2 * hv[4 * gid + 1]);
    CHECK(at<float>(out, gid * 8 + 2) == hv[4 * gid + 2] + 2 * hv[4 * gid + 3]);
    CHECK(at<float>(out, gid * 8 + 3) == a3[4 * gid] + 2 * a3[4 * gid + 1] + 4 * a3[4 * gid + 2]);
    const uint32_t j = wrap ? gid - 1 : gid;
    CHECK(at<float>(out, gid * 8 + 4) == (t >= 1 ? A4(j, 0) + 2 * A4(j, 3) : -1.0f));
    CHECK(at<float>(out, gid * 8 + 5) == (gid < n ? A4(gid, 1) : -2.0f));
    float acc = 0;
    for (uint32_t i = 0; i < t % 5 + 1; ++i) acc += A4(gid - t + i + t, 2);
    CHECK(at<float>(out, gid * 8 + 6) == acc);
    CHECK(at<float>(out, gid * 8 + 7) == float(t % 5 + 1));
  }
}

TEST_CASE("vec4 and f16vec2 loads a fixed stride apart compile to wide loads instead of gathers") {
  Run r;
  r.subgroup_size = GENERATE(8u, 32u);
  r.robust = GENERATE(false, true);
  r.buffers.resize(4);
  CompileOptions opts = options_for(r);
  opts.layout.push_constant_bytes = 8;
  CompileResult cr;
  std::string ir = optimized_ir(load_test_spv(COOPVK_TEST_SHADER_DIR, "strided_vector_loads"), opts, &cr, true);
  INFO("subgroup size " << r.subgroup_size << "\n" << ir);
  // The x, y0, y1 and z loads: windows of 4 (vec4, vec3) or 2 (f16vec2, 8 bytes apart)
  // components per lane, loaded as whole 64-byte registers (no lane-wide load of these
  // types has that width at these subgroup sizes); their gather fallbacks remain only for
  // a wrapped index or a window crossing the end of a robust buffer.
  CHECK(ir.find("load <16 x float>") != std::string::npos);
  CHECK(ir.find("load <32 x half>") != std::string::npos);
}

TEST_CASE("loads at lane patterns of quantized blocks give the same values as one by one") {
  const uint32_t sg = GENERATE(8u, 32u, 64u);
  const bool robust = GENERATE(false, true);
  const uint32_t off = GENERATE(0u, 64u, 8u);  // 8: the pattern's run-time condition fails
  const uint32_t groups = 2, inv = groups * 64;
  const uint32_t blocks = (off + 8 * inv) / 32 + 1, vec4s = (off + 8 * inv) / 4 + 8;
  // Blocks of 18 bytes: an f16 scale (small integers are exact) and eight 16-bit words.
  std::vector<uint8_t> qb(blocks * 18);
  std::vector<float> scale(blocks);
  for (uint32_t k = 0; k < blocks; ++k) {
    int s = int(k % 29) - 14;
    scale[k] = float(s);
    uint16_t h = 0;
    if (s) {
      uint32_t a = uint32_t(s < 0 ? -s : s), e = 31 - uint32_t(__builtin_clz(a));
      h = uint16_t((s < 0 ? 0x8000 : 0) | ((e + 15) << 10) | ((a << (10 - e)) & 1023));
    }
    std::memcpy(&qb[k * 18], &h, 2);
    for (uint32_t w = 0; w < 8; ++w) {
      uint16_t x = uint16_t(k * 8 + w * 97 + 3);
      std::memcpy(&qb[k * 18 + 2 + 2 * w], &x, 2);
    }
  }
  std::vector<float> v(vec4s * 4);
  for (uint32_t j = 0; j < v.size(); ++j) v[j] = float(int(j % 53) - 26);
  // Robust: both ranges end early, so the last lanes read zeros.
  const uint32_t q_limit = robust ? blocks - 3 : blocks, v_limit = robust ? vec4s - 40 : vec4s;
  auto bv = bytes_of(v);
  std::vector<uint8_t> out(inv * 16, 0xEE);
  Run r;
  r.buffers = {&qb, &bv, &out};
  r.ranges = {size_t(q_limit) * 18, size_t(v_limit) * 16, 0};
  r.robust = robust;
  r.groups[0] = groups;
  r.subgroup_size = sg;
  r.push.resize(4);
  std::memcpy(r.push.data(), &off, 4);
  run_shader("lane_pattern_loads", r);
  // A member of block k reads zero when any of its bytes is out of range (robust access
  // is per access: the 2-byte scale and words lie inside their block).
  auto word = [&](uint32_t k, uint32_t w) -> float {
    if (robust && (k * 18 + 2 + 2 * w + 2 > q_limit * 18)) return 0.0f;
    uint16_t x;
    std::memcpy(&x, &qb[k * 18 + 2 + 2 * w], 2);
    return float(x);
  };
  auto V = [&](uint32_t j, uint32_t c) { return j < v_limit ? v[4 * j + c] : 0.0f; };
  for (uint32_t gid = 0; gid < inv; ++gid) {
    INFO("invocation " << gid << ", subgroup size " << sg << (robust ? ", robust" : "") << ", off " << off);
    const uint32_t col = off + 8 * gid, ib = col / 32, iqs = (col % 32) / 2;
    const float d = robust && ib * 18 + 2 > q_limit * 18 ? 0.0f : scale[ib];
    CHECK(at<float>(out, gid * 4 + 0) == d);
    CHECK(at<float>(out, gid * 4 + 1) == word(ib, iqs / 2));
    CHECK(at<float>(out, gid * 4 + 2) == word(ib, iqs / 2 + 1));
    const uint32_t j = (col - col % 32 + iqs) / 4;
    CHECK(at<float>(out, gid * 4 + 3) == V(j, 0) + 2 * V(j, 1) + 4 * V(j, 2) + 8 * V(j, 3));
  }
}

TEST_CASE("loads at lane patterns of quantized blocks are windows") {
  Run r;
  r.subgroup_size = 32;
  r.buffers.resize(3);
  CompileOptions opts = options_for(r);
  opts.layout.push_constant_bytes = 4;
  CompileResult cr;
  std::string ir = optimized_ir(load_test_spv(COOPVK_TEST_SHADER_DIR, "lane_pattern_loads"), opts, &cr, true);
  INFO(ir);
  // The words: 8 blocks of 18 bytes, 16-bit elements: a window of 72 in three 64-byte
  // registers (the shader loads no 16-bit value consecutively); the scales the same
  // window again. Their gathers remain only as the slow path.
  CHECK(ir.find("load <32 x i16>") != std::string::npos);
}

TEST_CASE("division and remainder by a uniform divisor match C++ for every divisor class") {
  const uint32_t sg = GENERATE(8u, 16u, 32u);
  const uint32_t d = GENERATE(0u, 1u, 2u, 3u, 7u, 32u, 33u, 1000u, 4096u, 65537u, 0x7fffffffu, 0x80000000u,
                              0xfffffffbu, 0xffffffffu);
  const uint32_t n = 1000;
  std::vector<uint32_t> x(n);
  uint64_t s = 0x9E3779B97F4A7C15ull ^ d;
  for (uint32_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    // edges first, then a mix of small and full-range values
    const uint32_t edges[] = {0u, 1u, d, d - 1u, d + 1u, 0xffffffffu, 0xfffffffeu, 0x80000000u, 2u * d, 3u * d - 1u};
    x[i] = i < 10 ? edges[i] : (i % 3 == 0 ? uint32_t(s >> 40) : uint32_t(s >> 32));
  }
  std::vector<uint8_t> xb = bytes_of(x), qb(n * 4), rb(n * 4), yb(n * 4);
  Run r;
  r.buffers = {&xb, &qb, &rb, &yb};
  r.push = bytes_of(std::vector<uint32_t>{d, n});
  r.groups[0] = (n + 63) / 64;
  r.subgroup_size = sg;
  run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, "uniform_divisor"), r);
  for (uint32_t i = 0; i < n; ++i) {
    INFO("x = " << x[i] << ", d = " << d << ", subgroup size " << sg);
    if (d != 0) {  // division by zero is undefined in SPIR-V: any value, no trap
      REQUIRE(at<uint32_t>(qb, i) == x[i] / d);
      REQUIRE(at<uint32_t>(rb, i) == x[i] % d);
      REQUIRE(at<uint32_t>(yb, i) == x[uint32_t((uint64_t(i % d) * 2u + i / d) % n)]);
    }
  }
}

namespace {
// Distance in units in the last place between a float result and a double reference (the
// reference rounded to float first; subnormals count in their own ULPs).
double ulp_error(float got, double want) {
  const float w = float(want);
  if (std::isinf(w) || std::isinf(got)) return got == w ? 0.0 : 1e9;
  auto key = [](float f) {
    int32_t b;
    std::memcpy(&b, &f, 4);
    return b < 0 ? -int64_t(b & 0x7fffffff) : int64_t(b);
  };
  return double(std::llabs(key(got) - key(w))) + 0.5;  // + the reference's own rounding
}
}  // namespace

TEST_CASE("exp and exp2 in vector code stay within 2.5 ULP over the whole float range") {
  const uint32_t sg = GENERATE(8u, 32u);
  std::vector<float> x;
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 88.7f, 88.72f, 89.0f, -87.3f, -103.0f, -104.0f, -150.0f, 127.9f,
                  128.0f, -126.0f, -149.0f, -149.5f, -160.0f, 1e-30f, -1e-30f, 1e30f, -1e30f})
    x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  for (int i = -20000; i <= 20000; ++i) x.push_back(float(i) * 0.0075f);  // -150 .. 150
  uint32_t s = 12345;
  for (int i = 0; i < 20000; ++i) {  // random bits in [-200, 200]
    s = s * 1664525u + 1013904223u;
    x.push_back((float(s >> 8) / float(1u << 24) - 0.5f) * 400.0f);
  }
  const uint32_t n = uint32_t(x.size());
  std::vector<uint8_t> xb = bytes_of(x), eb(n * 4), e2b(n * 4);
  Run r;
  r.buffers = {&xb, &eb, &e2b};
  r.push = bytes_of(std::vector<uint32_t>{n});
  r.groups[0] = (n + 63) / 64;
  r.subgroup_size = sg;
  run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, "exp_sweep"), r);
  double worst_e = 0, worst_e2 = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const float got_e = at<float>(eb, i), got_e2 = at<float>(e2b, i);
    INFO("x = " << x[i] << " exp " << got_e << " exp2 " << got_e2);
    if (std::isnan(x[i])) {
      CHECK(std::isnan(got_e));
      CHECK(std::isnan(got_e2));
      continue;
    }
    const double want_e = std::exp(double(x[i])), want_e2 = std::exp2(double(x[i]));
    worst_e = std::max(worst_e, ulp_error(got_e, want_e));
    worst_e2 = std::max(worst_e2, ulp_error(got_e2, want_e2));
    REQUIRE(ulp_error(got_e, want_e) <= 2.5);
    REQUIRE(ulp_error(got_e2, want_e2) <= 2.5);
  }
  INFO("worst exp " << worst_e << " ULP, exp2 " << worst_e2 << " ULP");
  CHECK(worst_e <= 2.5);
}
