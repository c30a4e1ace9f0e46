// coopvk-info: finds the coopvk device through the system Vulkan loader and prints what
// it reports — identity, queues, memory, extensions, cooperative features/properties —
// then proves the device works with a buffer round trip (fill, copy, read back).
//
// Run it with VK_DRIVER_FILES=<build>/coopvk_icd.json (scripts/run.sh does).
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CHECK_VK(expr)                                                         \
  do {                                                                         \
    VkResult r_ = (expr);                                                      \
    if (r_ != VK_SUCCESS) {                                                    \
      std::fprintf(stderr, "coopvk-info: %s failed (VkResult %d)\n", #expr, r_); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

const char* yes(VkBool32 b) { return b ? "yes" : "no"; }

std::string version(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string hex(const uint8_t* b, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", b[i]);
    s += buf;
  }
  return s;
}

int round_trip(VkPhysicalDevice pd) {
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueCount = 1;
  q.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &q;
  VkDevice dev;
  CHECK_VK(vkCreateDevice(pd, &dci, nullptr, &dev));
  VkQueue queue;
  vkGetDeviceQueue(dev, 0, 0, &queue);

  const VkDeviceSize size = 1 << 20;
  VkBuffer bufs[2];
  VkDeviceMemory mems[2];
  void* ptrs[2];
  for (int i = 0; i < 2; ++i) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    CHECK_VK(vkCreateBuffer(dev, &bci, nullptr, &bufs[i]));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, bufs[i], &req);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = 0;
    CHECK_VK(vkAllocateMemory(dev, &mai, nullptr, &mems[i]));
    CHECK_VK(vkBindBufferMemory(dev, bufs[i], mems[i], 0));
    CHECK_VK(vkMapMemory(dev, mems[i], 0, VK_WHOLE_SIZE, 0, &ptrs[i]));
  }
  auto* src = static_cast<uint32_t*>(ptrs[0]);
  for (uint32_t i = 0; i < size / 4; ++i) src[i] = i * 2654435761u;

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  VkCommandPool pool;
  CHECK_VK(vkCreateCommandPool(dev, &pci, nullptr, &pool));
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  CHECK_VK(vkAllocateCommandBuffers(dev, &ai, &cb));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  CHECK_VK(vkBeginCommandBuffer(cb, &bi));
  VkBufferCopy region{0, 0, size};
  vkCmdCopyBuffer(cb, bufs[0], bufs[1], 1, &region);
  vkCmdFillBuffer(cb, bufs[1], 0, 16, 0xC00BBEEFu);
  CHECK_VK(vkEndCommandBuffer(cb));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  CHECK_VK(vkCreateFence(dev, &fci, nullptr, &fence));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  CHECK_VK(vkQueueSubmit(queue, 1, &si, fence));
  CHECK_VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));

  auto* dst = static_cast<const uint32_t*>(ptrs[1]);
  size_t wrong = 0;
  for (uint32_t i = 0; i < size / 4; ++i) {
    uint32_t expect = i < 4 ? 0xC00BBEEFu : i * 2654435761u;
    wrong += dst[i] != expect;
  }
  std::printf("\nBuffer round trip (1 MiB copy + fill through the queue): %s\n",
              wrong ? "FAILED" : "ok");
  if (wrong) std::printf("  %zu of %llu words wrong\n", wrong, (unsigned long long)(size / 4));

  vkDestroyFence(dev, fence, nullptr);
  vkDestroyCommandPool(dev, pool, nullptr);
  for (int i = 0; i < 2; ++i) {
    vkDestroyBuffer(dev, bufs[i], nullptr);
    vkFreeMemory(dev, mems[i], nullptr);
  }
  vkDestroyDevice(dev, nullptr);
  return wrong ? 1 : 0;
}

void print_cooperative(VkPhysicalDevice pd) {
  VkPhysicalDeviceCooperativeVectorFeaturesNV cv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV};
  VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT m1{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_MAINTENANCE_1_FEATURES_EXT, &cv};
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV, &m1};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, &cm2};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cm};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  std::printf("\nCooperative features:\n");
  std::printf("  cooperativeMatrix (KHR)              %s\n", yes(cm.cooperativeMatrix));
  std::printf("  cooperativeMatrixWorkgroupScope (NV2) %s\n", yes(cm2.cooperativeMatrixWorkgroupScope));
  std::printf("  cooperativeMatrixFlexibleDimensions  %s\n", yes(cm2.cooperativeMatrixFlexibleDimensions));
  std::printf("  cooperativeMatrixProperties2 (EXT)   %s\n", yes(m1.cooperativeMatrixProperties2));
  std::printf("  cooperativeVector (NV)               %s\n", yes(cv.cooperativeVector));

  VkPhysicalDeviceCooperativeVectorPropertiesNV cvp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_PROPERTIES_NV};
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV cm2p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV, &cvp};
  VkPhysicalDeviceCooperativeMatrixPropertiesKHR cmp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR, &cm2p};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &cmp};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  std::printf("Cooperative properties:\n");
  std::printf("  cooperativeMatrixSupportedStages     0x%x\n", cmp.cooperativeMatrixSupportedStages);
  std::printf("  workgroupScopeMaxWorkgroupSize (NV2) %u\n", cm2p.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize);
  std::printf("  flexibleDimensionsMaxDimension (NV2) %u\n", cm2p.cooperativeMatrixFlexibleDimensionsMaxDimension);
  std::printf("  maxCooperativeVectorComponents (NV)  %u\n", cvp.maxCooperativeVectorComponents);
  std::printf("  (VK_NV_cooperative_matrix2 is not advertised yet: its features read 'no'.)\n");
}

}  // namespace

int main() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "coopvk-info";
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance inst;
  CHECK_VK(vkCreateInstance(&ici, nullptr, &inst));
  uint32_t n = 0;
  CHECK_VK(vkEnumeratePhysicalDevices(inst, &n, nullptr));
  std::vector<VkPhysicalDevice> pds(n);
  CHECK_VK(vkEnumeratePhysicalDevices(inst, &n, pds.data()));

  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, &drv};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
  for (VkPhysicalDevice p : pds) {
    vkGetPhysicalDeviceProperties2(p, &props);
    if (std::strcmp(drv.driverName, "coopvk") == 0) {
      pd = p;
      break;
    }
  }
  if (!pd) {
    std::fprintf(stderr,
                 "coopvk-info: the loader found %u device(s), none of them coopvk.\n"
                 "Point the loader at the driver (VK_DRIVER_FILES=<build>/coopvk_icd.json)\n"
                 "or install it (scripts/package.sh, then apt install ./build/coopvk_*.deb).\n",
                 n);
    vkDestroyInstance(inst, nullptr);
    return 1;
  }

  const VkPhysicalDeviceProperties& p = props.properties;
  std::printf("coopvk device\n");
  std::printf("  name           %s\n", p.deviceName);
  std::printf("  driver         %s — %s\n", drv.driverName, drv.driverInfo);
  std::printf("  API version    %s\n", version(p.apiVersion).c_str());
  std::printf("  driver version %s\n", version(p.driverVersion).c_str());
  std::printf("  device UUID    %s\n", hex(id.deviceUUID, VK_UUID_SIZE).c_str());
  std::printf("  cache UUID     %s\n", hex(p.pipelineCacheUUID, VK_UUID_SIZE).c_str());

  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qf(qn);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &qn, qf.data());
  std::printf("\nQueue families:\n");
  for (uint32_t i = 0; i < qn; ++i)
    std::printf("  [%u] %u queue(s): %s%s%s, timestamps %u bits\n", i, qf[i].queueCount,
                (qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) ? "graphics " : "",
                (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) ? "compute " : "",
                (qf[i].queueFlags & VK_QUEUE_TRANSFER_BIT) ? "transfer" : "",
                qf[i].timestampValidBits);

  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  std::printf("\nMemory:\n");
  for (uint32_t i = 0; i < mp.memoryHeapCount; ++i)
    std::printf("  heap %u: %.1f GiB\n", i, double(mp.memoryHeaps[i].size) / (1 << 30));
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    std::printf("  type %u (heap %u): flags 0x%x\n", i, mp.memoryTypes[i].heapIndex,
                mp.memoryTypes[i].propertyFlags);

  uint32_t en = 0;
  CHECK_VK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &en, nullptr));
  std::vector<VkExtensionProperties> exts(en);
  CHECK_VK(vkEnumerateDeviceExtensionProperties(pd, nullptr, &en, exts.data()));
  std::printf("\nDevice extensions (%u):\n", en);
  for (auto& e : exts) std::printf("  %s (rev %u)\n", e.extensionName, e.specVersion);

  print_cooperative(pd);
  int rc = round_trip(pd);
  vkDestroyInstance(inst, nullptr);
  return rc;
}
