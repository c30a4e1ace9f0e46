// Tests of the batched cooperative-vector products (kernels/coopvec_batch.h).
//
// Each case builds a logical M x K matrix, stores it in the layout under test with the
// offsets of coopvec_layout.h's header written out here (not the kernels'), runs the batched
// product over a set of lanes and checks every lane twice: against a sum computed in this
// file in double / int64 with the conversion rules of SPV_NV_cooperative_vector written out
// here, and against the per-lane kernel (coopvec_ops.h) on the same lane, bit for bit, which
// the JIT falls back to where lanes differ. Float inputs are small multiples of 1/2 and K is
// bounded, so every partial sum is exact in f32: the only rounding is the final one.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
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
  NF input, interp;
  bool packed;
  NF matrix, bias, result;
  bool saturate;
};
// The property entries' forms (packed s8, f32 inputs read as s8, f16 inputs read as fp8),
// f32 throughout, unsigned and mixed-sign 8-bit forms, and a saturating one.
const Combo kCombos[] = {
    {NF::F16, NF::F16, false, NF::F16, NF::F16, NF::F16, false},
    {NF::F16, NF::F16, false, NF::F16, NF::F32, NF::F32, false},
    {NF::F32, NF::F32, false, NF::F32, NF::F32, NF::F32, false},
    {NF::F16, NF::E4M3, false, NF::E4M3, NF::F16, NF::F16, false},
    {NF::F16, NF::E5M2, false, NF::E5M2, NF::F16, NF::F16, false},
    {NF::U32, NF::I8, true, NF::I8, NF::I32, NF::I32, false},
    {NF::I8, NF::I8, false, NF::I8, NF::I32, NF::I32, false},
    {NF::F32, NF::I8, false, NF::I8, NF::I32, NF::I32, false},
    {NF::U8, NF::U8, false, NF::U8, NF::U32, NF::U32, false},
    {NF::U8, NF::U8, false, NF::I8, NF::I32, NF::I32, false},
    {NF::I8, NF::I8, false, NF::I8, NF::I32, NF::I32, true},
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

// The bits of v in format f (exact for the floats used here; integers wrap to the width).
uint32_t encode(NF f, double v) {
  const float fv = float(v);
  uint32_t b32;
  std::memcpy(&b32, &fv, 4);
  uint64_t bits = 0;
  switch (f) {
    case NF::F32: return b32;
    case NF::I8: return uint32_t(int8_t(int64_t(v))) & 0xFF;
    case NF::U8: return uint32_t(uint8_t(int64_t(v)));
    case NF::I32:
    case NF::U32: return uint32_t(uint64_t(int64_t(v)));
    default: convert_scalar(NF::F32, b32, f, &bits); return uint32_t(bits);
  }
}

void put(std::vector<uint8_t>& buf, size_t at, NF f, double v) {
  const uint32_t bits = encode(f, v);
  std::memcpy(buf.data() + at, &bits, format_size(f));
}

double sample(NF f, std::mt19937& rng) {
  if (f == NF::I8) return int(rng() % 256) - 128;
  if (f == NF::U8) return int(rng() % 256);
  if (f == NF::I32) return int(rng() % 2001) - 1000;
  if (f == NF::U32) return int(rng() % 2001);
  static const double kHalves[] = {-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2};
  return kHalves[rng() % 9];
}

// An f32 input read as s8: ties, values past the range, and plain ones.
double sample_f32_as_s8(std::mt19937& rng) {
  static const double kValues[] = {-300.5, -128.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.25, 126.5, 127.5, 1000};
  return kValues[rng() % 12];
}

// SPV_NV_cooperative_vector: "Float to integer conversion is round-to-nearest-even and
// saturating."
double to_s8(double v) { return std::clamp(std::nearbyint(v), -128.0, 127.0); }

struct Case {
  Combo t;
  uint32_t m, k, lanes;
  ML layout;
  bool transpose, bias;
  size_t stride_pad;  // bytes beyond the dense row / column (row- and column-major)
  uint32_t ld_pad;    // components beyond the lanes in the vectors' buffers
  bool robust_cut;    // robust bounds that end before the matrix's last element
  bool robust_whole;  // robust bounds around the whole matrix (the batched path still)
};

void run_case(const Case& c, std::mt19937& rng) {
  CoopVecMatMulDesc d{};
  d.input_format = uint32_t(c.t.input);
  d.input_interp = uint32_t(c.t.interp);
  d.input_packed = c.t.packed;
  d.matrix_format = uint32_t(c.t.matrix);
  d.bias_format = uint32_t(c.t.bias);
  d.result_format = uint32_t(c.t.result);
  d.m = c.m;
  d.k = c.k;
  d.layout = uint32_t(c.layout);
  d.transpose = c.transpose;
  d.has_bias = c.bias;
  d.saturate = c.t.saturate;
  REQUIRE(coopvec_matmul_error(d) == nullptr);
  const size_t e = format_size(c.t.matrix);
  const uint32_t srows = c.transpose ? c.k : c.m, scols = c.transpose ? c.m : c.k;
  const size_t stride = (c.layout == ML::RowMajor ? scols : srows) * e + c.stride_pad;
  INFO("combo " << format_name(c.t.input) << (c.t.packed ? " packed" : "") << " as " << format_name(c.t.interp)
                << " x " << format_name(c.t.matrix) << " -> " << format_name(c.t.result) << (c.t.saturate ? " sat" : "")
                << " m " << c.m << " k " << c.k << " lanes " << c.lanes << " layout " << int(c.layout) << " transpose "
                << c.transpose << " bias " << c.bias << " stride " << stride << " robust cut " << c.robust_cut);

  std::vector<double> a(size_t(c.m) * c.k);
  for (double& v : a) v = sample(c.t.matrix, rng);
  MatrixDesc sd{srows, scols, c.t.matrix, c.layout, stride};
  std::vector<uint8_t> stored(layout_required_size(sd), 0x5A);
  if (c.layout != ML::RowMajor && c.layout != ML::ColumnMajor) std::fill(stored.begin(), stored.end(), 0);
  for (uint32_t i = 0; i < c.m; ++i)
    for (uint32_t j = 0; j < c.k; ++j)
      put(stored, offset_of(c.layout, scols, e, stride, c.transpose ? j : i, c.transpose ? i : j), c.t.matrix,
          a[size_t(i) * c.k + j]);
  std::vector<double> bias(c.m);
  std::vector<uint8_t> bias_bytes(size_t(c.m) * 4);
  for (uint32_t i = 0; i < c.m; ++i) {
    bias[i] = c.bias ? sample(c.t.bias, rng) : 0;
    if (c.t.saturate && i % 2 == 0) bias[i] = (i % 4 == 0 ? 1 : -1) * 2147483000.0;  // sums past the range
    put(bias_bytes, i * format_size(c.t.bias), c.t.bias, bias[i]);
  }
  // The inputs, component-major: component j of lane l at j * ld + l (packed: 4 values a
  // component); xi is what each value reads as after the interpretation.
  const uint32_t comps = c.t.packed ? (c.k + 3) / 4 : c.k;
  const size_t ld = c.lanes + c.ld_pad, ein = format_size(c.t.input), eout = format_size(c.t.result);
  std::vector<uint8_t> x_bytes(size_t(comps) * ld * ein, 0);
  std::vector<double> xi(size_t(c.k) * c.lanes);
  for (uint32_t j = 0; j < c.k; ++j)
    for (uint32_t l = 0; l < c.lanes; ++l) {
      double v;
      if (c.t.packed) {
        v = sample(NF::I8, rng);
        x_bytes[((j / 4) * ld + l) * 4 + j % 4] = uint8_t(int8_t(v));
      } else if (c.t.input == NF::F32 && c.t.interp == NF::I8) {
        const double raw = sample_f32_as_s8(rng);
        put(x_bytes, (j * ld + l) * ein, c.t.input, raw);
        v = to_s8(raw);
      } else {
        v = sample(c.t.interp, rng);
        put(x_bytes, (j * ld + l) * ein, c.t.input, v);
      }
      xi[size_t(j) * c.lanes + l] = v;
    }
  const uint8_t* lo = c.robust_cut || c.robust_whole ? stored.data() : nullptr;
  const uint8_t* hi = c.robust_cut ? stored.data() + stored.size() - 1
                      : c.robust_whole ? stored.data() + stored.size() : nullptr;
  std::vector<uint8_t> y(size_t(c.m) * ld * eout, 0xEE);
  const CoopVecMatMulArgs args{stored.data(), int64_t(stride), x_bytes.data(), int64_t(ld * ein), bias_bytes.data(),
                               y.data(), int64_t(ld * eout), lo, hi, nullptr, nullptr};
  coopvec_matmul_lanes(d, args, c.lanes);

  for (uint32_t l = 0; l < ld; ++l) {
    std::vector<uint8_t> lane(size_t(c.m) * eout, 0xEE);
    if (l < c.lanes) {  // the per-lane kernel on this lane
      CoopVecMatMulArgs one = args;
      one.input += l * (c.t.packed ? 4 : ein);
      one.result = lane.data();
      one.result_stride = int64_t(eout);
      coopvec_matmul(d, one);
    }
    for (uint32_t i = 0; i < c.m; ++i) {
      uint32_t got = 0, per_lane = 0;
      std::memcpy(&got, y.data() + (i * ld + l) * eout, eout);
      std::memcpy(&per_lane, lane.data() + i * eout, eout);
      if (l >= c.lanes) {  // past the lanes: untouched
        REQUIRE(got == (eout == 2 ? 0xEEEEu : 0xEEEEEEEEu));
        continue;
      }
      double sum = bias[i];
      for (uint32_t j = 0; j < c.k; ++j) {
        const bool cut = c.robust_cut && offset_of(c.layout, scols, e, stride, c.transpose ? j : i, c.transpose ? i : j) + e >
                                             stored.size() - 1;
        if (!cut) sum += a[size_t(i) * c.k + j] * xi[size_t(j) * c.lanes + l];
      }
      uint32_t want;
      if (format_is_float(c.t.result)) {
        want = encode(c.t.result, sum);  // exact in f32: one rounding
      } else if (c.t.saturate) {
        const double lo32 = c.t.result == NF::I32 ? -2147483648.0 : 0, hi32 = c.t.result == NF::I32 ? 2147483647.0 : 4294967295.0;
        want = uint32_t(uint64_t(int64_t(std::clamp(sum, lo32, hi32))));
      } else {
        want = uint32_t(uint64_t(int64_t(sum)));
      }
      INFO("row " << i << " lane " << l << " exact " << sum);
      REQUIRE(got == want);
      REQUIRE(per_lane == want);
    }
  }
}

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
            const bool bias = t.saturate || (s.m + n) % 2 == 0;
            const bool cut = (s.k + n) % 5 == 0;  // now and then, robust bounds short of the end
            const bool whole = !cut && n == 7;
            run_case({t, s.m, s.k, n, layout, transpose, bias, optimal ? 0u : size_t(16 * (n % 2)), n % 3, cut, whole}, rng);
            ++cases;
          }
      }
    }
  return cases;
}

}  // namespace

TEST_CASE("batched cooperative-vector products match an exact sum and the per-lane kernel") {
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

TEST_CASE("a cache token reuses the prepared matrix and nothing else") {
  // f32, 16 x 8, row-major, 8 lanes: y = A x with A all `a` and x all ones gives 8 * a.
  CoopVecMatMulDesc d{uint32_t(NF::F32), uint32_t(NF::F32), 0, uint32_t(NF::F32), uint32_t(NF::F32),
                      uint32_t(NF::F32), 16, 8, uint32_t(ML::RowMajor), 0, 0, 0};
  int64_t stride = 8 * 4;
  std::vector<float> a(16 * 8, 1.0f), b(16 * 8, 5.0f), x(8 * 8, 1.0f), y(16 * 8);
  auto run_on = [&](const std::vector<float>& m, uint64_t token) {
    const CoopVecMatMulArgs args{reinterpret_cast<const uint8_t*>(m.data()), stride, reinterpret_cast<const uint8_t*>(x.data()),
                                 8 * 4, nullptr, reinterpret_cast<uint8_t*>(y.data()), 8 * 4, nullptr, nullptr, nullptr, nullptr};
    coopvec_matmul_lanes(d, args, 8, token);
    return y[0];
  };
  auto run = [&](uint64_t token) { return run_on(a, token); };
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
  d.layout = uint32_t(ML::ColumnMajor);
  stride = 16 * 4;
  CHECK(run(8) == 24.0f);
  // Several matrices under one token (the layers of a network) are all kept.
  d.layout = uint32_t(ML::RowMajor);
  stride = 8 * 4;
  CHECK(run(9) == 24.0f);
  CHECK(run_on(b, 9) == 40.0f);
  std::fill(a.begin(), a.end(), 1.0f);
  std::fill(b.begin(), b.end(), 1.0f);
  CHECK(run(9) == 24.0f);
  CHECK(run_on(b, 9) == 40.0f);
}
