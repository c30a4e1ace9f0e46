// vkGetInstanceProcAddr / vkGetDeviceProcAddr over the generated entry-point table.
#include "device.h"
#include "log.h"
#include "vk_entrypoints.h"
#include "vk_extensions.h"

#include <cstring>

using namespace coopvk;

extern "C" {
VKAPI_ATTR VkResult VKAPI_CALL vk_icdNegotiateLoaderICDInterfaceVersion(uint32_t* pVersion);
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vk_icdGetPhysicalDeviceProcAddr(VkInstance, const char*);
}

namespace {

bool extension_advertised(int index) {
  uint32_t n = 0;
  const ExtensionInfo* t = extension_table(&n);
  return index >= 0 && uint32_t(index) < n && t[index].advertised;
}

}  // namespace

namespace coopvk {

// Physical-device commands the loader does not know are resolved through here
// (LoaderDriverInterface.md, "Reason for adding vk_icdGetPhysicalDeviceProcAddr").
// Only core and advertised extensions: a hidden extension stays hidden from the loader.
PFN_vkVoidFunction physical_device_proc_addr(const char* name) {
  const EntryPoint* e = find_entry_point(name);
  if (!e || e->kind != EntryKind::PhysicalDevice) return nullptr;
  if (e->core_version == 0 && !extension_advertised(e->extension)) return nullptr;
  return e->fn;
}

}  // namespace coopvk

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL coopvk_GetInstanceProcAddr(VkInstance instance,
                                                                   const char* pName) {
  if (!pName) return nullptr;
  // Version 7 of the loader interface looks these up through here with a null instance.
  if (std::strcmp(pName, "vk_icdNegotiateLoaderICDInterfaceVersion") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(vk_icdNegotiateLoaderICDInterfaceVersion);
  if (std::strcmp(pName, "vk_icdGetPhysicalDeviceProcAddr") == 0)
    return reinterpret_cast<PFN_vkVoidFunction>(vk_icdGetPhysicalDeviceProcAddr);
  const EntryPoint* e = find_entry_point(pName);
  if (!e) return nullptr;
  if (!instance) {
    // Only the global commands (and vkGetInstanceProcAddr itself) without an instance.
    if (e->kind == EntryKind::Global || std::strcmp(pName, "vkGetInstanceProcAddr") == 0)
      return e->fn;
    return nullptr;
  }
  // With an instance: every command coopvk has, including those of hidden extensions,
  // so that their entry points can be tested directly against the driver.
  return e->fn;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL coopvk_GetDeviceProcAddr(VkDevice device, const char* pName) {
  const EntryPoint* e = find_entry_point(pName);
  if (!e || e->kind != EntryKind::Device) return nullptr;
  if (e->core_version == 0 && !from_handle<Device>(device)->extension_enabled(e->extension))
    return nullptr;  // commands of an extension the device did not enable (vkGetDeviceProcAddr)
  return e->fn;
}
