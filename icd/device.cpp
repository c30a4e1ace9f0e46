// vkCreateDevice (extension and feature checks), queues, vkDeviceWaitIdle.
#include "device.h"

#include "alloc.h"
#include "log.h"
#include "pipeline.h"
#include "queue.h"
#include "vk_entrypoints.h"
#include "vk_extensions.h"

#include <string>

#include <cstring>

using namespace coopvk;

namespace coopvk {
bool extension_supported(const char* name, bool device);
}

namespace {

void destroy_device(Device* dev, const VkAllocationCallbacks* cb) {
  for (uint32_t i = 0; i < dev->queue_count; ++i) {
    if (!dev->queues[i]) continue;
    dev->queues[i]->stop();
    vk_delete(cb, dev->queues[i]);
  }
  // After the queues: a queue thread may be in a dispatch on the worker pool until stopped.
  vk_delete(cb, dev->compute);
  vk_delete(cb, dev);
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateDevice(VkPhysicalDevice physicalDevice,
                                                   const VkDeviceCreateInfo* info,
                                                   const VkAllocationCallbacks* pAllocator,
                                                   VkDevice* pDevice) {
  PhysicalDevice* pd = from_handle<PhysicalDevice>(physicalDevice);
  if (!info || !pDevice) {
    COOPVK_ERROR("vkCreateDevice: null pCreateInfo or pDevice");
    return VK_ERROR_INITIALIZATION_FAILED;
  }
  std::bitset<64> enabled;
  for (uint32_t i = 0; i < info->enabledExtensionCount; ++i) {
    const char* name = info->ppEnabledExtensionNames[i];
    if (!name || !extension_supported(name, true)) {
      COOPVK_ERROR("vkCreateDevice: device extension %s is not supported", name ? name : "(null)");
      return VK_ERROR_EXTENSION_NOT_PRESENT;
    }
    enabled.set(find_extension(name));
  }
  if (VkResult r = check_requested_features(info); r != VK_SUCCESS) return r;

  uint32_t queues_wanted = 0;
  for (uint32_t i = 0; i < info->queueCreateInfoCount; ++i) {
    const VkDeviceQueueCreateInfo& q = info->pQueueCreateInfos[i];
    if (q.queueFamilyIndex >= kQueueFamilyCount || q.queueCount == 0 ||
        q.queueCount > kQueuesPerFamily || queues_wanted) {
      COOPVK_ERROR("vkCreateDevice: queue create info %u asks for family %u x%u; this device has "
                   "one family with %u queues",
                   i, q.queueFamilyIndex, q.queueCount, kQueuesPerFamily);
      return VK_ERROR_INITIALIZATION_FAILED;
    }
    if (q.flags & VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT) {
      COOPVK_ERROR("vkCreateDevice: protected queues are not supported");
      return VK_ERROR_FEATURE_NOT_PRESENT;
    }
    queues_wanted = q.queueCount;
  }

  const VkAllocationCallbacks* cb = pick_allocator(pAllocator, pd->instance_allocator);
  Device* dev = vk_new<Device>(cb, VK_SYSTEM_ALLOCATION_SCOPE_DEVICE);
  if (!dev) return VK_ERROR_OUT_OF_HOST_MEMORY;
  dev->physical = pd;
  if (cb) {
    dev->allocator = *cb;
    dev->has_allocator = true;
  }
  dev->enabled_extensions = enabled;
  dev->robust_buffer_access = requested_feature(info, "robustBufferAccess");
  dev->cooperative_matrix = requested_feature(info, "VkPhysicalDeviceCooperativeMatrixFeaturesKHR::cooperativeMatrix");
  dev->nv_cooperative_matrix = requested_feature(info, "VkPhysicalDeviceCooperativeMatrixFeaturesNV::cooperativeMatrix");
  dev->cooperative_matrix_robust = requested_feature(info, "cooperativeMatrixRobustBufferAccess");
  dev->bfloat16_matrices = requested_feature(info, "shaderBFloat16CooperativeMatrix");
  dev->float8_matrices = requested_feature(info, "shaderFloat8CooperativeMatrix");
  dev->matrix_reductions = requested_feature(info, "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixReductions");
  dev->matrix_conversions = requested_feature(info, "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixConversions");
  dev->matrix_per_element = requested_feature(info, "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixPerElementOperations");
  dev->matrix_get_coordinate = requested_feature(info, "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixGetCoordinate");
  const char* const nv2 = "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::";
  dev->nv2_reductions = requested_feature(info, std::string(nv2) + "cooperativeMatrixReductions");
  dev->nv2_conversions = requested_feature(info, std::string(nv2) + "cooperativeMatrixConversions");
  dev->nv2_per_element = requested_feature(info, std::string(nv2) + "cooperativeMatrixPerElementOperations");
  dev->nv2_workgroup_scope = requested_feature(info, std::string(nv2) + "cooperativeMatrixWorkgroupScope");
  dev->nv2_flexible_dimensions = requested_feature(info, std::string(nv2) + "cooperativeMatrixFlexibleDimensions");
  dev->nv2_tensor_addressing = requested_feature(info, std::string(nv2) + "cooperativeMatrixTensorAddressing");
  dev->nv2_block_loads = requested_feature(info, std::string(nv2) + "cooperativeMatrixBlockLoads");
  dev->cooperative_vector = requested_feature(info, "cooperativeVector");
  dev->cooperative_vector_training = requested_feature(info, "cooperativeVectorTraining");
  dev->compute = vk_new<DeviceCompute>(cb, VK_SYSTEM_ALLOCATION_SCOPE_DEVICE);
  if (!dev->compute) {
    destroy_device(dev, cb);
    return VK_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (uint32_t i = 0; i < queues_wanted; ++i) {
    Queue* q = vk_new<Queue>(cb, VK_SYSTEM_ALLOCATION_SCOPE_DEVICE);
    if (!q) {
      destroy_device(dev, cb);
      return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    q->device = dev;
    q->index = i;
    q->flags = info->pQueueCreateInfos[0].flags;
    dev->queues[i] = q;
    dev->queue_count = i + 1;
    q->start();
  }
  *pDevice = to_handle<VkDevice>(dev);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyDevice(VkDevice device,
                                                const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  if (!dev) return;
  destroy_device(dev, pick_allocator(pAllocator, dev->alloc()));
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetDeviceQueue(VkDevice device, uint32_t family, uint32_t index,
                                                 VkQueue* pQueue) {
  Device* dev = from_handle<Device>(device);
  if (family != 0 || index >= dev->queue_count) {
    COOPVK_ERROR("vkGetDeviceQueue: queue (%u, %u) was not created", family, index);
    *pQueue = VK_NULL_HANDLE;
    return;
  }
  *pQueue = to_handle<VkQueue>(dev->queues[index]);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetDeviceQueue2(VkDevice device, const VkDeviceQueueInfo2* info,
                                                  VkQueue* pQueue) {
  Device* dev = from_handle<Device>(device);
  // A queue matches only with the flags it was created with (Vulkan spec, vkGetDeviceQueue2).
  if (info->queueFamilyIndex != 0 || info->queueIndex >= dev->queue_count ||
      dev->queues[info->queueIndex]->flags != info->flags) {
    *pQueue = VK_NULL_HANDLE;
    return;
  }
  *pQueue = to_handle<VkQueue>(dev->queues[info->queueIndex]);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_DeviceWaitIdle(VkDevice device) {
  Device* dev = from_handle<Device>(device);
  for (uint32_t i = 0; i < dev->queue_count; ++i) dev->queues[i]->wait_idle();
  return VK_SUCCESS;
}
