// The training operations of VK_NV_cooperative_vector through the loader:
// OpCooperativeVectorOuterProductAccumulateNV and OpCooperativeVectorReduceSumAccumulateNV
// (coopvec_training_f16/f32.comp: every active invocation adds a(i) b(i)^T into one matrix
// and a(i) into one array, so the atomic adds race), into float16 and float32 matrices
// (cooperativeVectorTrainingFloat16/32Accumulation), training-optimal as the spec requires
// of the outer product (VUID-RuntimeSpirv-OpCooperativeVectorOuterProductAccumulateNV-10093)
// and row-major; the training-optimal matrix goes in and comes back through
// vkConvertCooperativeVectorMatrixNV.
//
// References: with integer values in [-3, 3] every partial sum (|sum| <= 3 + 48 * 9) is an
// integer f16 holds exactly, so whatever the order of the adds the result is the exact
// sum, compared bit for bit. With fractional values the order matters: each add rounds
// once to the element format (kernels/coopvec_ops.h), so after n adds the error is at
// most n half-ulps of the largest partial sum, the bound the fractional case checks.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "coopvec_test_env.h"

using namespace coopvk::test;
using NF = NumberFormat;

namespace {

constexpr uint32_t kLocal = 16, kGroups = 3, kInvocations = kLocal * kGroups;  // training_body.glsl
bool active(uint32_t i) { return i % 7 != 5; }

using Layout = VkCooperativeVectorMatrixLayoutNV;

VkComponentTypeKHR vk_type(NF f) { return f == NF::F16 ? VK_COMPONENT_TYPE_FLOAT16_KHR : VK_COMPONENT_TYPE_FLOAT32_KHR; }

// values (M x N, row-major) as a matrix of format f in `layout`: row-major with a padded
// stride written here, training-optimal converted by the driver from f32 row-major.
std::vector<uint8_t> to_layout(const Device& dev, const std::vector<double>& values, uint32_t M, uint32_t N, NF f,
                               Layout layout, uint32_t stride) {
  const size_t esz = coopvk::kernels::format_size(f);
  if (layout == VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV) {
    std::vector<uint8_t> out(round_up(size_t(M) * stride, 64), 0);
    for (uint32_t r = 0; r < M; ++r)
      for (uint32_t c = 0; c < N; ++c) put(out, (size_t(r) * stride + c * esz) / esz, f, values[size_t(r) * N + c]);
    return out;
  }
  std::vector<uint8_t> src(values.size() * 4);
  for (size_t k = 0; k < values.size(); ++k) put(src, k, NF::F32, values[k]);
  auto info = convert_info(M, N, VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV, N * 4,
                           vk_type(f), layout, 0);
  size_t size = 0;
  info.srcSize = src.size();
  info.srcData.hostAddress = src.data();
  info.pDstSize = &size;
  REQUIRE(host_convert(dev)(dev.device, &info) == VK_SUCCESS);
  std::vector<uint8_t> out(round_up(size, 64), 0);
  info.dstData.hostAddress = out.data();
  REQUIRE(host_convert(dev)(dev.device, &info) == VK_SUCCESS);
  return out;
}

// The matrix back as doubles (M x N, row-major).
std::vector<double> from_layout(const Device& dev, const std::vector<uint8_t>& bytes, uint32_t M, uint32_t N, NF f,
                                Layout layout, uint32_t stride) {
  const size_t esz = coopvk::kernels::format_size(f);
  std::vector<double> v(size_t(M) * N);
  if (layout == VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV) {
    for (uint32_t r = 0; r < M; ++r)
      for (uint32_t c = 0; c < N; ++c) v[size_t(r) * N + c] = get(bytes, (size_t(r) * stride + c * esz) / esz, f);
    return v;
  }
  std::vector<uint8_t> dst(v.size() * 4);
  auto info = convert_info(M, N, vk_type(f), layout, 0, VK_COMPONENT_TYPE_FLOAT32_KHR,
                           VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV, N * 4);
  size_t size = dst.size();
  info.srcSize = bytes.size();
  info.srcData.hostAddress = bytes.data();
  info.dstData.hostAddress = dst.data();
  info.pDstSize = &size;
  REQUIRE(host_convert(dev)(dev.device, &info) == VK_SUCCESS);
  for (size_t k = 0; k < v.size(); ++k) v[k] = get(dst, k, NF::F32);
  return v;
}

// Half an ulp of the format at magnitudes up to |v| (at least the subnormal spacing's).
double half_ulp(NF f, double v) {
  const int mant = f == NF::F16 ? 10 : 23, min_exp = f == NF::F16 ? -14 : -126;
  return std::ldexp(1.0, std::max(std::ilogb(std::max(std::abs(v), 1e-30)), min_exp) - mant - 1);
}

void run_training(Device& dev, NF f, uint32_t M, uint32_t N, Layout layout, bool fractional) {
  INFO((f == NF::F16 ? "f16" : "f32") << " M " << M << " N " << N << " layout " << layout
                                      << (fractional ? " fractional" : " integer"));
  std::mt19937 rng(M * 31 + N + layout + fractional);
  std::uniform_int_distribution<int> dist(-3, 3);
  std::uniform_real_distribution<double> frac(-1.0, 1.0);
  auto value = [&] {
    // Fractional values on a 2^-8 grid: exact in f16, so the inputs carry no rounding.
    return fractional ? std::ldexp(std::round(std::ldexp(frac(rng), 8)), -8) : double(dist(rng));
  };
  std::vector<uint8_t> in(kInvocations * (M + N) * 2);
  std::vector<double> v(kInvocations * (M + N));
  for (size_t k = 0; k < v.size(); ++k) put(in, k, NF::F16, v[k] = value());
  // magnitude: the initial value's plus every addend's, a bound on any partial sum in
  // any order of the adds.
  std::vector<double> want(size_t(M) * N), sum_want(M), magnitude(size_t(M) * N), sum_magnitude(M);
  for (size_t k = 0; k < want.size(); ++k) magnitude[k] = std::abs(want[k] = value());
  for (uint32_t j = 0; j < M; ++j) sum_magnitude[j] = std::abs(sum_want[j] = value());
  const uint32_t stride = uint32_t(round_up(N * coopvk::kernels::format_size(f), 16) + 16);
  std::vector<uint8_t> mat = to_layout(dev, want, M, N, f, layout, stride);
  std::vector<uint8_t> sum(round_up(M * 4, 16));
  for (uint32_t j = 0; j < M; ++j) put(sum, j, f, sum_want[j]);
  uint32_t adds = 0;
  for (uint32_t i = 0; i < kInvocations; ++i) {
    if (!active(i)) continue;
    ++adds;
    const double* a = &v[i * (M + N)];
    for (uint32_t r = 0; r < M; ++r) {
      for (uint32_t c = 0; c < N; ++c) {
        want[size_t(r) * N + c] += a[r] * a[M + c];
        magnitude[size_t(r) * N + c] += std::abs(a[r] * a[M + c]);
      }
      sum_want[r] += a[r];
      sum_magnitude[r] += std::abs(a[r]);
    }
  }
  ComputeJob job;
  job.spirv = shader(f == NF::F16 ? "coopvec_training_f16" : "coopvec_training_f32");
  job.buffers = {&in, &mat, &sum};
  job.specialization = {spec(0, M), spec(1, N), spec(2, uint32_t(layout))};
  job.push = u32_bytes({stride});
  job.groups[0] = kGroups;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  const std::vector<double> got = from_layout(dev, mat, M, N, f, layout, stride);
  // Integers: exact. Fractions: each of the `adds` roundings is at most half an ulp of a
  // partial sum, which is at most the magnitude (doubled for the errors it carries).
  auto check = [&](double got_v, double want_v, double mag) {
    if (!fractional) REQUIRE(got_v == want_v);
    else REQUIRE(std::abs(got_v - want_v) <= adds * half_ulp(f, 2 * mag));
  };
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("element " << k << " want " << want[k] << " got " << got[k]);
    check(got[k], want[k], magnitude[k]);
  }
  for (uint32_t j = 0; j < M; ++j) {
    INFO("sum element " << j);
    check(get(sum, j, f), sum_want[j], sum_magnitude[j]);
  }
}

}  // namespace

TEST_CASE("cooperative vector outer products and reductions accumulate exactly into f16 and f32 matrices") {
  VectorDevice vd;
  Device dev(vd.opts);
  const auto lim = vector_limits(dev.inst.physical);
  REQUIRE(lim.cooperativeVectorTrainingFloat16Accumulation == VK_TRUE);
  REQUIRE(lim.cooperativeVectorTrainingFloat32Accumulation == VK_TRUE);
  const std::pair<uint32_t, uint32_t> shapes[] = {{1, 1}, {7, 64}, {129, 7}, {512, 3}};
  for (NF f : {NF::F16, NF::F32})
    for (const auto& s : shapes) run_training(dev, f, s.first, s.second, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_TRAINING_OPTIMAL_NV, false);
  run_training(dev, NF::F32, 7, 7, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV, false);
}

TEST_CASE("cooperative vector training accumulations of fractions stay within the rounding bound") {
  VectorDevice vd;
  Device dev(vd.opts);
  for (NF f : {NF::F16, NF::F32}) run_training(dev, f, 64, 7, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_TRAINING_OPTIMAL_NV, true);
}

TEST_CASE("without cooperativeVectorTraining a training shader fails pipeline creation") {
  VectorDevice vd(false);
  Device dev(vd.opts);
  std::vector<uint8_t> buf(4096);
  ComputeJob job;
  job.spirv = shader("coopvec_training_f32");
  job.buffers = {&buf, &buf, &buf};
  job.specialization = {spec(0, 8), spec(1, 8), spec(2, 3)};
  job.push = u32_bytes({0});
  CHECK(run_compute_job(dev, job) == VK_ERROR_UNKNOWN);
}
