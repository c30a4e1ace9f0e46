// The loader-driver interface, checked against the driver directly (no loader):
// negotiation, what each proc-addr function resolves, dispatchable-handle layout,
// loud stubs for unsupported commands, and VkAllocationCallbacks.
#include <catch2/catch_test_macros.hpp>

#include <vulkan/vk_icd.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "direct_icd.h"

using namespace coopvk::test;

namespace {

struct CoreCommand {
  const char* name;
  bool device_level;
};
const CoreCommand kCoreCommands[] = {
#include "vk_core_command_names.inc"
};

bool has_loader_magic(const void* handle) {
  uintptr_t first;
  std::memcpy(&first, handle, sizeof(first));
  return (first & 0xffffffff) == ICD_LOADER_MAGIC;
}

// A small device with one queue, created through the driver's own entry points.
struct DirectDevice {
  const DirectIcd& icd;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  PFN_vkGetDeviceProcAddr gdpa;

  DirectDevice(const DirectIcd& i, std::vector<const char*> exts = {},
               const VkAllocationCallbacks* cb = nullptr)
      : icd(i) {
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueCount = 1;
    q.pQueuePriorities = &prio;
    VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &q;
    ci.enabledExtensionCount = uint32_t(exts.size());
    ci.ppEnabledExtensionNames = exts.data();
    if (icd.get<PFN_vkCreateDevice>("vkCreateDevice")(icd.physical, &ci, cb, &device) != VK_SUCCESS)
      throw std::runtime_error("vkCreateDevice failed");
    gdpa = icd.get<PFN_vkGetDeviceProcAddr>("vkGetDeviceProcAddr");
    icd.get<PFN_vkGetDeviceQueue>("vkGetDeviceQueue")(device, 0, 0, &queue);
  }
  ~DirectDevice() { icd.get<PFN_vkDestroyDevice>("vkDestroyDevice")(device, nullptr); }
  template <typename PFN>
  PFN fn(const char* name) const {
    auto f = reinterpret_cast<PFN>(gdpa(device, name));
    if (!f) throw std::runtime_error(std::string("vkGetDeviceProcAddr: no ") + name);
    return f;
  }
};

}  // namespace

TEST_CASE("interface negotiation picks min(loader, 7) and refuses ancient loaders") {
  DirectIcd icd;
  auto negotiate = reinterpret_cast<PFN_vkNegotiateLoaderICDInterfaceVersion>(
      dlsym(icd.library(), "vk_icdNegotiateLoaderICDInterfaceVersion"));
  REQUIRE(negotiate);
  uint32_t v = 7;
  CHECK(negotiate(&v) == VK_SUCCESS);
  CHECK(v == 7);
  v = 42;
  CHECK(negotiate(&v) == VK_SUCCESS);
  CHECK(v == 7);
  v = 5;
  CHECK(negotiate(&v) == VK_SUCCESS);
  CHECK(v == 5);
  v = 1;
  CHECK(negotiate(&v) == VK_ERROR_INCOMPATIBLE_DRIVER);
  // Version 7: the interface functions are also reachable through the proc-addr function.
  CHECK(reinterpret_cast<void*>(icd.gipa(nullptr, "vk_icdNegotiateLoaderICDInterfaceVersion")) ==
        reinterpret_cast<void*>(negotiate));
  CHECK(icd.gipa(nullptr, "vk_icdGetPhysicalDeviceProcAddr") != nullptr);
}

TEST_CASE("only the three interface symbols are exported") {
  DirectIcd icd;
  CHECK(dlsym(icd.library(), "vkCreateInstance") == nullptr);
  CHECK(dlsym(icd.library(), "coopvk_CreateInstance") == nullptr);
  CHECK(dlsym(icd.library(), "vk_icdGetPhysicalDeviceProcAddr") != nullptr);
}

TEST_CASE("vkGetInstanceProcAddr with a null instance gives global commands only") {
  DirectIcd icd;
  CHECK(icd.gipa(nullptr, "vkCreateInstance") != nullptr);
  CHECK(icd.gipa(nullptr, "vkEnumerateInstanceExtensionProperties") != nullptr);
  CHECK(icd.gipa(nullptr, "vkEnumerateInstanceVersion") != nullptr);
  CHECK(icd.gipa(nullptr, "vkCreateDevice") == nullptr);
  CHECK(icd.gipa(nullptr, "vkCmdCopyBuffer") == nullptr);
  CHECK(icd.gipa(icd.instance, "vkNoSuchCommand") == nullptr);
}

TEST_CASE("every core 1.0-1.3 command resolves") {
  DirectIcd icd;
  DirectDevice dev(icd);
  size_t n = 0;
  for (const CoreCommand& c : kCoreCommands) {
    INFO(c.name);
    CHECK(icd.gipa(icd.instance, c.name) != nullptr);
    if (c.device_level) CHECK(dev.gdpa(dev.device, c.name) != nullptr);
    ++n;
  }
  CHECK(n > 200);
}

TEST_CASE("vk_icdGetPhysicalDeviceProcAddr answers only the physical-device commands the driver has") {
  DirectIcd icd;
  auto gpdpa = reinterpret_cast<PFN_vkVoidFunction (*)(VkInstance, const char*)>(
      dlsym(icd.library(), "vk_icdGetPhysicalDeviceProcAddr"));
  REQUIRE(gpdpa);
  CHECK(gpdpa(icd.instance, "vkGetPhysicalDeviceProperties2") != nullptr);
  CHECK(gpdpa(icd.instance, "vkGetPhysicalDeviceSurfaceSupportKHR") == nullptr);  // no such extension here
  CHECK(gpdpa(icd.instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV") != nullptr);
  CHECK(gpdpa(icd.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV") != nullptr);
  CHECK(gpdpa(icd.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR") != nullptr);  // advertised
  CHECK(gpdpa(icd.instance, "vkGetPhysicalDeviceCooperativeVectorPropertiesNV") != nullptr);  // advertised
  CHECK(gpdpa(icd.instance, "vkCmdCopyBuffer") == nullptr);  // not a physical-device command
}

TEST_CASE("vkGetDeviceProcAddr gates extension commands on the enabled extensions") {
  DirectIcd icd;
  DirectDevice dev(icd, {"VK_KHR_synchronization2"});
  CHECK(dev.gdpa(dev.device, "vkQueueSubmit2") != nullptr);
  CHECK(dev.gdpa(dev.device, "vkQueueSubmit2KHR") != nullptr);
  CHECK(dev.gdpa(dev.device, "vkResetQueryPoolEXT") == nullptr);  // VK_EXT_host_query_reset off
  CHECK(dev.gdpa(dev.device, "vkCmdConvertCooperativeVectorMatrixNV") == nullptr);
  CHECK(dev.gdpa(dev.device, "vkGetPhysicalDeviceProperties") == nullptr);  // not a device command
}

TEST_CASE("dispatchable handles start with the loader's magic") {
  DirectIcd icd;
  CHECK(has_loader_magic(icd.instance));
  CHECK(has_loader_magic(icd.physical));
  DirectDevice dev(icd);
  CHECK(has_loader_magic(dev.device));
  CHECK(has_loader_magic(dev.queue));
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  VkCommandPool pool;
  REQUIRE(dev.fn<PFN_vkCreateCommandPool>("vkCreateCommandPool")(dev.device, &pci, nullptr, &pool) == VK_SUCCESS);
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  REQUIRE(dev.fn<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers")(dev.device, &ai, &cb) == VK_SUCCESS);
  CHECK(has_loader_magic(cb));
  dev.fn<PFN_vkDestroyCommandPool>("vkDestroyCommandPool")(dev.device, pool, nullptr);
}

TEST_CASE("unsupported commands fail loudly instead of doing nothing") {
  DirectIcd icd;
  DirectDevice dev(icd);
  SECTION("a create call returns an error") {
    VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = VK_FORMAT_R8G8B8A8_UNORM;
    ici.extent = {4, 4, 1};
    ici.mipLevels = ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.usage = VK_IMAGE_USAGE_STORAGE_BIT;
    VkImage img = VK_NULL_HANDLE;
    CHECK(dev.fn<PFN_vkCreateImage>("vkCreateImage")(dev.device, &ici, nullptr, &img) ==
          VK_ERROR_FEATURE_NOT_PRESENT);
  }
  SECTION("an unsupported vkCmd* makes vkEndCommandBuffer fail") {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VkCommandPool pool;
    REQUIRE(dev.fn<PFN_vkCreateCommandPool>("vkCreateCommandPool")(dev.device, &pci, nullptr, &pool) == VK_SUCCESS);
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    REQUIRE(dev.fn<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers")(dev.device, &ai, &cb) == VK_SUCCESS);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    REQUIRE(dev.fn<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer")(cb, &bi) == VK_SUCCESS);
    dev.fn<PFN_vkCmdDraw>("vkCmdDraw")(cb, 3, 1, 0, 0);
    CHECK(dev.fn<PFN_vkEndCommandBuffer>("vkEndCommandBuffer")(cb) == VK_ERROR_FEATURE_NOT_PRESENT);
    dev.fn<PFN_vkDestroyCommandPool>("vkDestroyCommandPool")(dev.device, pool, nullptr);
  }
  SECTION("malformed SPIR-V fails vkCreateShaderModule cleanly") {
    auto create = dev.fn<PFN_vkCreateShaderModule>("vkCreateShaderModule");
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    VkShaderModule sm = VK_NULL_HANDLE;
    uint32_t bad_magic[5] = {0x03022307, 0x00010600, 0, 1, 0};
    smci.codeSize = sizeof(bad_magic);
    smci.pCode = bad_magic;
    CHECK(create(dev.device, &smci, nullptr, &sm) == VK_ERROR_UNKNOWN);
    uint32_t truncated[3] = {0x07230203, 0x00010600, 0};  // header needs 5 words
    smci.codeSize = sizeof(truncated);
    smci.pCode = truncated;
    CHECK(create(dev.device, &smci, nullptr, &sm) == VK_ERROR_UNKNOWN);
    CHECK(sm == VK_NULL_HANDLE);
  }
}

namespace {

// Counts live allocations made through the callbacks, and can be told to fail.
struct CountingAllocator {
  std::mutex mutex;
  std::map<void*, size_t> live;
  std::atomic<int> total{0};
  std::atomic<int> bad_frees{0};
  bool fail = false;

  static void* VKAPI_PTR alloc(void* user, size_t size, size_t align, VkSystemAllocationScope) {
    auto* self = static_cast<CountingAllocator*>(user);
    if (self->fail) return nullptr;
    void* p = nullptr;
    if (posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, size ? size : 1)) return nullptr;
    std::lock_guard<std::mutex> lock(self->mutex);
    self->live[p] = size;
    self->total++;
    return p;
  }
  static void* VKAPI_PTR realloc_fn(void*, void*, size_t, size_t, VkSystemAllocationScope) {
    return nullptr;  // the driver never reallocates
  }
  static void VKAPI_PTR free_fn(void* user, void* p) {
    if (!p) return;
    auto* self = static_cast<CountingAllocator*>(user);
    std::lock_guard<std::mutex> lock(self->mutex);
    if (self->live.erase(p) != 1) {
      self->bad_frees++;  // not allocated here: never free it
      return;
    }
    std::free(p);
  }
  VkAllocationCallbacks callbacks() {
    VkAllocationCallbacks cb{};
    cb.pUserData = this;
    cb.pfnAllocation = alloc;
    cb.pfnReallocation = realloc_fn;
    cb.pfnFree = free_fn;
    return cb;
  }
};

}  // namespace

TEST_CASE("VkAllocationCallbacks see every object allocation and its free") {
  DirectIcd icd;  // provides the library; this test makes its own instance
  CountingAllocator counter;
  VkAllocationCallbacks cb = counter.callbacks();
  auto create_instance = reinterpret_cast<PFN_vkCreateInstance>(icd.gipa(nullptr, "vkCreateInstance"));
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  VkInstance inst;
  REQUIRE(create_instance(&ici, &cb, &inst) == VK_SUCCESS);
  CHECK(counter.live.size() == 1);
  auto gipa = icd.gipa;
  VkPhysicalDevice pd;
  uint32_t n = 1;
  reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(gipa(inst, "vkEnumeratePhysicalDevices"))(inst, &n, &pd);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueCount = 1;
  q.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &q;
  VkDevice dev;
  REQUIRE(reinterpret_cast<PFN_vkCreateDevice>(gipa(inst, "vkCreateDevice"))(pd, &dci, &cb, &dev) == VK_SUCCESS);
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(inst, "vkGetDeviceProcAddr"));
  const size_t after_device = counter.live.size();
  CHECK(after_device >= 3);  // instance, device, queue

  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  auto create_fence = reinterpret_cast<PFN_vkCreateFence>(gdpa(dev, "vkCreateFence"));
  REQUIRE(create_fence(dev, &fci, &cb, &fence) == VK_SUCCESS);
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = 64;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer buf;
  REQUIRE(reinterpret_cast<PFN_vkCreateBuffer>(gdpa(dev, "vkCreateBuffer"))(dev, &bci, &cb, &buf) == VK_SUCCESS);
  CHECK(counter.live.size() == after_device + 2);

  SECTION("an allocator that fails gives VK_ERROR_OUT_OF_HOST_MEMORY") {
    counter.fail = true;
    VkFence f2 = VK_NULL_HANDLE;
    CHECK(create_fence(dev, &fci, &cb, &f2) == VK_ERROR_OUT_OF_HOST_MEMORY);
    counter.fail = false;
  }
  reinterpret_cast<PFN_vkDestroyBuffer>(gdpa(dev, "vkDestroyBuffer"))(dev, buf, &cb);
  reinterpret_cast<PFN_vkDestroyFence>(gdpa(dev, "vkDestroyFence"))(dev, fence, &cb);
  CHECK(counter.live.size() == after_device);
  reinterpret_cast<PFN_vkDestroyDevice>(gdpa(dev, "vkDestroyDevice"))(dev, &cb);
  reinterpret_cast<PFN_vkDestroyInstance>(gipa(inst, "vkDestroyInstance"))(inst, &cb);
  CHECK(counter.live.empty());
  CHECK(counter.bad_frees.load() == 0);
  CHECK(counter.total.load() >= 5);
}
