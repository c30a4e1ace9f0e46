// Talks to the built driver directly, without the loader: dlopen libcoopvk_icd.so and
// resolve everything through its vk_icdGetInstanceProcAddr. Used for entry points of
// extensions the driver does not advertise yet (the loader would not expose them), and
// to test the loader-interface exports themselves.
#pragma once

#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>

namespace coopvk::test {

class DirectIcd {
 public:
  DirectIcd();  // loads COOPVK_ICD_LIBRARY (a compile definition) and creates an instance
  ~DirectIcd();
  DirectIcd(const DirectIcd&) = delete;
  DirectIcd& operator=(const DirectIcd&) = delete;

  PFN_vkGetInstanceProcAddr gipa = nullptr;  // the driver's vk_icdGetInstanceProcAddr
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;

  // An instance-level (or physical-device-level) function of the driver; throws if null.
  template <typename PFN>
  PFN get(const char* name) const {
    auto fn = reinterpret_cast<PFN>(gipa(instance, name));
    if (!fn) throw std::runtime_error(std::string("driver does not resolve ") + name);
    return fn;
  }
  void* library() const { return lib_; }

 private:
  void* lib_ = nullptr;
};

}  // namespace coopvk::test
