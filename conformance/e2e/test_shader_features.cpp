// The advertised shader features, each enabled the way an application does (feature
// struct + extension name) and exercised by a shader through the loader.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>

#include "compute_job.h"
#include "shader_references.h"

using namespace coopvk::test;

namespace {

std::vector<uint32_t> shader(const char* name) {
  return load_spirv_file(std::string(COOPVK_E2E_SHADER_DIR) + "/" + name + ".spv");
}

template <typename T>
T at(const std::vector<uint8_t>& b, size_t i) {
  T v;
  std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}

// Every shader feature this file needs, on at once, with the extensions that carry them.
struct FeatureDevice {
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v11};
  DeviceOptions opts;
  FeatureDevice() {
    f2.features.shaderInt64 = f2.features.shaderInt16 = f2.features.shaderFloat64 = VK_TRUE;
    v11.storageBuffer16BitAccess = VK_TRUE;
    v12.storageBuffer8BitAccess = v12.shaderFloat16 = v12.shaderInt8 = VK_TRUE;
    v12.bufferDeviceAddress = v12.vulkanMemoryModel = v12.scalarBlockLayout = VK_TRUE;
    v12.shaderSubgroupExtendedTypes = VK_TRUE;
    v13.subgroupSizeControl = v13.computeFullSubgroups = v13.shaderIntegerDotProduct = VK_TRUE;
    v13.maintenance4 = VK_TRUE;
    opts.features_chain = &f2;
    // Applications (llama.cpp among them) enable promoted extensions by name too.
    opts.extensions = {"VK_KHR_16bit_storage", "VK_KHR_8bit_storage", "VK_KHR_shader_float16_int8",
                       "VK_KHR_buffer_device_address", "VK_KHR_vulkan_memory_model",
                       "VK_EXT_subgroup_size_control", "VK_KHR_shader_integer_dot_product",
                       "VK_KHR_shader_subgroup_extended_types", "VK_EXT_scalar_block_layout",
                       "VK_KHR_maintenance4"};
  }
};

}  // namespace

TEST_CASE("shader features and their extension strings are reported together") {
  Instance inst;
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v11};
  vkGetPhysicalDeviceFeatures2(inst.physical, &f2);
  CHECK(f2.features.shaderInt64);
  CHECK(f2.features.shaderInt16);
  CHECK(v11.storageBuffer16BitAccess);
  CHECK(v12.storageBuffer8BitAccess);
  CHECK(v12.shaderFloat16);
  CHECK(v12.shaderInt8);
  CHECK(v12.bufferDeviceAddress);
  CHECK(v12.vulkanMemoryModel);
  CHECK(v13.subgroupSizeControl);
  CHECK(v13.computeFullSubgroups);
  CHECK(v13.shaderIntegerDotProduct);
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(inst.physical, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateDeviceExtensionProperties(inst.physical, nullptr, &n, props.data());
  std::set<std::string> names;
  for (auto& p : props) names.insert(p.extensionName);
  for (const char* e : FeatureDevice().opts.extensions) {
    INFO(e);
    CHECK(names.count(e) == 1);
  }
}

TEST_CASE("subgroup properties describe the JIT's subgroups") {
  Instance inst;
  VkPhysicalDeviceSubgroupSizeControlProperties sc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties sp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &sc};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sp};
  vkGetPhysicalDeviceProperties2(inst.physical, &p2);
  CHECK(sc.minSubgroupSize <= 8);
  CHECK(sc.maxSubgroupSize >= 64);
  CHECK((sc.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT));
  CHECK(sp.subgroupSize >= sc.minSubgroupSize);
  CHECK(sp.subgroupSize <= sc.maxSubgroupSize);
  CHECK((sp.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT));
  const VkSubgroupFeatureFlags want = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
                                      VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT |
                                      VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT |
                                      VK_SUBGROUP_FEATURE_CLUSTERED_BIT;
  CHECK((sp.supportedOperations & want) == want);
}

TEST_CASE("every subgroup operation class at every required subgroup size") {
  uint32_t sg = GENERATE(4u, 8u, 16u, 32u, 64u);
  FeatureDevice fd;
  Device dev(fd.opts);
  std::vector<uint8_t> out(9 * 64 * 4, 0);
  ComputeJob job;
  job.spirv = shader("subgroup_ops");
  job.buffers = {&out};
  job.required_subgroup_size = sg;
  job.full_subgroups = true;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  auto field = [&](int f, uint32_t l) { return at<uint32_t>(out, f * 64 + l); };
  INFO("subgroup size " << sg);
  CHECK(first_subgroup_ops_mismatch(sg, field) == -1);
}

TEST_CASE("8/16-bit storage, float16, int64 and specialization through Vulkan") {
  FeatureDevice fd;
  Device dev(fd.opts);
  const uint32_t local = 40, groups = 3, n = local * groups;
  std::vector<uint8_t> a8(n), h(n * 2), o32(n * 4), o16(n * 2), o64(n * 8), o8(n);
  for (uint32_t i = 0; i < n; ++i) {
    a8[i] = uint8_t(int8_t(int(i) - 60));
    uint16_t one_and_quarters = uint16_t(0x3C00 + (i % 4) * 0x100);  // 1, 1.25, 1.5, 1.75
    std::memcpy(&h[2 * i], &one_and_quarters, 2);
  }
  ComputeJob job;
  job.spirv = shader("types_storage");
  job.buffers = {&a8, &h, &o32, &o16, &o64, &o8};
  int32_t scale = 7;
  std::vector<uint8_t> ls(4), sc(4);
  std::memcpy(ls.data(), &local, 4);
  std::memcpy(sc.data(), &scale, 4);
  job.specialization = {{0, ls}, {1, sc}};
  job.groups[0] = groups;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t i = 0; i < n; ++i) {
    INFO("invocation " << i);
    REQUIRE(at<int32_t>(o32, i) == int32_t(int8_t(a8[i])) * scale);
    // h*2+1 for h in {1, 1.25, 1.5, 1.75} is {3, 3.5, 4, 4.5}: exact in fp16.
    const uint16_t expect16[4] = {0x4200, 0x4300, 0x4400, 0x4480};
    REQUIRE(at<uint16_t>(o16, i) == expect16[i % 4]);
    REQUIRE(at<uint64_t>(o64, i) == uint64_t(i) * 0x100000001ull + (1ull << 40));
    REQUIRE(at<uint8_t>(o8, i) == uint8_t(i * 7));
  }
}

TEST_CASE("buffer device addresses in push constants and integer dot products") {
  FeatureDevice fd;
  Device dev(fd.opts);
  const uint32_t n = 64;
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  Buffer src = dev.create_buffer(2 * n * 4, usage), dst = dev.create_buffer(3 * n * 4, usage);
  auto* s = static_cast<uint32_t*>(src.mapped);
  for (uint32_t i = 0; i < 2 * n; ++i) s[i] = i * 0x9E3779B9u;
  VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, src.buffer};
  VkBufferDeviceAddressInfo bi{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, dst.buffer};
  uint64_t addrs[2] = {vkGetBufferDeviceAddress(dev.device, &ai), vkGetBufferDeviceAddress(dev.device, &bi)};
  ComputeJob job;
  job.spirv = shader("dot_bda");
  job.push.resize(16);
  std::memcpy(job.push.data(), addrs, 16);
  job.groups[0] = n / 32;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  auto* d = static_cast<const uint32_t*>(dst.mapped);
  for (uint32_t i = 0; i < n; ++i) {
    DotExpected e = dot_expected(s[i], s[i + 64]);
    INFO("invocation " << i);
    REQUIRE(int32_t(d[3 * i]) == e.sdot);
    REQUIRE(d[3 * i + 1] == e.udot);
    REQUIRE(int32_t(d[3 * i + 2]) == e.sdot_acc_sat);
  }
  dev.destroy_buffer(src);
  dev.destroy_buffer(dst);
}

TEST_CASE("bad shaders fail pipeline or module creation cleanly") {
  Device dev;
  SECTION("a capability the JIT does not implement") {
    std::vector<uint32_t> words = shader("unsupported_capability");
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * 4;
    smci.pCode = words.data();
    VkShaderModule m = VK_NULL_HANDLE;
    VkResult r = vkCreateShaderModule(dev.device, &smci, nullptr, &m);
    CHECK(r != VK_SUCCESS);
  }
  SECTION("a required subgroup size that is not a power of two") {
    ComputeJob job;
    job.spirv = shader("saxpy");
    std::vector<uint8_t> x(256), y(256);
    job.buffers = {&x, &y};
    job.required_subgroup_size = 12;
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
  SECTION("full subgroups required for a workgroup that is not a multiple of them") {
    ComputeJob job;
    job.spirv = shader("types_storage");  // local size from specialization: 40
    std::vector<uint8_t> dummy(64 * 8);
    job.buffers = {&dummy, &dummy, &dummy, &dummy, &dummy, &dummy};
    uint32_t local = 40;
    std::vector<uint8_t> ls(4);
    std::memcpy(ls.data(), &local, 4);
    job.specialization = {{0, ls}};
    job.required_subgroup_size = 16;
    job.full_subgroups = true;
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
}

TEST_CASE("scalar layout, float64, extended-type subgroup ops, device-scope atomics") {
  uint32_t sg = GENERATE(8u, 32u);
  FeatureDevice fd;
  fd.v12.vulkanMemoryModelDeviceScope = VK_TRUE;
  Device dev(fd.opts);
  const uint32_t n = 64;
  std::vector<float> vin(3 * n);
  for (uint32_t i = 0; i < 3 * n; ++i) vin[i] = float(i) * 0.5f - 7.0f;
  std::vector<uint8_t> v(vin.size() * 4), d(n * 8), s64(n * 8), s16(n * 2), counter(4);
  std::memcpy(v.data(), vin.data(), v.size());
  ComputeJob job;
  job.spirv = shader("extended_types");
  job.buffers = {&v, &d, &s64, &s16, &counter};
  job.required_subgroup_size = sg;
  job.groups[0] = n / 32;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t i = 0; i < n; ++i) {
    INFO("invocation " << i << ", subgroup size " << sg);
    // v[i] = v[i].zxy * 2 with a 12-byte stride: the scalar layout.
    REQUIRE(at<float>(v, 3 * i + 0) == vin[3 * i + 2] * 2.0f);
    REQUIRE(at<float>(v, 3 * i + 1) == vin[3 * i + 0] * 2.0f);
    REQUIRE(at<float>(v, 3 * i + 2) == vin[3 * i + 1] * 2.0f);
    double x = double(i) / 3.0;
    double want = x * x + 1.0 / (x + 1.0);
    REQUIRE(std::abs(at<double>(d, i) - want) <= 1e-15 * want);
    uint32_t base = i / sg * sg;
    uint64_t sum = 0;
    for (uint32_t k = base; k < base + sg; ++k) sum += uint64_t(k) << 33;
    REQUIRE(at<uint64_t>(s64, i) == sum);
    REQUIRE(at<int16_t>(s16, i) == int16_t(base + sg - 1 - 10));
  }
  CHECK(at<uint32_t>(counter, 0) == n);
}

TEST_CASE("an element-wise shader over four million elements across the worker pool") {
  Device dev;
  const uint32_t n = 4u << 20;
  std::vector<float> xs(n), ys(n);
  for (uint32_t i = 0; i < n; ++i) {
    xs[i] = float(i % 1000) * 0.25f;
    ys[i] = float(i % 17) - 8.0f;
  }
  std::vector<uint8_t> x(n * 4), y(n * 4);
  std::memcpy(x.data(), xs.data(), x.size());
  std::memcpy(y.data(), ys.data(), y.size());
  ComputeJob job;
  job.spirv = shader("saxpy");
  job.buffers = {&x, &y};
  float a = -1.5f;
  job.push.resize(8);
  std::memcpy(job.push.data(), &a, 4);
  std::memcpy(job.push.data() + 4, &n, 4);
  job.groups[0] = n / 64;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  size_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) wrong += at<float>(y, i) != a * xs[i] + ys[i];
  CHECK(wrong == 0);
}

TEST_CASE("divergent loops and switches through Vulkan") {
  Device dev;
  const uint32_t n = 1024;
  std::vector<uint8_t> steps(n * 4), kinds(n * 4);
  ComputeJob job;
  job.spirv = shader("control_flow");
  job.buffers = {&steps, &kinds};
  job.groups[0] = n / 32;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t s = collatz_steps(i);
    INFO("invocation " << i);
    REQUIRE(at<uint32_t>(steps, i) == s);
    REQUIRE(at<uint32_t>(kinds, i) == collatz_kind(s));
  }
}

TEST_CASE("atomics under contention from workgroups on several threads") {
  Device dev;
  const uint32_t groups = 512, n = groups * 64;
  std::vector<uint8_t> counters(12, 0), got(n * 4, 0xFF);
  ComputeJob job;
  job.spirv = shader("atomics");
  job.buffers = {&counters, &got};
  job.groups[0] = groups;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  CHECK(at<uint32_t>(counters, 0) == uint32_t(uint64_t(n) * (n - 1) / 2));
  CHECK(at<uint32_t>(counters, 1) == n);
  CHECK(at<uint32_t>(counters, 2) == n - 1);
  std::vector<uint32_t> tickets;
  for (uint32_t i = 0; i < n; ++i) tickets.push_back(at<uint32_t>(got, i));
  std::sort(tickets.begin(), tickets.end());
  for (uint32_t i = 0; i < n; ++i) REQUIRE(tickets[i] == i);
}

TEST_CASE("non-semantic instructions are accepted and change nothing") {
  DeviceOptions opts;
  opts.extensions = {"VK_KHR_shader_non_semantic_info"};
  Device dev(opts);
  std::vector<uint8_t> out(16 * 4, 0);
  ComputeJob job;
  job.spirv = shader("non_semantic");
  job.buffers = {&out};
  job.groups[0] = 2;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t i = 0; i < 16; ++i) REQUIRE(at<uint32_t>(out, i) == i * i + 5);
}

TEST_CASE("maintenance4: buffer requirements without a buffer, and maxBufferSize") {
  FeatureDevice fd;
  Device dev(fd.opts);
  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m4};
  vkGetPhysicalDeviceProperties2(dev.inst.physical, &p2);
  CHECK(m4.maxBufferSize >= (1ull << 30));  // spec minimum
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = 1000;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkDeviceBufferMemoryRequirements info{VK_STRUCTURE_TYPE_DEVICE_BUFFER_MEMORY_REQUIREMENTS};
  info.pCreateInfo = &bci;
  VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
  vkGetDeviceBufferMemoryRequirements(dev.device, &info, &req);
  // Must equal what the same buffer reports once created (VK_KHR_maintenance4).
  VkBuffer b;
  VK_CHECK(vkCreateBuffer(dev.device, &bci, nullptr, &b));
  VkMemoryRequirements real;
  vkGetBufferMemoryRequirements(dev.device, b, &real);
  CHECK(req.memoryRequirements.size == real.size);
  CHECK(req.memoryRequirements.alignment == real.alignment);
  CHECK(req.memoryRequirements.memoryTypeBits == real.memoryTypeBits);
  CHECK(real.size >= 1000);
  vkDestroyBuffer(dev.device, b, nullptr);
}

// Vulkan 1.3 requires shaderZeroInitializeWorkgroupMemory (dEQP-VK.info.device_mandatory_features).
// The runner zeroes all workgroup memory before every workgroup, so workgroup variables with an
// OpConstantNull initializer read as zero; the shader leaves them non-zero for the next
// workgroup, so stale memory would show.
TEST_CASE("shaderZeroInitializeWorkgroupMemory: null-initialized workgroup variables read zero") {
  Instance inst;
  VkPhysicalDeviceZeroInitializeWorkgroupMemoryFeatures zi{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ZERO_INITIALIZE_WORKGROUP_MEMORY_FEATURES};
  VkPhysicalDeviceVulkan13Features q13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &zi};
  VkPhysicalDeviceFeatures2 q2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &q13};
  vkGetPhysicalDeviceFeatures2(inst.physical, &q2);
  CHECK(q13.shaderZeroInitializeWorkgroupMemory == VK_TRUE);
  CHECK(zi.shaderZeroInitializeWorkgroupMemory == VK_TRUE);

  FeatureDevice fd;
  fd.f2.features.shaderFloat64 = VK_TRUE;
  fd.v13.shaderZeroInitializeWorkgroupMemory = VK_TRUE;
  fd.opts.extensions.push_back("VK_KHR_zero_initialize_workgroup_memory");  // as 1.2 apps do
  Device dev(fd.opts);
  const uint32_t groups = 256, n = groups * 64;
  std::vector<uint8_t> bad(n * 4, 0xAB);
  ComputeJob job;
  job.spirv = shader("zero_init_workgroup");
  job.buffers = {&bad};
  job.groups[0] = groups;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  size_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) wrong += at<uint32_t>(bad, i) != 0;
  CHECK(wrong == 0);
}

// Vulkan 1.3 requires subgroupBroadcastDynamicId (dEQP-VK.info.device_mandatory_features):
// OpGroupNonUniformBroadcast whose id is dynamically uniform rather than a constant.
TEST_CASE("subgroupBroadcastDynamicId: broadcasts from a lane chosen at run time") {
  Instance inst;
  VkPhysicalDeviceVulkan12Features q12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 q2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &q12};
  vkGetPhysicalDeviceFeatures2(inst.physical, &q2);
  CHECK(q12.subgroupBroadcastDynamicId == VK_TRUE);

  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t lane = GENERATE(0u, 3u, 7u);
  FeatureDevice fd;
  fd.v12.subgroupBroadcastDynamicId = VK_TRUE;
  Device dev(fd.opts);
  const uint32_t groups = 4, n = groups * 64;
  std::vector<uint8_t> out(n * 4, 0);
  ComputeJob job;
  job.spirv = shader("broadcast_dynamic_id");
  job.buffers = {&out};
  job.push.resize(4);
  std::memcpy(job.push.data(), &lane, 4);
  job.required_subgroup_size = sg;
  job.groups[0] = groups;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  auto v = [](uint32_t g) { return g * 3u + 1u; };
  for (uint32_t g = 0; g < n; ++g) {
    INFO("invocation " << g << ", subgroup size " << sg << ", lane " << lane);
    uint32_t base = g / sg * sg;
    uint32_t want = v(base + lane);
    for (uint32_t k = 1; k < 4; ++k) want += v(base + (lane + k) % sg) << (8u * k);
    REQUIRE(at<uint32_t>(out, g) == want);
  }
}
