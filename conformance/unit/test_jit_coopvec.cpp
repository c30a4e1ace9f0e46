// Cooperative vectors in the JIT without Vulkan (lower_coopvec*.cpp), against plain C++
// computed here per invocation.
//
// Exactness: every test value is a small integer (or a half for the float -> int8
// conversions), so in the multiplies each product and partial sum is exact in f32 and
// the one rounding to an f16 result is the reference's encode() of the exact sum;
// integer results wrap modulo 2^32 like the reference. Float results compare bit for bit
// except exp / log / tanh / atan, which are checked to 2^-20 relative (LLVM's and libm's
// implementations differ in the last bits, and the spec's precision for them is coarser).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "coopvec_test_matrix.h"
#include "coopvk/kernels/coopvec_layout.h"
#include "coopvk/kernels/number_formats.h"
#include "jit_run.h"
#include "matrix_reference.h"

using namespace coopvk;
using namespace coopvk::test;
using kernels::MatrixLayout;
using kernels::NumberFormat;
using NF = NumberFormat;

namespace {

constexpr uint32_t kLocal = 16, kGroups = 2, kInvocations = kLocal * kGroups;

jit::SpecializationValue spec_u32(uint32_t id, uint32_t v) {
  jit::SpecializationValue s{id, std::vector<uint8_t>(4)};
  std::memcpy(s.bytes.data(), &v, 4);
  return s;
}

std::vector<uint32_t> shader(const std::string& name) { return load_test_spv(COOPVK_TEST_SHADER_DIR, name); }

template <typename T>
std::vector<uint8_t> push_words(std::initializer_list<T> v) {
  return bytes_of(std::vector<T>(v));
}

struct Variant {
  const char* name;
  NF input, interp;
  bool packed;
  NF matrix, bias, result;
  bool has_bias;
  int lo, hi;    // input values
  int mlo, mhi;  // matrix values
};

const Variant kVariants[] = {
    {"f16_f16", NF::F16, NF::F16, false, NF::F16, NF::F16, NF::F16, true, -3, 3, -3, 3},
    {"f16_f16_nobias", NF::F16, NF::F16, false, NF::F16, NF::F16, NF::F16, false, -3, 3, -3, 3},
    {"f16_f32", NF::F16, NF::F16, false, NF::F16, NF::F32, NF::F32, true, -8, 8, -8, 8},
    {"f32_f32", NF::F32, NF::F32, false, NF::F32, NF::F32, NF::F32, true, -8, 8, -8, 8},
    {"e4m3_f16", NF::F16, NF::E4M3, false, NF::E4M3, NF::F16, NF::F16, true, -4, 4, -4, 4},
    {"e5m2_f16", NF::F16, NF::E5M2, false, NF::E5M2, NF::F16, NF::F16, true, -4, 4, -4, 4},
    {"s8packed_s32", NF::U32, NF::I8, true, NF::I8, NF::I32, NF::I32, true, -128, 127, -128, 127},
    {"u8packed_u32", NF::U32, NF::U8, true, NF::U8, NF::U32, NF::U32, false, 0, 255, 0, 255},
    {"s8_s32", NF::I8, NF::I8, false, NF::I8, NF::I32, NF::I32, true, -128, 127, -128, 127},
    {"f32_s8_s32", NF::F32, NF::I8, false, NF::I8, NF::I32, NF::I32, true, -300, 300, -128, 127},
    {"u8_u32", NF::U8, NF::U8, false, NF::U8, NF::U32, NF::U32, true, 0, 255, 0, 255},
};

const Variant& variant(const std::string& name) {
  for (const Variant& v : kVariants)
    if (name == v.name) return v;
  FAIL("no variant " << name);
  return kVariants[0];
}

// InputInterpretation's conversion of one input value (SPV_NV_cooperative_vector): float
// -> int rounds to nearest even and saturates; int -> int saturates; exact values
// otherwise.
double interpret(const Variant& v, double x) {
  if (kernels::format_is_float(v.interp)) return x;
  double r = kernels::format_is_float(v.input) ? std::nearbyint(x) : x;
  return std::min(std::max(r, int_lo(v.interp)), int_hi(v.interp));
}

struct MatmulCase {
  uint32_t m, k;
  MatrixLayout layout;
  bool transpose;
};

// Which lanes multiply by what: Divergent, odd invocations on a second matrix and bias and
// every fifth inactive (lane by lane); Uniform, every invocation on the first (one product
// over the lanes, coopvec_batch.h); UniformHoles, the same with every fifth inactive.
enum class Lanes { Divergent, Uniform, UniformHoles };

// mat_range: robust buffer access with the matrix buffer's range ending there (row-major,
// not transposed): elements past it read zero.
void run_matmul(const Variant& v, const MatmulCase& c, uint32_t seed, size_t mat_range = 0,
                Lanes lanes = Lanes::Divergent) {
  CAPTURE(v.name, c.m, c.k, int(c.layout), c.transpose);
  const uint32_t M = c.m, K = c.k;
  const uint32_t in_len = v.packed ? (K + 3) / 4 : K;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> in_dist(v.lo, v.hi), mat_dist(v.mlo, v.mhi), bias_dist(-1000, 1000);
  // Two matrices and biases: odd invocations use the second (a lane-varying MatrixOffset).
  std::vector<double> a[2], bias[2];
  StoredMatrix stored[2];
  for (int s = 0; s < 2; ++s) {
    a[s].resize(size_t(M) * K);
    for (double& x : a[s]) x = mat_dist(rng);
    stored[s] = store_matrix(a[s], M, K, v.matrix, c.layout, c.transpose);
    bias[s].resize(M);
    for (double& x : bias[s]) x = v.has_bias ? (kernels::format_is_float(v.bias) ? mat_dist(rng) : bias_dist(rng)) : 0;
    if (v.result == NF::U32)
      for (double& x : bias[s]) x = std::abs(x);
  }
  REQUIRE(stored[0].stride == stored[1].stride);
  const size_t mat_bytes = stored[0].bytes.size();
  std::vector<uint8_t> mat(2 * mat_bytes);
  std::memcpy(mat.data(), stored[0].bytes.data(), mat_bytes);
  std::memcpy(mat.data() + mat_bytes, stored[1].bytes.data(), mat_bytes);
  const size_t bsz = kernels::format_size(v.bias), bias_bytes = round_up(M * bsz, 16);
  std::vector<uint8_t> bias_buf(2 * bias_bytes + 16);
  for (int s = 0; s < 2; ++s)
    for (uint32_t m = 0; m < M; ++m) {
      uint64_t bits = encode(v.bias, bias[s][m]);
      std::memcpy(bias_buf.data() + s * bias_bytes + m * bsz, &bits, bsz);
    }
  // Inputs; packed ones are bytes, four to a 32-bit component.
  const size_t in_esz = kernels::format_size(v.input), in_stride = round_up(in_len * in_esz, 16);
  std::vector<uint8_t> in(kInvocations * in_stride);
  std::vector<std::vector<double>> x(kInvocations, std::vector<double>(K));
  for (uint32_t i = 0; i < kInvocations; ++i) {
    for (uint32_t k = 0; k < K; ++k) {
      double val = in_dist(rng);
      if (v.input == NF::F32 && !kernels::format_is_float(v.interp) && k % 3 == 1) val += 0.5;  // ties to even
      x[i][k] = val;
      if (v.packed) {
        in[i * in_stride + k] = uint8_t(int(val));
      } else {
        uint64_t bits = encode(v.input, val);
        std::memcpy(in.data() + i * in_stride + k * in_esz, &bits, in_esz);
      }
    }
    for (uint32_t k = K; v.packed && k < in_len * 4; ++k) in[i * in_stride + k] = uint8_t(rng());  // ignored
  }
  const size_t rsz = kernels::format_size(v.result), out_stride = round_up(M * rsz, 16);
  std::vector<uint8_t> out(kInvocations * out_stride, 0xAB);
  Run r;
  r.coopvec = true;
  r.buffers = {&in, &mat, &bias_buf, &out};
  r.groups[0] = kGroups;
  r.spec = {spec_u32(0, M), spec_u32(1, K), spec_u32(2, in_len), spec_u32(3, uint32_t(c.layout)),
            spec_u32(4, c.transpose)};
  const bool uniform = lanes != Lanes::Divergent;
  // the uniform shader reads a nonzero mat_bytes as "leave lanes out"
  const uint32_t second = lanes == Lanes::Uniform ? 0 : lanes == Lanes::UniformHoles ? 1 : uint32_t(mat_bytes);
  r.push = push_words<uint32_t>({uint32_t(in_stride), uint32_t(out_stride), uint32_t(stored[0].stride), second,
                                 uint32_t(bias_bytes)});
  if (mat_range) {
    r.robust = true;
    r.ranges = {0, mat_range, 0, 0};
  }
  run_words(shader(std::string("matmul_") + v.name + (uniform ? "_uniform" : "")), r);
  for (uint32_t i = 0; i < kInvocations; ++i) {
    CAPTURE(i);
    for (uint32_t m = 0; m < M; ++m) {
      CAPTURE(m);
      uint64_t got = 0;
      std::memcpy(&got, out.data() + i * out_stride + m * rsz, rsz);
      if (i % 5 == 3 && lanes != Lanes::Uniform) {  // inactive: untouched
        REQUIRE(got == (rsz == 4 ? 0xABABABABull : 0xABABull));
        continue;
      }
      const int s = uniform ? 0 : int(i & 1);
      double exact = bias[s][m];
      const size_t esz = kernels::format_size(v.matrix);
      for (uint32_t k = 0; k < K; ++k) {
        const size_t offset = s * mat_bytes + m * stored[0].stride + k * esz;
        if (mat_range && offset + esz > mat_range) continue;  // out of bounds: zero
        exact += a[s][size_t(m) * K + k] * interpret(v, x[i][k]);
      }
      REQUIRE(got == muladd_result(v.result, exact, false));
    }
  }
}

}  // namespace

TEST_CASE("cooperative vector matrix multiply of every length and layout (f16 and packed s8)") {
  const std::string name = GENERATE("f16_f16", "s8packed_s32");
  const auto mk = GENERATE(std::pair<uint32_t, uint32_t>{1, 1}, std::pair<uint32_t, uint32_t>{7, 7},
                           std::pair<uint32_t, uint32_t>{64, 129}, std::pair<uint32_t, uint32_t>{129, 64},
                           std::pair<uint32_t, uint32_t>{7, 512}, std::pair<uint32_t, uint32_t>{512, 7});
  const int layout = GENERATE(0, 1, 2, 3);
  const bool transpose = GENERATE(false, true);
  if (transpose && layout < 2) return;  // not allowed for row- and column-major
  run_matmul(variant(name), {mk.first, mk.second, MatrixLayout(layout), transpose}, 7 + mk.first * 3 + mk.second);
}

TEST_CASE("cooperative vector matrix multiply of every type combination") {
  const std::string name = GENERATE("f16_f16_nobias", "f16_f32", "f32_f32", "e4m3_f16", "e5m2_f16", "u8packed_u32",
                                    "s8_s32", "f32_s8_s32", "u8_u32");
  const auto mk = GENERATE(std::pair<uint32_t, uint32_t>{7, 7}, std::pair<uint32_t, uint32_t>{64, 129},
                           std::pair<uint32_t, uint32_t>{129, 64});
  const int layout = GENERATE(0, 1, 2, 3);
  const bool transpose = GENERATE(false, true);
  const Variant& v = variant(name);
  if (transpose && layout < 2) return;
  const bool fp8 = v.matrix == NF::E4M3 || v.matrix == NF::E5M2;
  if (fp8 && layout < 2) return;  // fp8 matrices: optimal layouts only (VUID ...-10090)
  run_matmul(v, {mk.first, mk.second, MatrixLayout(layout), transpose}, 99 + mk.first + mk.second);
}

TEST_CASE("cooperative vector matrix multiply on one matrix runs over all lanes at once") {
  // Every combination, with all lanes running (the batched product: one kernel call for the
  // subgroup) and with some left out (lane by lane again), both against the same exact sums.
  const std::string name = GENERATE("f16_f16", "f16_f16_nobias", "f16_f32", "f32_f32", "e4m3_f16", "e5m2_f16",
                                    "s8packed_s32", "u8packed_u32", "s8_s32", "f32_s8_s32", "u8_u32");
  const auto mk = GENERATE(std::pair<uint32_t, uint32_t>{7, 7}, std::pair<uint32_t, uint32_t>{64, 129},
                           std::pair<uint32_t, uint32_t>{512, 7});
  const int layout = GENERATE(0, 2, 3);
  const bool transpose = GENERATE(false, true);
  if (transpose && layout < 2) return;
  const Variant& v = variant(name);
  if ((v.matrix == NF::E4M3 || v.matrix == NF::E5M2) && layout < 2) return;  // fp8: optimal layouts only
  for (Lanes lanes : {Lanes::Uniform, Lanes::UniformHoles})
    run_matmul(v, {mk.first, mk.second, MatrixLayout(layout), transpose}, 11 + mk.first + mk.second, 0, lanes);
}

TEST_CASE("a multiply on one matrix calls the batched kernel once for the subgroup") {
  std::vector<uint8_t> in(64), mat(1024), bias(64), out(64);  // the layout's four buffers
  Run r;
  r.buffers = {&in, &mat, &bias, &out};
  r.coopvec = true;
  r.spec = {spec_u32(0, 16), spec_u32(1, 16), spec_u32(2, 16), spec_u32(3, 2), spec_u32(4, 0)};
  jit::CompileResult cr;
  const std::string uniform = optimized_ir(shader("matmul_f16_f16_uniform"), options_for(r), &cr, true);
  CHECK(occurrences(uniform, "call void @coopvk_rt_coopvec_matmul_lanes(") == 1);
  const std::string divergent = optimized_ir(shader("matmul_f16_f16"), options_for(r), &cr, true);
  CHECK(occurrences(divergent, "@coopvk_rt_coopvec_matmul_lanes(") == 0);
}

TEST_CASE("cooperative vector matrix multiply under robust buffer access") {
  // The second matrix is cut after 2.5 of its rows.
  const Variant& v = variant(GENERATE("s8packed_s32", "f16_f16"));
  const uint32_t M = 7, K = 40;
  const size_t esz = kernels::format_size(v.matrix), stride = round_up(K * esz, 16) + 16;
  const size_t mat_bytes = round_up((M - 1) * stride + K * esz, 64);
  run_matmul(v, {M, K, MatrixLayout::RowMajor, false}, 5, mat_bytes + 2 * stride + K * esz / 2);
}

namespace {

// The float operations of ops_f32.comp on one invocation's a and b (length L).
void check_ops_f32(uint32_t L) {
  CAPTURE(L);
  std::mt19937 rng(L);
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<float> in(kInvocations * 2 * L), out(kInvocations * 8 * L, -12345.0f);
  for (float& f : in) f = float(dist(rng));
  std::vector<uint8_t> in_b = bytes_of(in), out_b = bytes_of(out), h_b(kInvocations * L * 2);
  Run r;
  r.coopvec = true;
  r.buffers = {&in_b, &out_b, &h_b};
  r.groups[0] = kGroups;
  r.spec = {spec_u32(0, L)};
  run_words(shader("coopvec_ops_f32"), r);
  for (uint32_t i = 0; i < kInvocations; ++i) {
    const float* a = &in[i * 2 * L];
    const float* b = a + L;
    auto got = [&](uint32_t k, uint32_t j) { return at<float>(out_b, (i * 8 + k) * L + j); };
    for (uint32_t j = 0; j < L; ++j) {
      CAPTURE(i, j);
      REQUIRE(got(0, j) == (a[j] * b[j] + a[j] - b[j]) / 2.0f + a[j]);
      float step = a[j] < b[j] ? 0.0f : 1.0f;
      REQUIRE(got(1, j) == std::max(std::min(a[j], b[j]), std::clamp(b[j], -2.0f, 3.0f)) + step + (a[j] * b[j] + a[j] * 0.5f));
      double want = std::exp(a[j] * 0.25) + std::log(double(b[j]) * b[j] + 1.0) + std::tanh(double(a[j])) + std::atan(double(b[j]));
      REQUIRE(std::abs(got(2, j) - want) <= std::ldexp(std::max(1.0, std::abs(want)), -20) * 4);
      float c = j == i % L ? -1.0f : a[j] * 2.0f + float(j);
      REQUIRE(got(3, j) == c);
      REQUIRE(got(4, j) == ((i & 1) == 0 ? a[j] : b[j]) + float(i % 4));
      REQUIRE(got(5, j) == (i % 3 == 0 ? a[j] : b[j]));
      REQUIRE(kernels::f16_to_f32(at<uint16_t>(h_b, i * L + j)) == a[j]);
      REQUIRE(got(6, j) == float(int(b[j]) * 3) + a[j]);
      REQUIRE(got(7, j) == in[j] * a[L - 1]);
    }
  }
}

void check_ops_i32(uint32_t L) {
  CAPTURE(L);
  std::mt19937 rng(L + 1);
  std::uniform_int_distribution<int> dist(-1000, 1000);
  std::vector<int32_t> in(kInvocations * 2 * L), out(kInvocations * 5 * L);
  for (int32_t& v : in) v = dist(rng);
  std::vector<uint8_t> in_b = bytes_of(in), out_b = bytes_of(out);
  Run r;
  r.coopvec = true;
  r.buffers = {&in_b, &out_b};
  r.groups[0] = kGroups;
  r.spec = {spec_u32(0, L)};
  run_words(shader("coopvec_ops_i32"), r);
  for (uint32_t i = 0; i < kInvocations; ++i) {
    const int32_t* a = &in[i * 2 * L];
    const int32_t* b = a + L;
    auto got = [&](uint32_t k, uint32_t j) { return at<int32_t>(out_b, (i * 5 + k) * L + j); };
    for (uint32_t j = 0; j < L; ++j) {
      CAPTURE(i, j);
      REQUIRE(got(0, j) == (a[j] * b[j] - a[j] + b[j]) / 3 + (-b[j]));
      REQUIRE(got(1, j) == ((a[j] & b[j]) | (a[j] ^ 0x55)) + (~b[j]) + int32_t(uint32_t(a[j]) << 3) + (b[j] >> 1));
      uint32_t ua = uint32_t(a[j]), ub = uint32_t(b[j]);
      REQUIRE(uint32_t(got(2, j)) == ua / (ub | 1u) + (ua >> 28));
      REQUIRE(got(3, j) == std::max(std::min(a[j], b[j]), std::clamp(b[j], -7, 9)));
      REQUIRE(got(4, j) == (j == 0 ? 77 : b[j]) + a[j]);
    }
  }
}

// coopvec_aggregates.comp on every invocation: the same steps on std::vector copies.
void check_aggregates(uint32_t L) {
  CAPTURE(L);
  using V = std::vector<float>;
  std::mt19937 rng(L + 7);
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<float> in(kInvocations * 2 * L), out(kInvocations * 8 * L, -12345.0f);
  for (float& f : in) f = float(dist(rng));
  std::vector<uint8_t> in_b = bytes_of(in), out_b = bytes_of(out);
  const uint32_t pick = 2;
  Run r;
  r.coopvec = true;
  r.buffers = {&in_b, &out_b};
  r.groups[0] = kGroups;
  r.spec = {spec_u32(0, L)};
  r.push = push_words<uint32_t>({pick});
  run_words(shader("coopvec_aggregates"), r);
  auto lin = [&](std::initializer_list<std::pair<float, const V*>> terms) {
    V v(L, 0.0f);
    for (auto [c, x] : terms)
      for (uint32_t j = 0; j < L; ++j) v[j] += c * (*x)[j];
    return v;
  };
  for (uint32_t i = 0; i < kInvocations; ++i) {
    CAPTURE(i);
    const V a(in.begin() + (2 * i) * L, in.begin() + (2 * i + 1) * L), b(in.begin() + (2 * i + 1) * L, in.begin() + (2 * i + 2) * L);
    V arr[3] = {a, b, lin({{1, &a}, {-1, &b}})};
    const uint32_t d = i % 3;
    const V ones(L, 1.0f);
    std::vector<V> want;
    want.push_back(lin({{3, &arr[1]}, {1, &arr[2]}}));
    want.push_back(lin({{1, &arr[d]}, {4, &arr[(d + 1) % 3]}, {1, &arr[pick]}}));
    arr[d] = lin({{10, &arr[d]}});
    want.push_back(lin({{1, &arr[0]}, {100, &arr[1]}, {1000, &arr[2]}}));
    want.push_back(lin({{2, &arr[0]}, {2, &arr[1]}, {2, &arr[2]}, {-1, &arr[0]}, {1, &a}, {-1, &b}}));
    V u1 = b;
    u1[0] = -1.0f;
    want.push_back(lin({{float(i), &a}, {1, &u1}, {float(i * 7), &ones}, {1, &b}}));
    want.push_back(lin({{float(i), &ones}, {1, (i & 1) == 0 ? &a : &b}}));
    want.push_back(lin({{1, &arr[1]}, {2, &arr[2]}}));
    const V ab = lin({{1, &a}, {1, &b}});
    const V* grid[2][2] = {{&a, &b}, {&b, &ab}};
    want.push_back(lin({{1, grid[i & 1][(i >> 1) & 1]}, {1, &ab}}));
    for (uint32_t k = 0; k < 8; ++k)
      for (uint32_t j = 0; j < L; ++j) {
        CAPTURE(k, j);
        REQUIRE(at<float>(out_b, (i * 8 + k) * L + j) == want[k][j]);
      }
  }
}

}  // namespace

TEST_CASE("cooperative vector arrays and structs") {
  const uint32_t L = GENERATE(1u, 7u, 33u, 129u);
  check_aggregates(L);
}

TEST_CASE("cooperative vector element-wise composite and control-flow operations") {
  const uint32_t L = GENERATE(1u, 7u, 64u, 129u, 512u);
  check_ops_f32(L);
  check_ops_i32(L);
}

TEST_CASE("cooperative vector training accumulations race into one matrix") {
  const bool f16 = GENERATE(false, true);
  const auto mn = GENERATE(std::pair<uint32_t, uint32_t>{1, 1}, std::pair<uint32_t, uint32_t>{7, 7},
                           std::pair<uint32_t, uint32_t>{64, 129});
  const int layout = GENERATE(0, 1, 2, 3);
  const uint32_t M = mn.first, N = mn.second;
  CAPTURE(f16, M, N, layout);
  const NF mf = f16 ? NF::F16 : NF::F32;
  std::mt19937 rng(M * 31 + N + layout);
  std::uniform_int_distribution<int> dist(-3, 3);
  std::vector<uint8_t> in(kInvocations * (M + N) * 2);
  std::vector<double> v(kInvocations * (M + N));
  for (size_t k = 0; k < v.size(); ++k) put(in, k, NF::F16, v[k] = dist(rng));
  // Initial contents; then the exact sums, every partial result of which f16 holds.
  std::vector<double> want(size_t(M) * N), sum_want(M);
  for (double& w : want) w = dist(rng);
  for (double& w : sum_want) w = dist(rng);
  StoredMatrix stored = store_matrix(want, M, N, mf, MatrixLayout(layout), false);
  std::vector<uint8_t> sum(round_up(M * 4, 16));
  for (uint32_t j = 0; j < M; ++j) put(sum, j, mf, sum_want[j]);
  for (uint32_t i = 0; i < kInvocations; ++i) {
    if (i % 7 == 5) continue;  // inactive
    const double* a = &v[i * (M + N)];
    for (uint32_t r = 0; r < M; ++r) {
      for (uint32_t c = 0; c < N; ++c) want[size_t(r) * N + c] += a[r] * a[M + c];
      sum_want[r] += a[r];
    }
  }
  Run r;
  r.coopvec = true;
  r.buffers = {&in, &stored.bytes, &sum};
  r.groups[0] = kGroups;
  r.spec = {spec_u32(0, M), spec_u32(1, N), spec_u32(2, uint32_t(layout))};
  r.push = push_words<uint32_t>({uint32_t(stored.stride)});
  run_words(shader(f16 ? "coopvec_training_f16" : "coopvec_training_f32"), r);
  StoredMatrix expect = store_matrix(want, M, N, mf, MatrixLayout(layout), false);
  REQUIRE(stored.bytes == expect.bytes);
  for (uint32_t j = 0; j < M; ++j) REQUIRE(get(sum, j, mf) == sum_want[j]);
}

TEST_CASE("cooperative vector loads and stores under robust buffer access") {
  const uint32_t L = GENERATE(7u, 64u);
  std::vector<float> in(kInvocations * L);
  for (size_t k = 0; k < in.size(); ++k) in[k] = float(k % 97);
  std::vector<uint8_t> in_b = bytes_of(in), out_b(kInvocations * L * 4, 0xAB);
  // The bound ranges end inside invocation 20's vector (in) and invocation 23's (out).
  const size_t in_range = (20 * L + L / 2) * 4, out_range = (23 * L + 3) * 4;
  Run r;
  r.coopvec = true;
  r.robust = true;
  r.buffers = {&in_b, &out_b};
  r.ranges = {in_range, out_range};
  r.groups[0] = kGroups;
  r.spec = {spec_u32(0, L)};
  run_words(shader("coopvec_robust"), r);
  for (size_t e = 0; e < kInvocations * L; ++e) {
    CAPTURE(e);
    if (e * 4 >= out_range) {
      REQUIRE(at<uint32_t>(out_b, e) == 0xABABABABu);  // dropped
      continue;
    }
    REQUIRE(at<float>(out_b, e) == (e * 4 < in_range ? in[e] : 0.0f) + 1.0f);
  }
}

TEST_CASE("cooperative vector loads and stores through buffer device addresses and shared memory") {
  const uint32_t L = GENERATE(1u, 7u, 129u);
  std::vector<float> src(kLocal * L), dst(kLocal * L, -1.0f);
  for (size_t k = 0; k < src.size(); ++k) src[k] = float(k % 251) - 100.0f;
  std::vector<uint8_t> unused(16);
  Run r;
  r.coopvec = true;
  r.buffers = {&unused};
  r.spec = {spec_u32(0, L)};
  r.push = push_words<uint64_t>({uint64_t(uintptr_t(src.data())), uint64_t(uintptr_t(dst.data()))});
  run_words(shader("coopvec_memory"), r);
  for (uint32_t i = 0; i < kLocal; ++i)
    for (uint32_t j = 0; j < L; ++j) {
      CAPTURE(i, j);
      REQUIRE(dst[i * L + j] == 2.0f * src[((i + 1) % kLocal) * L + j]);
    }
}

TEST_CASE("cooperative vector arrays copied by OpCopyMemory and merged by OpPhi") {
  std::vector<float> in(kInvocations * 16), out(kInvocations * 8, -1.0f);
  for (size_t k = 0; k < in.size(); ++k) in[k] = float(int(k % 23) - 11);
  std::vector<uint8_t> in_b = bytes_of(in), out_b = bytes_of(out);
  Run r;
  r.coopvec = true;
  r.buffers = {&in_b, &out_b};
  r.groups[0] = kGroups;
  run_words(shader("coopvec_aggregate_copies"), r);
  for (uint32_t i = 0; i < kInvocations; ++i)
    for (uint32_t k = 0; k < 8; ++k) {
      CAPTURE(i, k);
      const float a = in[i * 16 + k], b = in[i * 16 + 8 + k];
      const float s0 = (i & 1) == 0 ? a : b, s1 = (i & 1) == 0 ? b : a * 3.0f;
      REQUIRE(at<float>(out_b, i * 8 + k) == b + s0 * 10.0f + s1 * 100.0f);
    }
}

TEST_CASE("cooperative vector loads and stores of lanes at a common stride") {
  // s, t in elements: back to back (L), padded (L + 3), overlapping (1: loads only; the
  // stores then go lane by lane) and one place for all (0); reversed lane order; a lane
  // of every 8 returning first.
  const uint32_t L = GENERATE(1u, 7u, 64u);
  struct Case {
    uint32_t s, t, rev, skip;
  };
  const Case cases[] = {{L, L, 0, 8}, {L + 3, L + 5, 0, 8}, {L, L, 1, 8}, {1, L, 0, 8}, {0, L + 1, 1, 8},
                        {L, L, 0, 3}, {L, 1, 0, 8}, {L, 0, 0, 8}};
  for (const Case& c : cases) {
    CAPTURE(L, c.s, c.t, c.rev, c.skip);
    const uint32_t span_in = 32 * std::max(c.s, 1u) + L, span_out = 32 * std::max(c.t, 1u) + L;
    std::vector<uint8_t> in(span_in * 2), out(span_out * 2, 0xEE);
    for (uint32_t e = 0; e < span_in; ++e) put(in, e, NF::F16, double(int(e % 61) - 30));
    Run r;
    r.coopvec = true;
    r.buffers = {&in, &out};
    r.groups[0] = kGroups;
    r.spec = {spec_u32(0, L)};
    r.push = push_words<uint32_t>({c.s, c.t, c.rev, c.skip});
    run_words(shader("coopvec_strided"), r);
    // The reference: each element is one of the values written there (stores that
    // overlap race: SPIR-V orders nothing between invocations), or untouched.
    std::vector<std::vector<double>> writers(span_out);
    for (uint32_t i = 0; i < kInvocations; ++i) {
      if (i % 8 == c.skip) continue;
      const uint32_t j = c.rev ? 31 - i : i;
      for (uint32_t k = 0; k < L; ++k)
        writers[j * c.t + k].push_back(std::clamp(get(in, j * c.s + k, NF::F16) + 1.0, -20.0, 24.0));
    }
    for (uint32_t e = 0; e < span_out; ++e) {
      CAPTURE(e);
      if (writers[e].empty()) {
        REQUIRE(at<uint16_t>(out, e) == 0xEEEE);
        continue;
      }
      const double got = get(out, e, NF::F16);
      REQUIRE(std::find(writers[e].begin(), writers[e].end(), got) != writers[e].end());
      if (writers[e].size() == 1) REQUIRE(got == writers[e][0]);
    }
  }
}

TEST_CASE("cooperative vector shaders fail cleanly without the feature or when malformed") {
  Run r;
  r.spec = {spec_u32(0, 8), spec_u32(1, 8), spec_u32(2, 8), spec_u32(3, 0), spec_u32(4, 0)};
  std::vector<uint8_t> dummy(64);
  r.buffers = {&dummy, &dummy, &dummy, &dummy};
  auto error_of = [&](const std::string& name) {
    jit::CompileResult cr = compile_for(shader(name), r);
    REQUIRE(!cr.shader);
    return cr.error;
  };
  auto contains = [](const std::string& s, const char* what) { return s.find(what) != std::string::npos; };
  SECTION("feature off") {
    std::string e = error_of("matmul_f16_f16");
    CAPTURE(e);
    REQUIRE(contains(e, "cooperativeVector"));
  }
  r.coopvec = true;
  // Malformed by specialization: (shader, constant id, value, what the error says).
  struct Bad {
    const char* shader;
    uint32_t id, value;
    const char* says;
  };
  const Bad bad[] = {
      {"matmul_f16_f16", 2, 7, "K is 8"},                                       // Input has 7 components
      {"matmul_f16_f16", 3, 7, "unknown cooperative vector matrix layout 7"},   // MemoryLayout
      {"matmul_f16_f16", 4, 1, "cannot be transposed"},                         // row-major, transposed
      {"matmul_e4m3_f16", 3, 0, "optimal layout"},                              // fp8 row-major
      {"matmul_s8packed_s32", 2, 1, "fewer than K"},                            // 4 values for K = 8
  };
  for (const Bad& b : bad) {
    Run rb = r;
    rb.spec[b.id] = spec_u32(b.id, b.value);
    jit::CompileResult cr = compile_for(shader(b.shader), rb);
    CAPTURE(b.shader, b.id, b.value, cr.error);
    REQUIRE(!cr.shader);
    REQUIRE(contains(cr.error, b.says));
  }
  SECTION("interpretation operand that is not an integer constant") {
    // The InputInterpretation of the multiply becomes the Transpose operand's id.
    std::vector<uint32_t> w = shader("matmul_f16_f16");
    bool patched = false;
    for (size_t at = 5; at < w.size() && !patched; at += w[at] >> 16) {
      if ((w[at] & 0xffff) == uint32_t(spv::Op::OpCooperativeVectorMatrixMulAddNV)) {
        w[at + 4] = w[at + 14];  // operands: type, result, input, interp, ... Transpose at 14
        patched = true;
      }
      if ((w[at] >> 16) == 0) break;
    }
    REQUIRE(patched);
    jit::CompileResult cr = compile_for(w, r);
    REQUIRE(!cr.shader);
    CAPTURE(cr.error);
    REQUIRE(contains(cr.error, "InputInterpretation must be an integer constant"));
  }
}

TEST_CASE("cooperative vector shaders compile only what the device lists") {
  // One combination (f16 throughout, not transposable) and 16 components, as a driver
  // would pass them (CompileOptions::vector_combinations, max_vector_components).
  Run r;
  r.coopvec = true;
  r.vectors = {{uint8_t(NF::F16), uint8_t(NF::F16), uint8_t(NF::F16), uint8_t(NF::F16), uint8_t(NF::F16), false, false}};
  r.max_vector_components = 16;
  std::vector<uint8_t> dummy(64);
  r.buffers = {&dummy, &dummy, &dummy, &dummy};
  auto error_of = [&](const std::string& name, uint32_t m, uint32_t layout, uint32_t transpose) {
    Run rb = r;
    rb.spec = {spec_u32(0, m), spec_u32(1, 8), spec_u32(2, 8), spec_u32(3, layout), spec_u32(4, transpose)};
    jit::CompileResult cr = compile_for(shader(name), rb);
    return cr.shader ? std::string() : cr.error;
  };
  auto contains = [](const std::string& s, const char* what) { return s.find(what) != std::string::npos; };
  CHECK(error_of("matmul_f16_f16", 16, 2, 0).empty());  // listed, at the limit
  const std::string transposed = error_of("matmul_f16_f16", 8, 2, 1);
  CAPTURE(transposed);
  CHECK(contains(transposed, "VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10089"));
  // (The multiply without bias is lowered too, though never taken: either may be named.)
  CHECK(contains(transposed, "f16 input interpreted as f16, f16 matrix, "));
  CHECK(contains(transposed, "f16 result, transposed,"));
  const std::string fp8 = error_of("matmul_e4m3_f16", 8, 2, 0);
  CAPTURE(fp8);
  CHECK(contains(fp8, "f16 input interpreted as e4m3, e4m3 matrix"));
  CHECK(contains(fp8, "10089"));
  const std::string f32 = error_of("matmul_f16_f32", 8, 0, 0);  // an f32 result vector
  CAPTURE(f32);
  CHECK(contains(f32, "cooperative vectors of f32 components"));
  CHECK(contains(f32, "VUID-RuntimeSpirv-OpTypeCooperativeVector-10095"));
  const std::string longer = error_of("matmul_f16_f16", 17, 0, 0);
  CAPTURE(longer);
  CHECK(contains(longer, "17 components exceeds maxCooperativeVectorComponents (16"));
  CHECK(contains(longer, "10094"));
}
