// The legacy VK_NV_cooperative_matrix through the loader: the extension, its feature and
// property structs, vkGetPhysicalDeviceCooperativeMatrixPropertiesNV (the KHR list's
// entries it can express, with the two-call idiom); every NV entry multiplies correctly
// with B row- and column-major at every subgroup size, and the NV element-wise forms
// (add, sub, times scalar, constant matrices, per-component access through
// OpCooperativeMatrixLengthNV) and column-major stores give what a CPU reference computes;
// and the NV capability fails pipeline creation on a device that enabled only the KHR
// feature, as does an NV type of a size no entry lists; cooperativeMatrixRobustBufferAccess
// makes a tile past a bound range read zero.
// Inputs are small integers: float results are exact, integer results wrap (matrix_reference.h).
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "coopmat_test_env.h"

using namespace coopvk::test;

namespace {

// A device with VK_NV_cooperative_matrix's cooperativeMatrix (and, if `khr`, the KHR one).
struct NvMatrixDevice {
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR khr{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v11};
  DeviceOptions opts;
  NvMatrixDevice(bool with_nv, bool with_khr, bool robust = false) {
    nv.cooperativeMatrixRobustBufferAccess = robust ? VK_TRUE : VK_FALSE;
    f2.features.shaderInt16 = VK_TRUE;
    v11.storageBuffer16BitAccess = VK_TRUE;
    v12.storageBuffer8BitAccess = v12.shaderFloat16 = v12.shaderInt8 = v12.vulkanMemoryModel = VK_TRUE;
    v13.subgroupSizeControl = v13.computeFullSubgroups = VK_TRUE;
    const void** tail = const_cast<const void**>(&v13.pNext);
    if (with_nv) {
      nv.cooperativeMatrix = VK_TRUE;
      *tail = &nv;
      tail = const_cast<const void**>(&nv.pNext);
      opts.extensions.push_back("VK_NV_cooperative_matrix");
    }
    if (with_khr) {
      khr.cooperativeMatrix = VK_TRUE;
      *tail = &khr;
      opts.extensions.push_back("VK_KHR_cooperative_matrix");
    }
    opts.features_chain = &f2;
  }
};

std::vector<VkCooperativeMatrixPropertiesNV> nv_properties(const Instance& inst) {
  auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(inst.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  REQUIRE(fn);
  uint32_t n = 0;
  REQUIRE(fn(inst.physical, &n, nullptr) == VK_SUCCESS);
  std::vector<VkCooperativeMatrixPropertiesNV> p(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  REQUIRE(fn(inst.physical, &n, p.data()) == VK_SUCCESS);
  p.resize(n);
  return p;
}

struct NvCase {
  Format a, c;
  uint32_t m, n, k;
};

// D[t] = A[t] x B[t] + C[t] and E[t] = transpose(2 D[t] - C[t] + 1), tiles t of padded strides.
// c_tiles < 4: C's buffer holds only that many tiles, so (with cooperativeMatrixRobustBufferAccess)
// the later tiles read C as zero.
void run_nv_muladd(Device& dev, const NvCase& nc, uint32_t subgroup_size, bool b_colmajor, uint32_t c_tiles = 4) {
  const uint32_t M = nc.m, N = nc.n, K = nc.k, subgroups = 2, groups = 2, tiles = subgroups * groups;
  const uint32_t lda = K + 3, ldb = (b_colmajor ? K : N) + 5, ldc = N + 1, b_lines = b_colmajor ? N : K;
  const uint32_t ldd = std::max(M, N) + 2;  // D row-major (M rows), E column-major (N columns)
  const NumberFormat fa = nc.a.f, fc = nc.c.f;
  const size_t sa = coopvk::kernels::format_size(fa), sc = coopvk::kernels::format_size(fc);
  std::vector<uint8_t> A(tiles * M * lda * sa), Bm(tiles * b_lines * ldb * sa), C(tiles * M * ldc * sc),
      D(tiles * M * ldd * sc, 0xAB), E(tiles * N * ldd * sc, 0xAB);
  std::mt19937 rng(M * 131 + N * 17 + K + subgroup_size + (b_colmajor ? 7 : 0));
  const bool is_int = is_int_format(fa);
  std::uniform_int_distribution<int> dist(is_int ? int(std::max(-8.0, int_lo(fa))) : -4, is_int ? 8 : 4);
  std::vector<double> av(tiles * M * K), bv(tiles * K * N), cv(tiles * M * N);
  for (uint32_t t = 0; t < tiles; ++t) {
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t k = 0; k < K; ++k) put(A, (t * M + i) * lda + k, fa, av[(t * M + i) * K + k] = dist(rng));
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t j = 0; j < N; ++j)
        put(Bm, b_colmajor ? (t * N + j) * ldb + k : (t * K + k) * ldb + j, fa, bv[(t * K + k) * N + j] = dist(rng));
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) put(C, (t * M + i) * ldc + j, fc, cv[(t * M + i) * N + j] = dist(rng));
  }
  if (c_tiles < tiles) {
    C.resize(size_t(c_tiles) * M * ldc * sc);
    std::fill(cv.begin() + size_t(c_tiles) * M * N, cv.end(), 0.0);  // what a robust read gives
  }
  ComputeJob job;
  job.spirv = shader(std::string("nv_muladd_") + nc.a.tag + "_" + nc.c.tag);
  job.buffers = {&A, &Bm, &C, &D, &E};
  job.push = u32_bytes({lda, ldb, ldc, ldd});
  job.specialization = {spec(0, subgroups * subgroup_size), spec(1, M), spec(2, N), spec(3, K),
                        spec(4, b_colmajor ? 1 : 0)};
  job.required_subgroup_size = subgroup_size;
  job.full_subgroups = true;
  job.groups[0] = groups;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t t = 0; t < tiles; ++t)
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        const double c = cv[(t * M + i) * N + j];
        double exact = c;
        for (uint32_t k = 0; k < K; ++k) exact += av[(t * M + i) * K + k] * bv[(t * K + k) * N + j];
        INFO("tile " << t << " (" << i << ", " << j << ") exact " << exact);
        REQUIRE(get_bits(D, (t * M + i) * ldd + j, fc) == muladd_result(fc, exact, false));
        // Integer arithmetic wraps the same way at every step, so one wrap of the exact value.
        REQUIRE(get_bits(E, (t * N + j) * ldd + i, fc) == muladd_result(fc, 2 * exact - c + 1, false));
      }
  // Nothing past a row (D) or a column (E) is written.
  const std::vector<uint8_t> fill(8, 0xAB);
  for (uint32_t row = 0; row < tiles * M; ++row)
    for (uint32_t j = N; j < ldd; ++j) REQUIRE(get_bits(D, row * ldd + j, fc) == get_bits(fill, 0, fc));
  for (uint32_t col = 0; col < tiles * N; ++col)
    for (uint32_t i = M; i < ldd; ++i) REQUIRE(get_bits(E, col * ldd + i, fc) == get_bits(fill, 0, fc));
}

}  // namespace

TEST_CASE("VK_NV_cooperative_matrix is listed with its feature, property struct and query") {
  Instance inst;
  REQUIRE(device_extensions(inst.physical).count("VK_NV_cooperative_matrix"));
  VkPhysicalDeviceCooperativeMatrixFeaturesNV f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f};
  vkGetPhysicalDeviceFeatures2(inst.physical, &f2);
  CHECK(f.cooperativeMatrix == VK_TRUE);
  VkPhysicalDeviceCooperativeMatrixPropertiesNV p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p};
  vkGetPhysicalDeviceProperties2(inst.physical, &p2);
  CHECK((p.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0);

  const auto nv = nv_properties(inst);
  const auto khr = matrix_properties(inst);
  // Exactly the KHR subgroup entries without saturation whose types NV can name (no
  // bfloat16 / float8) and whose A/B and C/result agree in signedness (NV types carry it).
  std::vector<VkCooperativeMatrixPropertiesNV> want;
  for (const auto& k : khr) {
    Format a, b, c, r;
    if (k.saturatingAccumulation || !format_of(k.AType, &a) || !format_of(k.BType, &b) || !format_of(k.CType, &c) ||
        !format_of(k.ResultType, &r))
      continue;
    if (a.f == NumberFormat::BF16 || a.f == NumberFormat::E4M3 || a.f == NumberFormat::E5M2) continue;
    if (is_int_format(a.f) && is_signed_format(a.f) != is_signed_format(c.f)) continue;
    want.push_back({VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV, nullptr, k.MSize, k.NSize, k.KSize,
                    VkComponentTypeNV(k.AType), VkComponentTypeNV(k.BType), VkComponentTypeNV(k.CType),
                    VkComponentTypeNV(k.ResultType), VkScopeNV(k.scope)});
  }
  REQUIRE(nv.size() == want.size());
  REQUIRE(nv.size() >= 8);
  for (size_t i = 0; i < nv.size(); ++i) {
    INFO("entry " << i);
    CHECK(nv[i].MSize == want[i].MSize);
    CHECK(nv[i].NSize == want[i].NSize);
    CHECK(nv[i].KSize == want[i].KSize);
    CHECK(nv[i].AType == want[i].AType);
    CHECK(nv[i].BType == want[i].BType);
    CHECK(nv[i].CType == want[i].CType);
    CHECK(nv[i].DType == want[i].DType);
    CHECK(nv[i].scope == VK_SCOPE_SUBGROUP_NV);
  }
  // Two-call idiom: a short array is filled as far as it goes.
  auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(inst.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  uint32_t two = 2;
  std::vector<VkCooperativeMatrixPropertiesNV> some(3, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  some[2].MSize = 12345;
  CHECK(fn(inst.physical, &two, some.data()) == VK_INCOMPLETE);
  CHECK(two == 2);
  CHECK(some[1].MSize == nv[1].MSize);
  CHECK(some[2].MSize == 12345);
}

TEST_CASE("every VK_NV_cooperative_matrix entry multiplies, adds, scales and stores correctly") {
  NvMatrixDevice nd(true, false);
  Device dev(nd.opts);
  const auto sc = subgroup_sizes(dev.inst.physical);
  for (const auto& p : nv_properties(dev.inst)) {
    Format a, b, c, r;
    REQUIRE(format_of(VkComponentTypeKHR(p.AType), &a));
    REQUIRE(format_of(VkComponentTypeKHR(p.BType), &b));
    REQUIRE(format_of(VkComponentTypeKHR(p.CType), &c));
    REQUIRE(format_of(VkComponentTypeKHR(p.DType), &r));
    REQUIRE(a.f == b.f);  // what the test shaders have
    REQUIRE(c.f == r.f);
    const std::string name = std::string("nv_muladd_") + a.tag + "_" + c.tag;
    INFO(name << " " << p.MSize << "x" << p.NSize << "x" << p.KSize);
    REQUIRE(have_shader(name));  // an advertised entry without a test is a defect
    for (uint32_t sg = sc.minSubgroupSize; sg <= sc.maxSubgroupSize; sg *= 2) {
      INFO("subgroup size " << sg);
      run_nv_muladd(dev, {a, c, p.MSize, p.NSize, p.KSize}, sg, false);
      if (sg == sc.minSubgroupSize || sg == sc.maxSubgroupSize)
        run_nv_muladd(dev, {a, c, p.MSize, p.NSize, p.KSize}, sg, true);
    }
  }
}

TEST_CASE("VK_NV_cooperative_matrix's cooperativeMatrixRobustBufferAccess: a tile past C's bound range reads zero") {
  NvMatrixDevice nd(true, false, true);
  Device dev(nd.opts);
  Format f16{NumberFormat::F16, "f16"}, f32{NumberFormat::F32, "f32"};
  run_nv_muladd(dev, {f16, f32, 16, 16, 16}, 32, false, 2);
  Format s8{NumberFormat::I8, "s8"}, s32{NumberFormat::I32, "s32"};
  run_nv_muladd(dev, {s8, s32, 16, 16, 32}, 8, true, 3);
}

TEST_CASE("NV cooperative matrix shaders fail pipeline creation without the NV feature or off the list") {
  std::vector<uint8_t> A(8192), B(8192), C(8192), D(8192), E(8192);
  ComputeJob job;
  job.buffers = {&A, &B, &C, &D, &E};
  job.push = u32_bytes({16, 16, 16, 16});
  job.spirv = shader("nv_muladd_f16_f32");
  SECTION("only VK_KHR_cooperative_matrix enabled") {
    NvMatrixDevice nd(false, true);
    Device dev(nd.opts);
    job.specialization = {spec(0, 32), spec(1, 16), spec(2, 16), spec(3, 16), spec(4, 0)};
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
  SECTION("a size no entry lists") {
    NvMatrixDevice nd(true, false);
    Device dev(nd.opts);
    job.specialization = {spec(0, 32), spec(1, 24), spec(2, 16), spec(3, 16), spec(4, 0)};
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
    // The same shader at a listed size runs on that device.
    job.specialization = {spec(0, 32), spec(1, 16), spec(2, 16), spec(3, 16), spec(4, 0)};
    CHECK(run_compute_job(dev, job) == VK_SUCCESS);
  }
}
