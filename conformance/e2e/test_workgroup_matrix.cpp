// VK_NV_cooperative_matrix2's workgroup scope and flexible dimensions through the loader:
// the features, the flexible-dimensions query (workgroup entries for every power-of-two
// workgroup from the subgroup size to cooperativeMatrixWorkgroupScopeMaxWorkgroupSize), and
// wg_matrix.comp at every workgroup size and at each subgroup size the device allows
// (one subgroup, up to 32 of them sharing the matrices): a K loop of multiply-adds, row-
// and column-major stores, a per-element callback with coordinates, Row / Column / 2x2
// reductions, a transpose, the per-invocation view, and a subgroup-scope matrix in the
// same shader. Each result is compared exactly with a scalar reference computed here
// (small integer inputs: every sum is exact in f32). Then a subgroup-scope multiply-add
// of a multiple of an entry's shape, and the shaders a device must refuse.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compute_job.h"
#include "coopmat_test_env.h"
#include "coopvk/kernels/number_formats.h"
#include "e2e_shader_env.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

// Cooperative matrices with VK_NV_cooperative_matrix2's workgroup scope, flexible
// dimensions, reductions, conversions and per-element operations (what wg_matrix uses).
struct WgDevice : Nv2MatrixDevice {
  explicit WgDevice(bool workgroup_scope = true, bool flexible = true) {
    nv2.cooperativeMatrixWorkgroupScope = workgroup_scope ? VK_TRUE : VK_FALSE;
    nv2.cooperativeMatrixFlexibleDimensions = flexible ? VK_TRUE : VK_FALSE;
    nv2.cooperativeMatrixReductions = nv2.cooperativeMatrixConversions = VK_TRUE;
    nv2.cooperativeMatrixPerElementOperations = VK_TRUE;
  }
};

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
std::vector<uint8_t> f16_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t h = coopvk::kernels::f32_to_f16(v[i]);
    std::memcpy(&b[2 * i], &h, 2);
  }
  return b;
}
float f32_at(const std::vector<uint8_t>& b, size_t i) {
  float f;
  std::memcpy(&f, &b[4 * i], 4);
  return f;
}
std::vector<float> small_ints(std::mt19937& rng, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = float(d(rng));
  return v;
}

// Runs wg_matrix with W invocations at subgroup size sg (0: the default, `width` lanes)
// on M x N x K, and checks every output.
void check_wg_matrix(Device& dev, uint32_t W, uint32_t sg, uint32_t width, uint32_t M, uint32_t N, uint32_t K) {
  INFO("workgroup " << W << ", subgroup size " << width << ", M " << M << " N " << N << " K " << K);
  const uint32_t S = W / width;
  std::mt19937 rng(W * 131 + width * 17 + M * 7 + N * 3 + K);
  std::vector<float> a = small_ints(rng, M * K, -3, 3), b = small_ints(rng, K * N, -3, 3), c = small_ints(rng, M * N, -9, 9),
                     x = small_ints(rng, S * 256, -50, 50);
  std::vector<uint8_t> A = f16_bytes(a), Bm = f16_bytes(b), Cm = bytes_of(c), X = bytes_of(x);
  auto out = [](size_t floats) { return std::vector<uint8_t>(floats * 4, 0xCD); };
  std::vector<uint8_t> D = out(M * N), Dc = out(M * N), E = out(M * N), Rs = out(M * N), Cx = out(M * N),
                       Q = out(M * N / 4), T = out(M * N), Sc = out(M * N), Y = out(S * 256), L = out(W);
  ComputeJob job;
  job.spirv = shader("wg_matrix");
  job.specialization = {spec(0, W), spec(1, M), spec(2, N), spec(3, K)};
  job.required_subgroup_size = sg;
  job.full_subgroups = sg != 0;
  job.buffers = {&A, &Bm, &Cm, &D, &Dc, &E, &Rs, &Cx, &Q, &T, &Sc, &X, &Y, &L};
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);

  std::vector<double> d(M * N);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      double s = c[i * N + j];
      for (uint32_t k = 0; k < K; ++k) s += double(a[i * K + k]) * b[k * N + j];
      d[i * N + j] = s;
    }
  uint32_t bad = 0;
  auto expect = [&](const char* what, const std::vector<uint8_t>& buf, size_t i, double want) {
    if (f32_at(buf, i) == float(want)) return;
    if (bad++ < 8) UNSCOPED_INFO(what << "[" << i << "] = " << f32_at(buf, i) << ", expected " << want);
  };
  for (uint32_t i = 0; i < M; ++i) {
    double row_sum = 0;
    for (uint32_t j = 0; j < N; ++j) row_sum += d[i * N + j];
    for (uint32_t j = 0; j < N; ++j) {
      const double v = d[i * N + j];
      double col_max = d[j];
      for (uint32_t r = 0; r < M; ++r) col_max = std::max(col_max, d[r * N + j]);
      expect("D", D, i * N + j, v);
      expect("D column-major", Dc, j * M + i, v);
      expect("per-element", E, i * N + j, 2 * v + i * 1000.0 + j);
      expect("row sum", Rs, i * N + j, row_sum);
      expect("column max", Cx, i * N + j, col_max);
      expect("transpose", T, j * M + i, v);
      expect("components scaled", Sc, i * N + j, 3 * v);
    }
  }
  for (uint32_t i = 0; i < M / 2; ++i)
    for (uint32_t j = 0; j < N / 2; ++j) {
      const uint32_t r = 2 * i, k = 2 * j;
      expect("2x2 sum", Q, i * (N / 2) + j, d[r * N + k] + d[(r + 1) * N + k] + d[r * N + k + 1] + d[(r + 1) * N + k + 1]);
    }
  for (uint32_t i = 0; i < S * 256; ++i) expect("subgroup scope", Y, i, 2.0 * x[i]);
  CHECK(bad == 0);
  // Every invocation has as many components, and together they cover the matrix (the
  // scaled store shows each element was scaled exactly once).
  uint32_t len0;
  std::memcpy(&len0, L.data(), 4);
  for (uint32_t i = 0; i < W; ++i) {
    uint32_t li;
    std::memcpy(&li, &L[4 * i], 4);
    CHECK(li == len0);
  }
  CHECK(uint64_t(len0) * W >= uint64_t(M) * N);
}

std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> flexible_properties(const Instance& inst) {
  auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV>(
      vkGetInstanceProcAddr(inst.instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
  REQUIRE(fn);
  uint32_t n = 0;
  REQUIRE(fn(inst.physical, &n, nullptr) == VK_SUCCESS);
  std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> p(
      n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV});
  REQUIRE(fn(inst.physical, &n, p.data()) == VK_SUCCESS);
  p.resize(n);
  return p;
}

}  // namespace

TEST_CASE("VK_NV_cooperative_matrix2 lists workgroup scope and flexible dimensions, with their limits") {
  Instance inst;
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV nv2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &nv2};
  vkGetPhysicalDeviceFeatures2(inst.physical, &f2);
  CHECK(nv2.cooperativeMatrixWorkgroupScope == VK_TRUE);
  CHECK(nv2.cooperativeMatrixFlexibleDimensions == VK_TRUE);
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
  VkPhysicalDeviceSubgroupProperties sp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &p2};
  VkPhysicalDeviceProperties2 pp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sp};
  vkGetPhysicalDeviceProperties2(inst.physical, &pp);
  // Required limits (chapter, "Required Limits"): at least subgroupSize x 2 and 256.
  CHECK(p2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize >= 2 * sp.subgroupSize);
  CHECK(p2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize >= 256);
  CHECK(p2.cooperativeMatrixFlexibleDimensionsMaxDimension >= 256);
  // Workgroup entries for every power of two from the largest subgroup size (so that each
  // is a multiple of any effective subgroup size, VUID-VkPipelineShaderStageCreateInfo-
  // module-10169) to the maximum, among them the combinations Properties2 must have (f16
  // into f16 and f32, u8 into u32, s8 into s32); subgroup entries with workgroupInvocations 0.
  const auto props = flexible_properties(inst);
  const uint32_t smallest = std::max(sp.subgroupSize, subgroup_sizes(inst.physical).maxSubgroupSize);
  auto has = [&](VkComponentTypeKHR ab, VkComponentTypeKHR cr, uint32_t inv) {
    for (const auto& p : props)
      if (p.scope == VK_SCOPE_WORKGROUP_KHR && p.AType == ab && p.BType == ab && p.CType == cr && p.ResultType == cr &&
          p.workgroupInvocations == inv && !p.saturatingAccumulation)
        return true;
    return false;
  };
  for (uint32_t inv = smallest; inv <= p2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize; inv *= 2) {
    INFO("workgroup of " << inv);
    CHECK(has(VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR, inv));
    CHECK(has(VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR, inv));
    CHECK(has(VK_COMPONENT_TYPE_UINT8_KHR, VK_COMPONENT_TYPE_UINT32_KHR, inv));
    CHECK(has(VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT32_KHR, inv));
    CHECK(has(VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR, inv));
  }
  for (const auto& p : props) {
    if (p.scope == VK_SCOPE_SUBGROUP_KHR) CHECK(p.workgroupInvocations == 0);
    if (p.scope == VK_SCOPE_WORKGROUP_KHR) {
      CHECK(p.workgroupInvocations >= smallest);
      CHECK(p.workgroupInvocations <= p2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize);
    }
  }
}

TEST_CASE("workgroup-scope matrices at every workgroup and subgroup size match a scalar reference") {
  WgDevice wd;
  Device dev(wd.md.opts);
  const auto sc = subgroup_sizes(dev.inst.physical);
  VkPhysicalDeviceSubgroupProperties sp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 pp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sp};
  vkGetPhysicalDeviceProperties2(dev.inst.physical, &pp);
  struct Shape {
    uint32_t m, n, k;
  };
  const Shape shapes[] = {{32, 32, 16}, {64, 32, 48}, {32, 64, 32}};
  SECTION("the default subgroup size") {
    for (uint32_t W = sp.subgroupSize; W <= 256; W *= 2)
      for (const Shape& s : shapes) check_wg_matrix(dev, W, 0, sp.subgroupSize, s.m, s.n, s.k);
  }
  SECTION("every required subgroup size: up to 32 subgroups a workgroup, rows past a matrix's end in the last ones") {
    for (uint32_t sg = sc.minSubgroupSize; sg <= sc.maxSubgroupSize; sg *= 2)
      for (uint32_t W : {sg, std::min(256u, sg * 4), 256u})
        if (W >= sg && W <= 256) check_wg_matrix(dev, W, sg, sg, 32, 32, 16);
  }
}

TEST_CASE("flexible dimensions: a subgroup-scope multiply-add of a multiple of an entry's shape") {
  auto run = [](Device& dev, uint32_t M, uint32_t N, uint32_t K, std::vector<uint8_t>* out) {
    std::mt19937 rng(M + N + K);
    std::vector<float> a = small_ints(rng, M * K, -3, 3), b = small_ints(rng, K * N, -3, 3), c = small_ints(rng, M * N, -9, 9);
    std::vector<uint8_t> A = f16_bytes(a), Bm = f16_bytes(b), Cm = bytes_of(c);
    out->assign(M * N * 4, 0xCD);
    ComputeJob job;
    job.spirv = shader("sg_flexible");
    VkPhysicalDeviceSubgroupProperties sp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 pp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sp};
    vkGetPhysicalDeviceProperties2(dev.inst.physical, &pp);
    job.specialization = {spec(0, sp.subgroupSize), spec(1, M), spec(2, N), spec(3, K)};
    job.buffers = {&A, &Bm, &Cm, out};
    VkResult r = run_compute_job(dev, job);
    if (r != VK_SUCCESS) return r;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double s = c[i * N + j];
        for (uint32_t k = 0; k < K; ++k) s += double(a[i * K + k]) * b[k * N + j];
        bad += f32_at(*out, i * N + j) != float(s);
      }
    CHECK(bad == 0);
    return r;
  };
  std::vector<uint8_t> out;
  SECTION("with the feature, 32x48x64 and 48x16x32 run") {
    WgDevice wd;
    Device dev(wd.md.opts);
    CHECK(run(dev, 32, 48, 64, &out) == VK_SUCCESS);
    CHECK(run(dev, 48, 16, 32, &out) == VK_SUCCESS);
  }
  SECTION("every dimension up to the largest the device reports") {
    WgDevice wd;
    Device dev(wd.md.opts);
    VkPhysicalDeviceCooperativeMatrix2PropertiesNV p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 pp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p2};
    vkGetPhysicalDeviceProperties2(dev.inst.physical, &pp);
    const uint32_t most = p2.cooperativeMatrixFlexibleDimensionsMaxDimension;
    REQUIRE(most >= 512);  // llama.cpp's coopmat2 path needs 512
    CHECK(run(dev, most, 16, 16, &out) == VK_SUCCESS);
    CHECK(run(dev, 16, most, 16, &out) == VK_SUCCESS);
    CHECK(run(dev, 16, 16, most, &out) == VK_SUCCESS);
    CHECK(run(dev, 64, most / 2, 32, &out) == VK_SUCCESS);
  }
  SECTION("without it, only a listed shape compiles") {
    WgDevice wd(false, false);
    Device dev(wd.md.opts);
    CHECK(run(dev, 16, 16, 16, &out) == VK_SUCCESS);
    CHECK(run(dev, 32, 48, 64, &out) != VK_SUCCESS);
  }
}

TEST_CASE("workgroup-scope shaders a device must refuse fail pipeline creation") {
  auto job_for = [](uint32_t W, uint32_t M) {
    ComputeJob job;
    job.spirv = shader("wg_matrix");
    job.specialization = {spec(0, W), spec(1, M), spec(2, 32), spec(3, 16)};
    return job;
  };
  std::vector<uint8_t> buf(1 << 16);
  auto bind_all = [&](ComputeJob& job) { job.buffers.assign(14, &buf); };
  SECTION("without cooperativeMatrixWorkgroupScope") {
    WgDevice wd(false, true);
    Device dev(wd.md.opts);
    ComputeJob job = job_for(64, 32);
    bind_all(job);
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
  WgDevice wd;
  Device dev(wd.md.opts);
  SECTION("a workgroup that is not a power of two, or larger than cooperativeMatrixWorkgroupScopeMaxWorkgroupSize") {
    for (uint32_t W : {96u, 512u}) {
      ComputeJob job = job_for(W, 32);
      bind_all(job);
      CHECK(run_compute_job(dev, job) != VK_SUCCESS);
    }
  }
  SECTION("a dimension that is not a multiple of a granularity") {
    ComputeJob job = job_for(64, 24);
    bind_all(job);
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
}
