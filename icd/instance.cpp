// vkCreateInstance and the instance-level enumerations.
#include "instance.h"

#include "alloc.h"
#include "log.h"
#include "vk_entrypoints.h"
#include "vk_extensions.h"

#include <cstring>

using namespace coopvk;

namespace {

VkResult enumerate_extensions(bool device, uint32_t* count, VkExtensionProperties* out) {
  uint32_t n = 0;
  const ExtensionInfo* table = extension_table(&n);
  VkExtensionProperties props[64];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n && k < 64; ++i) {
    if (table[i].device != device || !table[i].advertised) continue;
    std::memset(&props[k], 0, sizeof(props[k]));
    std::strncpy(props[k].extensionName, table[i].name, VK_MAX_EXTENSION_NAME_SIZE - 1);
    props[k].specVersion = table[i].spec_version;
    ++k;
  }
  return enumerate_out(props, k, count, out);
}

}  // namespace

namespace coopvk {
VkResult enumerate_device_extensions(uint32_t* count, VkExtensionProperties* out) {
  return enumerate_extensions(true, count, out);
}

// True when `name` is an advertised extension of the given scope.
bool extension_supported(const char* name, bool device) {
  int i = find_extension(name);
  if (i < 0) return false;
  uint32_t n = 0;
  const ExtensionInfo& e = extension_table(&n)[i];
  return e.advertised && e.device == device;
}
}  // namespace coopvk

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EnumerateInstanceVersion(uint32_t* pApiVersion) {
  *pApiVersion = kDriverApiVersion;
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EnumerateInstanceExtensionProperties(
    const char* pLayerName, uint32_t* pPropertyCount, VkExtensionProperties* pProperties) {
  if (pLayerName) return VK_ERROR_LAYER_NOT_PRESENT;
  return enumerate_extensions(false, pPropertyCount, pProperties);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EnumerateInstanceLayerProperties(
    uint32_t* pPropertyCount, VkLayerProperties* pProperties) {
  *pPropertyCount = 0;
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateInstance(const VkInstanceCreateInfo* pCreateInfo,
                                                     const VkAllocationCallbacks* pAllocator,
                                                     VkInstance* pInstance) {
  if (!pCreateInfo || !pInstance) {
    COOPVK_ERROR("vkCreateInstance: null pCreateInfo or pInstance");
    return VK_ERROR_INITIALIZATION_FAILED;
  }
  for (uint32_t i = 0; i < pCreateInfo->enabledExtensionCount; ++i) {
    const char* name = pCreateInfo->ppEnabledExtensionNames[i];
    if (!name || !extension_supported(name, false)) {
      COOPVK_ERROR("vkCreateInstance: instance extension %s is not supported",
                   name ? name : "(null)");
      return VK_ERROR_EXTENSION_NOT_PRESENT;
    }
  }
  Instance* inst = vk_new<Instance>(pAllocator, VK_SYSTEM_ALLOCATION_SCOPE_INSTANCE);
  if (!inst) return VK_ERROR_OUT_OF_HOST_MEMORY;
  if (pAllocator) {
    inst->allocator = *pAllocator;
    inst->has_allocator = true;
  }
  if (pCreateInfo->pApplicationInfo && pCreateInfo->pApplicationInfo->apiVersion)
    inst->api_version = pCreateInfo->pApplicationInfo->apiVersion;
  inst->physical_device.init(inst->alloc());
  *pInstance = to_handle<VkInstance>(inst);
  COOPVK_INFO("instance created (application asks for Vulkan %u.%u)",
              VK_API_VERSION_MAJOR(inst->api_version), VK_API_VERSION_MINOR(inst->api_version));
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyInstance(VkInstance instance,
                                                  const VkAllocationCallbacks* pAllocator) {
  Instance* inst = from_handle<Instance>(instance);
  if (!inst) return;
  vk_delete(pick_allocator(pAllocator, inst->alloc()), inst);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EnumeratePhysicalDevices(
    VkInstance instance, uint32_t* pPhysicalDeviceCount, VkPhysicalDevice* pPhysicalDevices) {
  Instance* inst = from_handle<Instance>(instance);
  VkPhysicalDevice pd = to_handle<VkPhysicalDevice>(&inst->physical_device);
  return enumerate_out(&pd, 1, pPhysicalDeviceCount, pPhysicalDevices);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EnumeratePhysicalDeviceGroups(
    VkInstance instance, uint32_t* pCount, VkPhysicalDeviceGroupProperties* pGroups) {
  Instance* inst = from_handle<Instance>(instance);
  if (!pGroups) {
    *pCount = 1;
    return VK_SUCCESS;
  }
  if (*pCount < 1) return VK_INCOMPLETE;
  *pCount = 1;
  pGroups[0].physicalDeviceCount = 1;
  std::memset(pGroups[0].physicalDevices, 0, sizeof(pGroups[0].physicalDevices));
  pGroups[0].physicalDevices[0] = to_handle<VkPhysicalDevice>(&inst->physical_device);
  pGroups[0].subsetAllocation = VK_FALSE;
  return VK_SUCCESS;
}
