// vkGetPhysicalDeviceProperties(2): identity and limits. Every number here must be true
// of this implementation; graphics limits are zero because there is no graphics.
#include "log.h"
#include "physical_device.h"
#include "vk_entrypoints.h"
#include "vk_structs.h"

#include "coopvk/jit/compiler.h"

#include <cstring>

using namespace coopvk;

namespace {

constexpr uint32_t kDriverVersion = VK_MAKE_VERSION(COOPVK_VERSION_MAJOR, COOPVK_VERSION_MINOR,
                                                    COOPVK_VERSION_PATCH);

// The JIT's default subgroup width: 32 on AVX-512 hosts, 8 elsewhere, or COOPVK_SUBGROUP_SIZE
// (jit::default_subgroup_size()).
uint32_t natural_subgroup_size() { return jit::default_subgroup_size(); }

// Subgroup operation classes the JIT implements (jit/src/lower/lower_subgroup.cpp); quad
// operations are not among them.
constexpr VkSubgroupFeatureFlags kSubgroupOperations =
    VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
    VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT |
    VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT | VK_SUBGROUP_FEATURE_CLUSTERED_BIT;

void fill_limits(const PhysicalDevice* pd, VkPhysicalDeviceLimits* l) {
  std::memset(l, 0, sizeof(*l));
  l->maxMemoryAllocationCount = 1u << 20;
  l->bufferImageGranularity = 64;
  l->maxBoundDescriptorSets = 8;
  l->maxPerStageDescriptorUniformBuffers = 64;
  l->maxPerStageDescriptorStorageBuffers = 64;
  l->maxPerStageResources = 128;
  l->maxDescriptorSetUniformBuffers = 64;
  l->maxDescriptorSetUniformBuffersDynamic = 16;
  l->maxDescriptorSetStorageBuffers = 64;
  l->maxDescriptorSetStorageBuffersDynamic = 16;
  l->maxUniformBufferRange = 65536;
  l->maxStorageBufferRange = 1u << 31;
  l->maxPushConstantsSize = 256;
  l->maxComputeSharedMemorySize = 65536;
  l->maxComputeWorkGroupCount[0] = l->maxComputeWorkGroupCount[1] =
      l->maxComputeWorkGroupCount[2] = 65535;
  l->maxComputeWorkGroupInvocations = 1024;
  l->maxComputeWorkGroupSize[0] = 1024;
  l->maxComputeWorkGroupSize[1] = 1024;
  l->maxComputeWorkGroupSize[2] = 64;
  l->maxDrawIndirectCount = 1;
  l->timestampComputeAndGraphics = VK_TRUE;
  l->timestampPeriod = 1.0f;  // nanoseconds of CLOCK_MONOTONIC
  l->discreteQueuePriorities = 2;
  l->minMemoryMapAlignment = 64;
  l->minUniformBufferOffsetAlignment = 16;
  l->minStorageBufferOffsetAlignment = 16;
  l->minTexelBufferOffsetAlignment = 16;
  l->optimalBufferCopyOffsetAlignment = 64;
  l->optimalBufferCopyRowPitchAlignment = 64;
  l->nonCoherentAtomSize = 64;
  (void)pd;
}

void fill_vulkan11(const PhysicalDevice* pd, VkPhysicalDeviceVulkan11Properties* p) {
  std::memcpy(p->deviceUUID, pd->device_uuid, VK_UUID_SIZE);
  std::memcpy(p->driverUUID, pd->driver_uuid, VK_UUID_SIZE);
  std::memset(p->deviceLUID, 0, VK_LUID_SIZE);
  p->deviceNodeMask = 0;
  p->deviceLUIDValid = VK_FALSE;
  p->subgroupSize = natural_subgroup_size();
  p->subgroupSupportedStages = VK_SHADER_STAGE_COMPUTE_BIT;
  p->subgroupSupportedOperations = kSubgroupOperations;
  p->subgroupQuadOperationsInAllStages = VK_FALSE;
  p->pointClippingBehavior = VK_POINT_CLIPPING_BEHAVIOR_ALL_CLIP_PLANES;
  p->maxMultiviewViewCount = 0;
  p->maxMultiviewInstanceIndex = 0;
  p->protectedNoFault = VK_FALSE;
  p->maxPerSetDescriptors = 1024;
  p->maxMemoryAllocationSize = pd->heap_size;
}

void fill_driver_identity(char* name, char* info, VkDriverId* id, VkConformanceVersion* cv) {
  std::memset(name, 0, VK_MAX_DRIVER_NAME_SIZE);
  std::memset(info, 0, VK_MAX_DRIVER_INFO_SIZE);
  std::strncpy(name, "coopvk", VK_MAX_DRIVER_NAME_SIZE - 1);
  std::strncpy(info, "coopvk " COOPVK_VERSION_STRING " (CPU)", VK_MAX_DRIVER_INFO_SIZE - 1);
  // No VkDriverId is registered for coopvk; 0 is what an unregistered driver can
  // honestly say.
  *id = static_cast<VkDriverId>(0);
  // conformanceVersion names the CTS release the driver is tested against (Vulkan spec,
  // VkPhysicalDeviceDriverProperties): the project's lists run on a 1.4.6.1-era deqp-vk
  // (docs/conformance.md). It is not a Khronos conformance submission. It must not be older
  // than the API version the driver reports, which the CTS checks
  // (dEQP-VK.api.driver_properties.conformance_version).
  *cv = {1, 4, 6, 1};
}

void fill_vulkan12(const PhysicalDevice* pd, VkPhysicalDeviceVulkan12Properties* p) {
  void* next = p->pNext;
  VkStructureType st = p->sType;
  std::memset(p, 0, sizeof(*p));
  p->sType = st;
  p->pNext = next;
  fill_driver_identity(p->driverName, p->driverInfo, &p->driverID, &p->conformanceVersion);
  p->denormBehaviorIndependence = VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE;
  p->roundingModeIndependence = VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE;
  p->maxTimelineSemaphoreValueDifference = UINT64_MAX;
  (void)pd;
}

void fill_vulkan13(const PhysicalDevice* pd, VkPhysicalDeviceVulkan13Properties* p) {
  void* next = p->pNext;
  VkStructureType st = p->sType;
  std::memset(p, 0, sizeof(*p));
  p->sType = st;
  p->pNext = next;
  // Any power of two in [4, 64] can be required: the JIT makes the subgroup that wide.
  p->minSubgroupSize = jit::kMinSubgroupSize;
  p->maxSubgroupSize = jit::kMaxSubgroupSize;
  p->maxComputeWorkgroupSubgroups = 1024 / jit::kMinSubgroupSize;
  p->requiredSubgroupSizeStages = VK_SHADER_STAGE_COMPUTE_BIT;
  p->maxBufferSize = pd->heap_size;
}

void fill_chain_struct(const PhysicalDevice* pd, VkBaseOutStructure* s) {
  switch (s->sType) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES:
      fill_vulkan11(pd, reinterpret_cast<VkPhysicalDeviceVulkan11Properties*>(s));
      return;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES:
      fill_vulkan12(pd, reinterpret_cast<VkPhysicalDeviceVulkan12Properties*>(s));
      return;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES:
      fill_vulkan13(pd, reinterpret_cast<VkPhysicalDeviceVulkan13Properties*>(s));
      return;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES: {
      auto* p = reinterpret_cast<VkPhysicalDeviceIDProperties*>(s);
      VkPhysicalDeviceVulkan11Properties v{};
      fill_vulkan11(pd, &v);
      std::memcpy(p->deviceUUID, v.deviceUUID, VK_UUID_SIZE);
      std::memcpy(p->driverUUID, v.driverUUID, VK_UUID_SIZE);
      std::memset(p->deviceLUID, 0, VK_LUID_SIZE);
      p->deviceNodeMask = 0;
      p->deviceLUIDValid = VK_FALSE;
      return;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES: {
      auto* p = reinterpret_cast<VkPhysicalDeviceDriverProperties*>(s);
      fill_driver_identity(p->driverName, p->driverInfo, &p->driverID, &p->conformanceVersion);
      return;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES: {
      auto* p = reinterpret_cast<VkPhysicalDeviceSubgroupProperties*>(s);
      VkPhysicalDeviceVulkan11Properties v{};
      fill_vulkan11(pd, &v);
      p->subgroupSize = v.subgroupSize;
      p->supportedStages = v.subgroupSupportedStages;
      p->supportedOperations = v.subgroupSupportedOperations;
      p->quadOperationsInAllStages = v.subgroupQuadOperationsInAllStages;
      return;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES: {
      auto* p = reinterpret_cast<VkPhysicalDeviceMaintenance3Properties*>(s);
      p->maxPerSetDescriptors = 1024;
      p->maxMemoryAllocationSize = pd->heap_size;
      return;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES: {
      auto* p = reinterpret_cast<VkPhysicalDeviceMaintenance4Properties*>(s);
      p->maxBufferSize = pd->heap_size;
      return;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_PROPERTIES: {
      auto* p = reinterpret_cast<VkPhysicalDeviceTimelineSemaphoreProperties*>(s);
      p->maxTimelineSemaphoreValueDifference = UINT64_MAX;
      return;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES: {
      auto* p = reinterpret_cast<VkPhysicalDeviceSubgroupSizeControlProperties*>(s);
      VkPhysicalDeviceVulkan13Properties v{};
      fill_vulkan13(pd, &v);
      p->minSubgroupSize = v.minSubgroupSize;
      p->maxSubgroupSize = v.maxSubgroupSize;
      p->maxComputeWorkgroupSubgroups = v.maxComputeWorkgroupSubgroups;
      p->requiredSubgroupSizeStages = v.requiredSubgroupSizeStages;
      return;
    }
    default:
      break;
  }
  if (fill_cooperative_properties(pd, s)) return;
  // Any other property struct this driver knows of describes something it does not
  // support: all zeros (no flags, no limits) is the truthful answer.
  if (size_t size = structure_type_size(s->sType)) {
    if (size > sizeof(VkBaseOutStructure))
      std::memset(reinterpret_cast<char*>(s) + sizeof(VkBaseOutStructure), 0,
                  size - sizeof(VkBaseOutStructure));
    return;
  }
  COOPVK_DEBUG("vkGetPhysicalDeviceProperties2: ignoring unknown structure type %d", s->sType);
}

}  // namespace

void coopvk::fill_properties(const PhysicalDevice* pd, VkPhysicalDeviceProperties* p) {
  std::memset(p, 0, sizeof(*p));
  p->apiVersion = kDriverApiVersion;
  p->driverVersion = kDriverVersion;
  p->vendorID = 0;  // no PCI or Khronos vendor ID is registered for coopvk
  p->deviceID = 0;
  p->deviceType = VK_PHYSICAL_DEVICE_TYPE_CPU;
  std::memcpy(p->deviceName, pd->device_name, sizeof(p->deviceName));
  std::memcpy(p->pipelineCacheUUID, pd->pipeline_cache_uuid, VK_UUID_SIZE);
  fill_limits(pd, &p->limits);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceProperties(VkPhysicalDevice physicalDevice,
                                                              VkPhysicalDeviceProperties* p) {
  fill_properties(from_handle<PhysicalDevice>(physicalDevice), p);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceProperties2(VkPhysicalDevice physicalDevice,
                                                               VkPhysicalDeviceProperties2* p) {
  const PhysicalDevice* pd = from_handle<PhysicalDevice>(physicalDevice);
  fill_properties(pd, &p->properties);
  for (auto* s = static_cast<VkBaseOutStructure*>(p->pNext); s; s = s->pNext)
    fill_chain_struct(pd, s);
}
