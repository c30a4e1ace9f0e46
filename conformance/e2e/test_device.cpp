// Instance, physical device and device creation through the real loader.
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <iterator>
#include <set>
#include <string>

#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

VkResult try_create_device(VkPhysicalDevice pd, const void* chain,
                           std::vector<const char*> exts = {},
                           const VkPhysicalDeviceFeatures* core = nullptr) {
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueCount = 1;
  q.pQueuePriorities = &prio;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = chain;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  ci.enabledExtensionCount = uint32_t(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  ci.pEnabledFeatures = core;
  VkDevice dev = VK_NULL_HANDLE;
  VkResult r = vkCreateDevice(pd, &ci, nullptr, &dev);
  if (r == VK_SUCCESS) vkDestroyDevice(dev, nullptr);
  return r;
}

}  // namespace

TEST_CASE("the loader finds the coopvk CPU device with a stable identity") {
  uint8_t uuid1[VK_UUID_SIZE], uuid2[VK_UUID_SIZE];
  std::string name1;
  {
    Instance inst;
    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
    vkGetPhysicalDeviceProperties2(inst.physical, &p2);
    CHECK(p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU);
    CHECK(VK_API_VERSION_MAJOR(p2.properties.apiVersion) == 1);
    CHECK(VK_API_VERSION_MINOR(p2.properties.apiVersion) >= 3);
    CHECK(std::string(p2.properties.deviceName).rfind("coopvk", 0) == 0);
    std::memcpy(uuid1, id.deviceUUID, VK_UUID_SIZE);
    name1 = p2.properties.deviceName;
    bool nonzero = false;
    for (uint8_t b : uuid1) nonzero |= b != 0;
    CHECK(nonzero);
  }
  Instance inst2;
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
  vkGetPhysicalDeviceProperties2(inst2.physical, &p2);
  std::memcpy(uuid2, id.deviceUUID, VK_UUID_SIZE);
  CHECK(std::memcmp(uuid1, uuid2, VK_UUID_SIZE) == 0);
  CHECK(name1 == p2.properties.deviceName);
}

TEST_CASE("one compute|transfer queue family and host-visible coherent memory") {
  Instance inst;
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(inst.physical, &n, nullptr);
  REQUIRE(n == 1);
  VkQueueFamilyProperties q;
  vkGetPhysicalDeviceQueueFamilyProperties(inst.physical, &n, &q);
  CHECK((q.queueFlags & VK_QUEUE_COMPUTE_BIT));
  CHECK((q.queueFlags & VK_QUEUE_TRANSFER_BIT));
  CHECK(!(q.queueFlags & VK_QUEUE_GRAPHICS_BIT));
  CHECK(q.queueCount >= 1);
  CHECK(q.timestampValidBits == 64);

  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(inst.physical, &mp);
  REQUIRE(mp.memoryTypeCount >= 1);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  CHECK((mp.memoryTypes[0].propertyFlags & want) == want);
  CHECK(mp.memoryHeaps[mp.memoryTypes[0].heapIndex].size > (64ull << 20));
}

TEST_CASE("promoted and extension feature structs agree") {
  Instance inst;
  VkPhysicalDeviceTimelineSemaphoreFeatures tl{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  VkPhysicalDeviceSynchronization2Features s2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES, &tl};
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &s2};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
  // Poison so a struct the driver forgot to fill shows up.
  v12.timelineSemaphore = 7;
  tl.timelineSemaphore = 7;
  vkGetPhysicalDeviceFeatures2(inst.physical, &f2);
  CHECK(v12.timelineSemaphore == VK_TRUE);
  CHECK(tl.timelineSemaphore == VK_TRUE);
  CHECK(v12.hostQueryReset == VK_TRUE);
  CHECK(v13.synchronization2 == VK_TRUE);
  CHECK(s2.synchronization2 == VK_TRUE);
  CHECK(v13.dynamicRendering == VK_FALSE);  // no graphics
  CHECK(f2.features.geometryShader == VK_FALSE);
  CHECK(v12.pNext == &v13);  // chain untouched
}

TEST_CASE("vkCreateDevice rejects unsupported features and unknown extensions") {
  Instance inst;
  SECTION("a core feature that is not supported") {
    VkPhysicalDeviceFeatures core{};
    core.geometryShader = VK_TRUE;
    CHECK(try_create_device(inst.physical, nullptr, {}, &core) == VK_ERROR_FEATURE_NOT_PRESENT);
  }
  SECTION("the same core feature through VkPhysicalDeviceFeatures2") {
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.features.tessellationShader = VK_TRUE;
    CHECK(try_create_device(inst.physical, &f2) == VK_ERROR_FEATURE_NOT_PRESENT);
  }
  SECTION("a chained Vulkan 1.3 feature that is not supported") {
    VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    v13.dynamicRendering = VK_TRUE;
    CHECK(try_create_device(inst.physical, &v13) == VK_ERROR_FEATURE_NOT_PRESENT);
  }
  SECTION("the cooperative-matrix-2 features are accepted") {
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    cm2.cooperativeMatrixBlockLoads = cm2.cooperativeMatrixTensorAddressing = cm2.cooperativeMatrixWorkgroupScope = VK_TRUE;
    CHECK(try_create_device(inst.physical, &cm2, {"VK_NV_cooperative_matrix2"}) == VK_SUCCESS);
  }
  SECTION("the cooperative-vector features are accepted") {
    VkPhysicalDeviceCooperativeVectorFeaturesNV cv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV};
    cv.cooperativeVector = cv.cooperativeVectorTraining = VK_TRUE;
    CHECK(try_create_device(inst.physical, &cv, {"VK_NV_cooperative_vector"}) == VK_SUCCESS);
  }
  SECTION("the cooperative-matrix, bfloat16 and float8 features are accepted") {
    VkPhysicalDeviceShaderFloat8FeaturesEXT f8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT};
    f8.shaderFloat8 = f8.shaderFloat8CooperativeMatrix = VK_TRUE;
    VkPhysicalDeviceShaderBfloat16FeaturesKHR bf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR, &f8};
    bf.shaderBFloat16Type = bf.shaderBFloat16DotProduct = bf.shaderBFloat16CooperativeMatrix = VK_TRUE;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, &bf};
    cm.cooperativeMatrix = cm.cooperativeMatrixRobustBufferAccess = VK_TRUE;
    CHECK(try_create_device(inst.physical, &cm, {"VK_KHR_cooperative_matrix", "VK_KHR_shader_bfloat16",
                                                 "VK_EXT_shader_float8"}) == VK_SUCCESS);
  }
  SECTION("supported features are accepted") {
    VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    v13.synchronization2 = VK_TRUE;
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
    v12.timelineSemaphore = VK_TRUE;
    v12.hostQueryReset = VK_TRUE;
    CHECK(try_create_device(inst.physical, &v12) == VK_SUCCESS);
  }
  SECTION("an unknown extension") {
    CHECK(try_create_device(inst.physical, nullptr, {"VK_KHR_no_such_extension"}) ==
          VK_ERROR_EXTENSION_NOT_PRESENT);
  }
  SECTION("every advertised extension can be enabled, all at once") {
    auto exts = device_extensions(inst.physical);
    REQUIRE(!exts.empty());
    std::vector<const char*> names;
    for (auto& e : exts) names.push_back(e.c_str());
    CHECK(try_create_device(inst.physical, nullptr, names) == VK_SUCCESS);
  }
  SECTION("more queues than the family has") {
    float prio[64] = {};
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueCount = 64;
    q.pQueuePriorities = prio;
    VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &q;
    VkDevice dev;
    CHECK(vkCreateDevice(inst.physical, &ci, nullptr, &dev) != VK_SUCCESS);
  }
}

TEST_CASE("advertised extensions are the tested ones and nothing partial") {
  Instance inst;
  auto exts = device_extensions(inst.physical);
  CHECK(exts.count("VK_KHR_timeline_semaphore") == 1);
  CHECK(exts.count("VK_KHR_synchronization2") == 1);
  CHECK(exts.count("VK_EXT_host_query_reset") == 1);
  // Cooperative matrices with bfloat16 and float8 (e2e_cooperative_matrix, unit_jit_coopmat).
  CHECK(exts.count("VK_KHR_cooperative_matrix") == 1);
  CHECK(exts.count("VK_KHR_shader_bfloat16") == 1);
  CHECK(exts.count("VK_EXT_shader_float8") == 1);
  // Reductions, use conversions, per-element operations, coordinates (e2e_matrix_maintenance1).
  CHECK(exts.count("VK_EXT_cooperative_matrix_maintenance1") == 1);
  // Cooperative vectors and their conversion commands (e2e_cooperative_vector*, unit_jit_coopvec).
  CHECK(exts.count("VK_NV_cooperative_vector") == 1);
  // The legacy NV matrices (e2e_nv_cooperative_matrix) and VK_NV_cooperative_matrix2 with the
  // features it implements (e2e_matrix_maintenance1's NV2 cases).
  CHECK(exts.count("VK_NV_cooperative_matrix") == 1);
  CHECK(exts.count("VK_NV_cooperative_matrix2") == 1);
}

TEST_CASE("vkGetDeviceProcAddr through the loader resolves core commands") {
  Device dev;
  CHECK(vkGetDeviceProcAddr(dev.device, "vkCmdCopyBuffer") != nullptr);
  CHECK(vkGetDeviceProcAddr(dev.device, "vkQueueSubmit2") != nullptr);
  CHECK(vkGetDeviceProcAddr(dev.device, "vkNoSuchFunction") == nullptr);
}

namespace {
struct ExtensionDeviceCommand {
  const char* name;
  const char* extension;
  bool advertised;
};
// Generated from vk.xml and icd/extensions.txt (icd/gen/gen_vk_tables.py): every device-level
// command that only an extension provides.
const ExtensionDeviceCommand kExtensionDeviceCommands[] = {
#include "vk_extension_device_command_names.inc"
};
}  // namespace

// vkGetDeviceProcAddr, "Command Function Pointers": a device-level command of an extension the
// device did not enable is "any other case" and must give NULL (dEQP-VK.api.get_device_proc_addr.
// non_enabled). The loader forwards these names to the driver, so this checks the driver's
// answer as an application sees it.
TEST_CASE("vkGetDeviceProcAddr through the loader gives extension commands only when enabled") {
  REQUIRE(std::size(kExtensionDeviceCommands) > 0);
  SECTION("no extension enabled: every extension command is NULL, core ones are not") {
    Device dev;
    for (const auto& c : kExtensionDeviceCommands) {
      INFO(c.name << " (" << c.extension << ")");
      CHECK(vkGetDeviceProcAddr(dev.device, c.name) == nullptr);
    }
    CHECK(vkGetDeviceProcAddr(dev.device, "vkResetQueryPool") != nullptr);  // core 1.2
    CHECK(vkGetDeviceProcAddr(dev.device, "vkQueueSubmit2") != nullptr);    // core 1.3
  }
  SECTION("each advertised extension enabled alone gives its own commands and no other's") {
    std::set<std::string> extensions;
    for (const auto& c : kExtensionDeviceCommands)
      if (c.advertised) extensions.insert(c.extension);
    REQUIRE(!extensions.empty());
    for (const std::string& ext : extensions) {
      DeviceOptions opts;
      opts.extensions = {ext.c_str()};
      Device dev(opts);
      for (const auto& c : kExtensionDeviceCommands) {
        INFO(c.name << " (" << c.extension << ") with only " << ext << " enabled");
        CHECK((vkGetDeviceProcAddr(dev.device, c.name) != nullptr) == (ext == c.extension));
      }
    }
  }
}

TEST_CASE("limits describe a compute device truthfully") {
  Instance inst;
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(inst.physical, &p);
  CHECK(p.limits.maxComputeWorkGroupInvocations >= 128);  // spec minimum
  CHECK(p.limits.maxComputeSharedMemorySize >= 16384);
  CHECK(p.limits.maxPushConstantsSize >= 128);
  CHECK(p.limits.timestampComputeAndGraphics == VK_TRUE);
  CHECK(p.limits.timestampPeriod > 0.0f);
  CHECK(p.limits.maxImageDimension2D == 0);  // no images
  VkFormatProperties fp;
  vkGetPhysicalDeviceFormatProperties(inst.physical, VK_FORMAT_R8G8B8A8_UNORM, &fp);
  CHECK(fp.optimalTilingFeatures == 0);
  VkImageFormatProperties ifp;
  CHECK(vkGetPhysicalDeviceImageFormatProperties(inst.physical, VK_FORMAT_R8G8B8A8_UNORM,
                                                 VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_OPTIMAL,
                                                 VK_IMAGE_USAGE_STORAGE_BIT, 0, &ifp) ==
        VK_ERROR_FORMAT_NOT_SUPPORTED);
}

TEST_CASE("VK_KHR_get_physical_device_properties2 is advertised and usable by name") {
  uint32_t n = 0;
  VK_CHECK(vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr));
  std::vector<VkExtensionProperties> props(n);
  VK_CHECK(vkEnumerateInstanceExtensionProperties(nullptr, &n, props.data()));
  bool listed = false;
  for (auto& p : props) listed |= std::strcmp(p.extensionName, "VK_KHR_get_physical_device_properties2") == 0;
  CHECK(listed);
  // A Vulkan 1.0 application enables it and calls the KHR entry point.
  const char* ext = "VK_KHR_get_physical_device_properties2";
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_0;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = 1;
  ci.ppEnabledExtensionNames = &ext;
  VkInstance inst;
  VK_CHECK(vkCreateInstance(&ci, nullptr, &inst));
  auto get2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2KHR>(
      vkGetInstanceProcAddr(inst, "vkGetPhysicalDeviceProperties2KHR"));
  REQUIRE(get2);
  uint32_t count = 0;
  VK_CHECK(vkEnumeratePhysicalDevices(inst, &count, nullptr));
  std::vector<VkPhysicalDevice> pds(count);
  VK_CHECK(vkEnumeratePhysicalDevices(inst, &count, pds.data()));
  bool found = false;
  for (VkPhysicalDevice pd : pds) {
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &drv};
    get2(pd, &p2);
    if (std::strcmp(drv.driverName, "coopvk") != 0) continue;
    found = true;
    // The conformance version is a CTS release no older than the API version reported.
    const uint32_t api = p2.properties.apiVersion;
    CHECK(drv.conformanceVersion.major == VK_API_VERSION_MAJOR(api));
    CHECK(drv.conformanceVersion.minor >= VK_API_VERSION_MINOR(api));
  }
  CHECK(found);
  vkDestroyInstance(inst, nullptr);
}
