// Tests of the batched cooperative-vector matrix products (kernels/coopvec_batch.h).
//
// Each case builds a logical M x K matrix of values every format holds exactly, stores it in
// the layout under test with the offsets of coopvec_layout.h's header written out here
// (not the kernel's), and compares every lane's result with a sum computed in this file in
// double / int64. Float inputs are small multiples of 1/2 and K is bounded, so every
// partial sum is exact in f32 and the order of the additions cannot matter: the only
// rounding is the final one to the result's format, and results must match bit for bit.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "coopvk/kernels/coopvec_batch.h"
#include "coopvk/kernels/cpu_dispatch.h"

using namespace coopvk::kernels;
using NF = NumberFormat;
using ML = MatrixLayout;

namespace {

struct Combo {
  NF input, matrix, bias, result;
};
// The interpretations of coopvk's cooperative-vector property entries (the packed and the
// f32-interpreted-as-s8 inputs arrive here as I8), plus unsigned 8-bit forms.
const Combo kCombos[] = {
    {NF::F16, NF::F16, NF::F16, NF::F16},   {NF::I8, NF::I8, NF::I32, NF::I32},
    {NF::E4M3, NF::E4M3, NF::F16, NF::F16}, {NF::E5M2, NF::E5M2, NF::F16, NF::F16},
    {NF::F32, NF::F32, NF::F32, NF::F32},   {NF::U8, NF::I8, NF::I32, NF::I32},
    {NF::U8, NF::U8, NF::U32, NF::U32},     {NF::F16, NF::F16, NF::F32, NF::F32},
};

bool is_fp8(NF f) { return f == NF::E4M3 || f == NF::E5M2; }

// Element (r, c) of a stored rows x cols matrix, from the layout formulas.
size_t offset_of(ML l, uint32_t cols, size_t e, size_t stride, uint32_t r, uint32_t c) {
  switch (l) {
    case ML::RowMajor: return r * stride + c * e;
    case ML::ColumnMajor: return c * stride + r * e;
    default: {
      const size_t g = 4 / e, cp = (cols + g - 1) / g * g;
      return (r / 16) * (cp / g) * 64 + (c / g) * 64 + (r % 16) * 4 + (c % g) * e;
    }
  }
}

// The bits of v (exact in every float format used here) in format f.
uint32_t encode(NF f, double v) {
  uint64_t bits = 0;
  const float fv = float(v);
  uint32_t b32;
  std::memcpy(&b32, &fv, 4);
  switch (f) {
    case NF::F32: return b32;
    case NF::I8: return uint32_t(int8_t(v)) & 0xFF;
    case NF::U8: return uint32_t(uint8_t(v));
    case NF::I32:
    case NF::U32: return uint32_t(int64_t(v));
    default: convert_scalar(NF::F32, b32, f, &bits); return uint32_t(bits);
  }
}

void put(std::vector<uint8_t>& buf, size_t at, NF f, double v) {
  const uint32_t bits = encode(f, v);
  std::memcpy(buf.data() + at, &bits, format_size(f));
}

// One value of format f: small halves for floats (exact in fp8 too), the full range for ints.
double sample(NF f, std::mt19937& rng) {
  if (f == NF::I8) return int(rng() % 256) - 128;
  if (f == NF::U8) return int(rng() % 256);
  if (f == NF::I32 || f == NF::U32) return int(rng() % 2001) - 1000;
  static const double kHalves[] = {-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2};
  return kHalves[rng() % 9];
}

struct Case {
  Combo t;
  uint32_t m, k, lanes;
  ML layout;
  bool transpose, bias;
  size_t stride_pad;  // bytes beyond the dense row / column (row- and column-major)
  uint32_t ld_pad;    // x / y columns beyond the lanes
};

void run_case(const Case& c, std::mt19937& rng) {
  CoopVecBatchDesc d;
  d.input = c.t.input;
  d.matrix = c.t.matrix;
  d.bias = c.t.bias;
  d.result = c.t.result;
  d.m = c.m;
  d.k = c.k;
  d.layout = c.layout;
  d.transpose = c.transpose;
  d.has_bias = c.bias;
  const size_t e = format_size(d.matrix);
  const uint32_t srows = c.transpose ? c.k : c.m, scols = c.transpose ? c.m : c.k;
  d.stride = (c.layout == ML::RowMajor ? scols : srows) * e + c.stride_pad;
  INFO("combo " << format_name(d.input) << " x " << format_name(d.matrix) << " -> " << format_name(d.result)
                << " m " << c.m << " k " << c.k << " lanes " << c.lanes << " layout " << int(c.layout)
                << " transpose " << c.transpose << " bias " << c.bias << " stride " << d.stride);
  REQUIRE(coopvec_batch_error(d) == nullptr);

  // The logical matrix A (m x k), stored (transposed when asked) with 0x5A filler elsewhere.
  std::vector<double> a(size_t(c.m) * c.k);
  for (double& v : a) v = sample(d.matrix, rng);
  std::vector<uint8_t> stored(coopvec_batch_matrix_bytes(d), 0x5A);
  if (c.layout != ML::RowMajor && c.layout != ML::ColumnMajor) std::fill(stored.begin(), stored.end(), 0);
  for (uint32_t i = 0; i < c.m; ++i)
    for (uint32_t j = 0; j < c.k; ++j) {
      const uint32_t r = c.transpose ? j : i, col = c.transpose ? i : j;
      put(stored, offset_of(c.layout, scols, e, d.stride, r, col), d.matrix, a[size_t(i) * c.k + j]);
    }
  std::vector<double> bias(c.m);
  std::vector<uint8_t> bias_bytes(size_t(c.m) * 4);
  for (uint32_t i = 0; i < c.m; ++i) {
    bias[i] = c.bias ? sample(d.bias, rng) : 0;
    put(bias_bytes, i * format_size(d.bias), d.bias, bias[i]);
  }
  const size_t ld = c.lanes + c.ld_pad, ein = format_size(d.input), eout = format_size(d.result);
  std::vector<double> x(size_t(c.k) * ld);
  std::vector<uint8_t> x_bytes(x.size() * ein);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = sample(d.input, rng);
    put(x_bytes, i * ein, d.input, x[i]);
  }
  std::vector<uint8_t> y(size_t(c.m) * ld * eout, 0xEE), yref(y.size(), 0xEE);
  coopvec_batch_matmul(d, stored.data(), bias_bytes.data(), x_bytes.data(), ld, y.data(), ld, c.lanes);
  coopvec_batch_reference(d, stored.data(), bias_bytes.data(), x_bytes.data(), ld, yref.data(), ld, c.lanes);
  {  // under a cache token: prepared once, then reused, the same bits
    static uint64_t token = 0;
    ++token;
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<uint8_t> yt(y.size(), 0xEE);
      coopvec_batch_matmul(d, stored.data(), bias_bytes.data(), x_bytes.data(), ld, yt.data(), ld, c.lanes, token);
      REQUIRE(yt == y);
    }
  }

  for (uint32_t i = 0; i < c.m; ++i)
    for (size_t l = 0; l < ld; ++l) {
      const size_t at = (i * ld + l) * eout;
      uint32_t got = 0, ref = 0, want = 0;
      std::memcpy(&got, y.data() + at, eout);
      std::memcpy(&ref, yref.data() + at, eout);
      if (l >= c.lanes) {  // past the lanes: untouched
        REQUIRE(got == (eout == 2 ? 0xEEEEu : 0xEEEEEEEEu));
        continue;
      }
      double sum = bias[i];
      for (uint32_t j = 0; j < c.k; ++j) sum += a[size_t(i) * c.k + j] * x[j * ld + l];
      if (format_is_float(d.result)) {
        want = encode(d.result, sum);  // exact in f32, one rounding to the result
      } else {
        want = uint32_t(uint64_t(int64_t(sum)));
      }
      INFO("row " << i << " lane " << l << " exact " << sum);
      REQUIRE(got == want);
      REQUIRE(ref == want);
    }
}

}  // namespace

namespace {

// Every combination, layout, transposition, shape and lane count once; returns the count.
size_t run_all_cases() {
  std::mt19937 rng(1234);
  struct Shape {
    uint32_t m, k;
  };
  const Shape shapes[] = {{1, 1}, {7, 5}, {16, 16}, {33, 129}, {64, 64}, {8, 512}};
  const uint32_t lanes[] = {1, 7, 8, 32};
  const ML layouts[] = {ML::RowMajor, ML::ColumnMajor, ML::InferencingOptimal, ML::TrainingOptimal};
  size_t cases = 0;
  for (const Combo& t : kCombos)
    for (ML layout : layouts) {
      const bool optimal = layout == ML::InferencingOptimal || layout == ML::TrainingOptimal;
      if (is_fp8(t.matrix) && !optimal) continue;  // VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090
      for (bool transpose : {false, true}) {
        if (transpose && !optimal) continue;
        for (const Shape& s : shapes)
          for (uint32_t n : lanes) {
            const bool bias = (s.m + n) % 2 == 0;
            run_case({t, s.m, s.k, n, layout, transpose, bias, optimal ? 0u : size_t(16 * (n % 2)), n % 3}, rng);
            ++cases;
          }
      }
    }
  return cases;
}

}  // namespace

TEST_CASE("batched cooperative-vector products match an exact sum for every combination and layout") {
  // On every kernel arch this CPU runs, the portable fallback included: the products go
  // through the active arch's tile kernels.
  const KernelArch saved = active_kernel_arch();
  for (KernelArch arch : {KernelArch::Portable, KernelArch::Avx2, KernelArch::Avx512}) {
    if (!kernel_arch_supported(arch)) continue;
    REQUIRE(force_kernel_arch(arch));
    INFO("kernel arch " << int(arch));
    CHECK(run_all_cases() > 500);
  }
  force_kernel_arch(saved);
}

TEST_CASE("batched cooperative-vector products refuse what they cannot compute") {
  CoopVecBatchDesc d;
  d.m = 4;
  d.k = 4;
  d.stride = 16;
  CHECK(coopvec_batch_error(d) == nullptr);
  CoopVecBatchDesc zero = d;
  zero.k = 0;
  CHECK(coopvec_batch_error(zero) != nullptr);
  CoopVecBatchDesc mixed = d;
  mixed.input = NF::I8;
  CHECK(coopvec_batch_error(mixed) != nullptr);
  CoopVecBatchDesc transposed = d;
  transposed.transpose = true;  // row-major cannot be transposed
  CHECK(coopvec_batch_error(transposed) != nullptr);
  CoopVecBatchDesc narrow = d;
  narrow.stride = 8;  // less than a row
  CHECK(coopvec_batch_error(narrow) != nullptr);
  CoopVecBatchDesc wide_int = d;
  wide_int.input = wide_int.matrix = NF::I32;
  wide_int.result = NF::I32;
  CHECK(coopvec_batch_error(wide_int) != nullptr);
  CoopVecBatchDesc f8_result = d;
  f8_result.result = NF::E4M3;
  CHECK(coopvec_batch_error(f8_result) != nullptr);
}

TEST_CASE("a cache token reuses the prepared matrix and nothing else") {
  // f32, 16 x 8, row-major, 8 lanes: y = A x with A all `a` and x all ones gives 8 * a.
  CoopVecBatchDesc d;
  d.m = 16;
  d.k = 8;
  d.stride = 8 * 4;
  std::vector<float> a(16 * 8, 1.0f), x(8 * 8, 1.0f), y(16 * 8);
  auto run = [&](uint64_t token) {
    coopvec_batch_matmul(d, a.data(), nullptr, x.data(), 8, y.data(), 8, 8, token);
    return y[0];
  };
  CHECK(run(7) == 8.0f);
  std::fill(a.begin(), a.end(), 2.0f);
  CHECK(run(7) == 8.0f);   // the promise: same bytes under one token, so the kept copy
  CHECK(run(8) == 16.0f);  // a new token reads the matrix again
  CHECK(run(0) == 16.0f);  // no token: always read
  std::fill(a.begin(), a.end(), 3.0f);
  CHECK(run(0) == 24.0f);
  CHECK(run(8) == 16.0f);
  // The same pointer and token with another shape or layout is another matrix.
  d.k = 4;
  CHECK(run(8) == 12.0f);
  d.k = 8;
  d.layout = MatrixLayout::ColumnMajor;
  d.stride = 16 * 4;
  CHECK(run(8) == 24.0f);
  // Several matrices under one token (the layers of a network) are all kept.
  std::vector<float> b(16 * 8, 5.0f);
  d.layout = MatrixLayout::RowMajor;
  d.stride = 8 * 4;
  auto run_b = [&](uint64_t token) {
    coopvec_batch_matmul(d, b.data(), nullptr, x.data(), 8, y.data(), 8, 8, token);
    return y[0];
  };
  CHECK(run(9) == 24.0f);
  CHECK(run_b(9) == 40.0f);
  std::fill(a.begin(), a.end(), 1.0f);
  std::fill(b.begin(), b.end(), 1.0f);
  CHECK(run(9) == 24.0f);
  CHECK(run_b(9) == 40.0f);
}
