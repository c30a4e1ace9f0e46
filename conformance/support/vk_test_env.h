// Shared fixture code for end-to-end tests: everything goes through the system Vulkan
// loader (libvulkan.so.1), which CTest points at the built coopvk manifest with
// VK_DRIVER_FILES. Failures throw, so Catch2 reports the exact call that failed.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace coopvk::test {

std::string vk_result_name(VkResult r);

#define VK_CHECK(expr)                                                                  \
  do {                                                                                  \
    VkResult vk_check_r = (expr);                                                       \
    if (vk_check_r != VK_SUCCESS)                                                       \
      throw std::runtime_error(std::string(#expr " failed: ") +                         \
                               ::coopvk::test::vk_result_name(vk_check_r));             \
  } while (0)

// An instance with the coopvk physical device found (by driver name) among whatever
// the loader enumerates.
struct Instance {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;

  explicit Instance(uint32_t api_version = VK_API_VERSION_1_3);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
};

// The names vkEnumerateDeviceExtensionProperties reports.
std::set<std::string> device_extensions(VkPhysicalDevice pd);

struct DeviceOptions {
  std::vector<const char*> extensions;
  const void* features_chain = nullptr;  // pNext of VkDeviceCreateInfo
  uint32_t queue_count = 1;
};

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

// A device on the coopvk physical device with a command pool on queue family 0.
struct Device {
  Instance inst;
  VkDevice device = VK_NULL_HANDLE;
  std::vector<VkQueue> queues;
  VkCommandPool pool = VK_NULL_HANDLE;

  explicit Device(const DeviceOptions& opts = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Buffer create_buffer(VkDeviceSize size, VkBufferUsageFlags usage =
                                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                              VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
  void destroy_buffer(Buffer& b);
  VkCommandBuffer begin(VkCommandBufferLevel level = VK_COMMAND_BUFFER_LEVEL_PRIMARY);
  // Ends, submits to queue 0 with a fence, waits, frees the command buffer.
  void submit_and_wait(VkCommandBuffer cb, uint32_t queue_index = 0);
};

}  // namespace coopvk::test
