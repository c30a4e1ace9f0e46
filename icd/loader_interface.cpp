// The three symbols the Vulkan loader looks for (LoaderDriverInterface.md, "Driver
// Discovery" and "Loader and Driver Interface Negotiation"). Everything else is reached
// through vk_icdGetInstanceProcAddr.
#include "vk_entrypoints.h"

#include <algorithm>

namespace coopvk {
PFN_vkVoidFunction physical_device_proc_addr(const char* name);
}

namespace {
constexpr uint32_t kInterfaceVersion = 7;
// Version 2 is the first where the loader stops requiring vk*-named exports.
constexpr uint32_t kMinInterfaceVersion = 2;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL
vk_icdNegotiateLoaderICDInterfaceVersion(uint32_t* pSupportedVersion) {
  if (!pSupportedVersion || *pSupportedVersion < kMinInterfaceVersion)
    return VK_ERROR_INCOMPATIBLE_DRIVER;
  *pSupportedVersion = std::min(*pSupportedVersion, kInterfaceVersion);
  return VK_SUCCESS;
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vk_icdGetInstanceProcAddr(VkInstance instance, const char* pName) {
  return coopvk_GetInstanceProcAddr(instance, pName);
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vk_icdGetPhysicalDeviceProcAddr(VkInstance, const char* pName) {
  return coopvk::physical_device_proc_addr(pName);
}

}  // extern "C"
