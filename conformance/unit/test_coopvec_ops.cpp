// kernels/coopvec_ops.h against a scalar reference written here: a naive double-precision
// multiply on the logical matrix (before it is laid out), for every layout, transpose,
// packed and unpacked inputs, bias, saturation and robust bounds; and the training
// accumulations. Values are small integers, so every result is exact and compared
// bit for bit (coopvec_ops.h states the rounding; these cases never round).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "coopvec_test_matrix.h"
#include "coopvk/kernels/coopvec_ops.h"
#include "coopvk/kernels/transpose.h"
#include "matrix_reference.h"

using namespace coopvk;
using namespace coopvk::test;
using kernels::MatrixLayout;
using NF = kernels::NumberFormat;

namespace {

struct Combo {
  NF input, interp, matrix, bias, result;
  bool packed, saturate;
};

}  // namespace

TEST_CASE("coopvec_matmul matches the scalar reference") {
  const Combo c = GENERATE(Combo{NF::F16, NF::F16, NF::F16, NF::F16, NF::F16, false, false},
                           Combo{NF::F32, NF::F32, NF::F32, NF::F32, NF::F32, false, false},
                           Combo{NF::F16, NF::E4M3, NF::E4M3, NF::F16, NF::F32, false, false},
                           Combo{NF::F16, NF::E5M2, NF::E5M2, NF::F32, NF::F16, false, false},
                           Combo{NF::U32, NF::I8, NF::I8, NF::I32, NF::I32, true, false},
                           Combo{NF::U32, NF::U8, NF::U8, NF::U32, NF::U32, true, true},
                           Combo{NF::I16, NF::I8, NF::I8, NF::I32, NF::I32, false, true},
                           Combo{NF::F32, NF::U8, NF::U8, NF::U32, NF::U32, false, false});
  const int layout = GENERATE(0, 1, 2, 3);
  const bool transpose = GENERATE(false, true);
  const bool fp8 = c.matrix == NF::E4M3 || c.matrix == NF::E5M2;
  if ((transpose || fp8) && layout < 2) return;
  const uint32_t M = GENERATE(1u, 5u, 17u), K = GENERATE(1u, 6u, 33u);
  CAPTURE(int(c.input), int(c.interp), int(c.matrix), layout, transpose, M, K);
  std::mt19937 rng(M * 100 + K + layout);
  const bool int_res = !kernels::format_is_float(c.result);
  const int lo = int_res ? (c.interp == NF::U8 ? 0 : -128) : -4, hi = int_res ? (c.interp == NF::U8 ? 255 : 127) : 4;
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<double> a(size_t(M) * K), x(K), xi(K), bias(M);
  for (double& v : a) v = dist(rng);
  for (uint32_t k = 0; k < K; ++k) {
    // Integer inputs beyond the interpretation's range saturate (int -> int), float ones
    // round to nearest even first.
    x[k] = c.input == NF::I16 ? dist(rng) * 3 : c.input == NF::F32 && int_res ? dist(rng) * 1.5 + 0.5 : dist(rng);
    double r = c.input == NF::F32 && int_res ? std::nearbyint(x[k]) : x[k];
    xi[k] = int_res ? std::min(std::max(r, int_lo(c.interp)), int_hi(c.interp)) : r;
  }
  for (double& v : bias) v = int_res ? double(int64_t(rng() % 4000000000u) - 2000000000) : dist(rng);
  if (c.bias == NF::U32)
    for (double& v : bias) v = std::abs(v);
  StoredMatrix s = store_matrix(a, M, K, c.matrix, MatrixLayout(layout), transpose);
  // The input as its components, 8 bytes apart (a component stride other than the size).
  const size_t isz = c.packed ? 1 : kernels::format_size(c.input);
  std::vector<uint8_t> in(size_t(K) * 8 + 8);
  for (uint32_t k = 0; k < K; ++k) {
    uint64_t bits = c.packed ? encode(c.interp, x[k]) : encode(c.input, x[k]);
    std::memcpy(in.data() + (c.packed ? (k / 4) * 8 + k % 4 : k * 8), &bits, isz);
  }
  std::vector<uint8_t> bias_b(M * 4), out(M * 4 + 4, 0xCD);
  for (uint32_t m = 0; m < M; ++m) put(bias_b, m, c.bias, bias[m]);
  kernels::CoopVecMatMulDesc d{uint32_t(c.input), uint32_t(c.interp), c.packed, uint32_t(c.matrix), uint32_t(c.bias),
                               uint32_t(c.result), M, K, uint32_t(layout), transpose, 1, c.saturate};
  REQUIRE(kernels::coopvec_matmul_error(d) == nullptr);
  // Robust bounds that cut the matrix's last element off (it then reads zero).
  const bool cut = layout == 0 && !transpose;
  const size_t last = size_t(M - 1) * s.stride + size_t(K - 1) * kernels::format_size(c.matrix);
  kernels::CoopVecMatMulArgs args{s.bytes.data(), int64_t(s.stride), in.data(), 8, bias_b.data(), out.data(),
                                  int64_t(kernels::format_size(c.result)), cut ? s.bytes.data() : nullptr, cut ? s.bytes.data() + last : nullptr,
                                  nullptr, nullptr};
  kernels::coopvec_matmul(d, args);
  for (uint32_t m = 0; m < M; ++m) {
    double exact = bias[m];
    for (uint32_t k = 0; k < K; ++k)
      if (!(cut && m == M - 1 && k == K - 1)) exact += a[size_t(m) * K + k] * xi[k];
    CAPTURE(m, exact);
    REQUIRE(get_bits(out, m, c.result) == muladd_result(c.result, exact, c.saturate));
  }
}

TEST_CASE("coopvec_matmul rejects what it cannot do") {
  kernels::CoopVecMatMulDesc d{uint32_t(NF::F16), uint32_t(NF::F16), 0, uint32_t(NF::E4M3), uint32_t(NF::F16),
                               uint32_t(NF::F16), 4, 4, 0, 0, 1, 0};
  REQUIRE(kernels::coopvec_matmul_error(d) != nullptr);  // fp8 row-major
  d.matrix_format = uint32_t(NF::F16);
  REQUIRE(kernels::coopvec_matmul_error(d) == nullptr);
  d.transpose = 1;
  REQUIRE(kernels::coopvec_matmul_error(d) != nullptr);  // transposed row-major
  d.transpose = 0;
  d.layout = 4;
  REQUIRE(kernels::coopvec_matmul_error(d) != nullptr);
  d.layout = 2;
  d.result_format = uint32_t(NF::I32);
  REQUIRE(kernels::coopvec_matmul_error(d) != nullptr);  // float matrix, integer result
}

TEST_CASE("coopvec training accumulations match the scalar reference") {
  const NF mf = GENERATE(NF::F16, NF::F32);
  const int layout = GENERATE(0, 1, 2, 3);
  const uint32_t M = 9, N = 5;
  std::vector<double> init(M * N), a(M), b(N);
  std::mt19937 rng(layout);
  std::uniform_int_distribution<int> dist(-4, 4);
  for (double& v : init) v = dist(rng);
  for (double& v : a) v = dist(rng);
  for (double& v : b) v = dist(rng);
  StoredMatrix s = store_matrix(init, M, N, mf, MatrixLayout(layout), false);
  std::vector<uint8_t> ab((M + N) * 2);
  for (uint32_t k = 0; k < M + N; ++k) put(ab, k, NF::F16, k < M ? a[k] : b[k - M]);
  kernels::CoopVecOuterDesc d{uint32_t(NF::F16), uint32_t(mf), M, N, uint32_t(layout), 0};
  REQUIRE(kernels::coopvec_outer_error(d) == nullptr);
  kernels::CoopVecOuterArgs args{s.bytes.data(), int64_t(s.stride), ab.data(), 2, ab.data() + M * 2, 2, nullptr, nullptr};
  kernels::coopvec_outer_product_accumulate(d, args);
  kernels::coopvec_outer_product_accumulate(d, args);
  std::vector<double> want = init;
  for (uint32_t r = 0; r < M; ++r)
    for (uint32_t c = 0; c < N; ++c) want[r * N + c] += 2 * a[r] * b[c];
  REQUIRE(s.bytes == store_matrix(want, M, N, mf, MatrixLayout(layout), false).bytes);

  // memory[k] += v[k]; the bound range ends before the last element, whose add is dropped.
  std::vector<uint8_t> sum(M * 4 + 4, 0), vb(M * 4);
  for (uint32_t k = 0; k < M; ++k) put(vb, k, mf, a[k]);
  const size_t esz = kernels::format_size(mf);
  kernels::CoopVecReduceArgs ra{sum.data(), vb.data(), int64_t(esz), sum.data(), sum.data() + (M - 1) * esz};
  kernels::coopvec_reduce_sum_accumulate(mf, M, ra);
  kernels::coopvec_reduce_sum_accumulate(mf, M, ra);
  for (uint32_t k = 0; k < M; ++k) REQUIRE(get(sum, k, mf) == (k + 1 < M ? 2 * a[k] : 0.0));
}

TEST_CASE("coopvec accumulations are atomic across threads") {
  // Four threads add the same outer product (all ones) and vector into one matrix and
  // one array 200 times each: any lost update shows as a sum below 800 (exact in f16).
  const NF mf = GENERATE(NF::F16, NF::F32);
  const uint32_t M = 16, N = 8, kThreads = 4, kRounds = 200;
  std::vector<double> zero(M * N, 0.0);
  StoredMatrix s = store_matrix(zero, M, N, mf, MatrixLayout::TrainingOptimal, false);
  std::vector<uint8_t> ones((M + N) * 2), sum(M * 4, 0), vb(M * 4);
  for (uint32_t k = 0; k < M + N; ++k) put(ones, k, NF::F16, 1.0);
  for (uint32_t k = 0; k < M; ++k) put(vb, k, mf, 1.0);
  kernels::CoopVecOuterDesc d{uint32_t(NF::F16), uint32_t(mf), M, N, uint32_t(MatrixLayout::TrainingOptimal), 0};
  kernels::CoopVecOuterArgs oa{s.bytes.data(), 0, ones.data(), 2, ones.data() + M * 2, 2, nullptr, nullptr};
  kernels::CoopVecReduceArgs ra{sum.data(), vb.data(), int64_t(kernels::format_size(mf)), nullptr, nullptr};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (uint32_t r = 0; r < kRounds; ++r) {
        kernels::coopvec_outer_product_accumulate(d, oa);
        kernels::coopvec_reduce_sum_accumulate(mf, M, ra);
      }
    });
  for (auto& t : threads) t.join();
  std::vector<double> want(M * N, double(kThreads * kRounds));
  REQUIRE(s.bytes == store_matrix(want, M, N, mf, MatrixLayout::TrainingOptimal, false).bytes);
  for (uint32_t k = 0; k < M; ++k) REQUIRE(get(sum, k, mf) == double(kThreads * kRounds));
}

TEST_CASE("small transposes of every element size and stride sign") {
  const uint32_t esz = GENERATE(1u, 2u, 4u, 8u);
  const auto shape = GENERATE(std::pair<uint32_t, uint32_t>{1, 1}, std::pair<uint32_t, uint32_t>{32, 64},
                              std::pair<uint32_t, uint32_t>{17, 5}, std::pair<uint32_t, uint32_t>{3, 129});
  const bool reversed = GENERATE(false, true);
  const uint32_t rows = shape.first, cols = shape.second;
  CAPTURE(esz, rows, cols, reversed);
  // Source rows padded by 3 elements, destination rows by 1; a reversed source walks its
  // rows from the last (a negative stride).
  const int64_t ss = int64_t(cols + 3) * esz, ds = int64_t(rows + 1) * esz;
  std::vector<uint8_t> src(size_t(ss) * rows), dst(size_t(ds) * cols, 0xCD);
  for (size_t k = 0; k < src.size(); ++k) src[k] = uint8_t(k * 37 + 11);
  const uint8_t* s0 = reversed ? src.data() + ss * (rows - 1) : src.data();
  kernels::transpose_elements(s0, reversed ? -ss : ss, dst.data(), ds, rows, cols, esz);
  for (uint32_t c = 0; c < cols; ++c)
    for (uint32_t r = 0; r < rows; ++r) {
      CAPTURE(r, c);
      const uint8_t* want = s0 + (reversed ? -ss : ss) * r + int64_t(c) * esz;
      REQUIRE(std::memcmp(dst.data() + ds * c + int64_t(r) * esz, want, esz) == 0);
    }
  for (uint32_t c = 0; c < cols; ++c)  // the destination's padding is left alone
    for (uint32_t b = 0; b < esz; ++b) REQUIRE(dst[size_t(ds) * c + size_t(rows) * esz + b] == 0xCD);
}
