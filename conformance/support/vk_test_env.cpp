#include "vk_test_env.h"

#include <dlfcn.h>

#include <cstring>

namespace coopvk::test {

std::string vk_result_name(VkResult r) {
  switch (r) {
#define CASE(x) case x: return #x;
    CASE(VK_SUCCESS) CASE(VK_NOT_READY) CASE(VK_TIMEOUT) CASE(VK_INCOMPLETE)
    CASE(VK_ERROR_OUT_OF_HOST_MEMORY) CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CASE(VK_ERROR_INITIALIZATION_FAILED) CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    CASE(VK_ERROR_FEATURE_NOT_PRESENT) CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    CASE(VK_ERROR_MEMORY_MAP_FAILED) CASE(VK_ERROR_UNKNOWN) CASE(VK_ERROR_VALIDATION_FAILED_EXT)
#undef CASE
    default: return "VkResult(" + std::to_string(int(r)) + ")";
  }
}

Instance::Instance(uint32_t api_version) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "coopvk-test";
  app.apiVersion = api_version;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VK_CHECK(vkCreateInstance(&ci, nullptr, &instance));
#if defined(__SANITIZE_ADDRESS__)
  // Keep the driver mapped once the loader has opened it. The loader dlcloses it at
  // vkDestroyInstance, which leaves a stale dynamic-TLS entry in the main thread's DTV (the
  // driver and LLVM use thread_local); LeakSanitizer's exit-time scan then reads through it
  // and its tracer crashes ("DTLS ... at 0x658", "Tracer caught signal 11") after every
  // assertion passed. Sanitizer builds only: normal builds unload the driver as apps see it.
  dlopen("libcoopvk_icd.so", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#endif
  uint32_t n = 0;
  VK_CHECK(vkEnumeratePhysicalDevices(instance, &n, nullptr));
  std::vector<VkPhysicalDevice> pds(n);
  VK_CHECK(vkEnumeratePhysicalDevices(instance, &n, pds.data()));
  for (VkPhysicalDevice pd : pds) {
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &drv};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    if (std::strcmp(drv.driverName, "coopvk") == 0) physical = pd;
  }
  if (!physical) {
    vkDestroyInstance(instance, nullptr);
    throw std::runtime_error("the loader enumerated no coopvk device (is VK_DRIVER_FILES set?)");
  }
}

Instance::~Instance() { vkDestroyInstance(instance, nullptr); }

Device::Device(const DeviceOptions& opts) {
  std::vector<float> prio(opts.queue_count, 1.0f);
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = 0;
  q.queueCount = opts.queue_count;
  q.pQueuePriorities = prio.data();
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = opts.features_chain;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  ci.enabledExtensionCount = uint32_t(opts.extensions.size());
  ci.ppEnabledExtensionNames = opts.extensions.data();
  VK_CHECK(vkCreateDevice(inst.physical, &ci, nullptr, &device));
  queues.resize(opts.queue_count);
  for (uint32_t i = 0; i < opts.queue_count; ++i) vkGetDeviceQueue(device, 0, i, &queues[i]);
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  VK_CHECK(vkCreateCommandPool(device, &pci, nullptr, &pool));
}

Device::~Device() {
  vkDeviceWaitIdle(device);
  vkDestroyCommandPool(device, pool, nullptr);
  vkDestroyDevice(device, nullptr);
}

std::set<std::string> device_extensions(VkPhysicalDevice pd) {
  uint32_t n = 0;
  VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr));
  std::vector<VkExtensionProperties> props(n);
  VK_CHECK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, props.data()));
  std::set<std::string> out;
  for (auto& p : props) out.insert(p.extensionName);
  return out;
}

Buffer Device::create_buffer(VkDeviceSize size, VkBufferUsageFlags usage) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = usage;
  VK_CHECK(vkCreateBuffer(device, &bci, nullptr, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(inst.physical, &mp);
  uint32_t type = UINT32_MAX;
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) {
      type = i;
      break;
    }
  if (type == UINT32_MAX) throw std::runtime_error("no host-visible coherent memory type");
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  VK_CHECK(vkAllocateMemory(device, &mai, nullptr, &b.memory));
  VK_CHECK(vkBindBufferMemory(device, b.buffer, b.memory, 0));
  VK_CHECK(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

void Device::destroy_buffer(Buffer& b) {
  vkDestroyBuffer(device, b.buffer, nullptr);
  vkFreeMemory(device, b.memory, nullptr);
  b = Buffer{};
}

VkCommandBuffer Device::begin(VkCommandBufferLevel level) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = level;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  VK_CHECK(vkAllocateCommandBuffers(device, &ai, &cb));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkCommandBufferInheritanceInfo inh{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
  if (level == VK_COMMAND_BUFFER_LEVEL_SECONDARY) bi.pInheritanceInfo = &inh;
  VK_CHECK(vkBeginCommandBuffer(cb, &bi));
  return cb;
}

void Device::submit_and_wait(VkCommandBuffer cb, uint32_t queue_index) {
  VK_CHECK(vkEndCommandBuffer(cb));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  VK_CHECK(vkCreateFence(device, &fci, nullptr, &fence));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  VK_CHECK(vkQueueSubmit(queues.at(queue_index), 1, &si, fence));
  VK_CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
  vkDestroyFence(device, fence, nullptr);
  vkFreeCommandBuffers(device, pool, 1, &cb);
}

}  // namespace coopvk::test
