#include "direct_icd.h"

#include <dlfcn.h>

namespace coopvk::test {

DirectIcd::DirectIcd() {
  lib_ = dlopen(COOPVK_ICD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib_) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
  gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib_, "vk_icdGetInstanceProcAddr"));
  if (!gipa) throw std::runtime_error("vk_icdGetInstanceProcAddr is not exported");
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  if (create(&ci, nullptr, &instance) != VK_SUCCESS) throw std::runtime_error("vkCreateInstance failed");
  auto enumerate = get<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices");
  uint32_t n = 1;
  if (enumerate(instance, &n, &physical) != VK_SUCCESS || n != 1)
    throw std::runtime_error("vkEnumeratePhysicalDevices did not return one device");
}

DirectIcd::~DirectIcd() {
  if (instance) get<PFN_vkDestroyInstance>("vkDestroyInstance")(instance, nullptr);
  if (lib_) dlclose(lib_);
}

}  // namespace coopvk::test
