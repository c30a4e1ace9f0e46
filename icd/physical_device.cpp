// Identity and the simple physical-device queries (queues, memory, formats, external
// handles, tools). Features and properties live in their own files.
#include "physical_device.h"

#include "disk_cache.h"
#include "log.h"
#include "vk_entrypoints.h"

#include <cpuid.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

using namespace coopvk;

namespace coopvk {
VkResult enumerate_device_extensions(uint32_t* count, VkExtensionProperties* out);
}

namespace {

// 128-bit FNV-1a: stable identifiers from stable strings.
void hash_uuid(const std::string& text, uint8_t out[VK_UUID_SIZE]) {
  unsigned __int128 h = (static_cast<unsigned __int128>(0x6c62272e07bb0142ull) << 64) |
                        0x62b821756295c58dull;
  const unsigned __int128 prime = (static_cast<unsigned __int128>(0x0000000001000000ull) << 64) |
                                  0x000000000000013Bull;
  for (unsigned char c : text) {
    h ^= c;
    h *= prime;
  }
  for (unsigned i = 0; i < VK_UUID_SIZE; ++i) out[i] = static_cast<uint8_t>(h >> (8 * i));
}

std::string cpu_brand() {
  unsigned regs[12] = {};
  unsigned max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext < 0x80000004u) return "unknown CPU";
  for (unsigned i = 0; i < 3; ++i)
    __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2], &regs[4 * i + 3]);
  std::string s(reinterpret_cast<const char*>(regs), sizeof(regs));
  s = s.c_str();
  size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "unknown CPU";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

}  // namespace

void PhysicalDevice::init(const VkAllocationCallbacks* owner_allocator) {
  instance_allocator = owner_allocator;
  const std::string brand = cpu_brand();
  std::snprintf(device_name, sizeof(device_name), "coopvk (%s)", brand.c_str());
  const std::string version = "coopvk " COOPVK_VERSION_STRING;
  // The build as well as the version: a rebuilt driver may compile differently, so its
  // application caches start over rather than link stale code (as Mesa's build-id UUIDs).
  hash_uuid(version + " pipeline-cache " + brand + " " + driver_build_id(), pipeline_cache_uuid);
  hash_uuid("coopvk device " + brand, device_uuid);
  hash_uuid(version + " driver", driver_uuid);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  VkDeviceSize ram = pages > 0 && page > 0 ? VkDeviceSize(pages) * VkDeviceSize(page) : (1ull << 32);
  heap_size = ram / 4 * 3;  // leave the host room to breathe
  unsigned hc = std::thread::hardware_concurrency();
  cpu_count = hc ? hc : 1;
}

void coopvk::fill_memory_properties(const PhysicalDevice* pd, VkPhysicalDeviceMemoryProperties* p) {
  std::memset(p, 0, sizeof(*p));
  // One heap, one type: all memory is host memory, so it is at once device-local,
  // host-visible, coherent and cached.
  p->memoryHeapCount = 1;
  p->memoryHeaps[0].size = pd->heap_size;
  p->memoryHeaps[0].flags = VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
  p->memoryTypeCount = 1;
  p->memoryTypes[0].heapIndex = 0;
  p->memoryTypes[0].propertyFlags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                    VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
}

static void fill_queue_family(VkQueueFamilyProperties* q) {
  q->queueFlags = kQueueFlags;
  q->queueCount = kQueuesPerFamily;
  q->timestampValidBits = 64;
  q->minImageTransferGranularity = {1, 1, 1};
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceQueueFamilyProperties(
    VkPhysicalDevice, uint32_t* pCount, VkQueueFamilyProperties* pProps) {
  VkQueueFamilyProperties q{};
  fill_queue_family(&q);
  enumerate_out(&q, kQueueFamilyCount, pCount, pProps);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceQueueFamilyProperties2(
    VkPhysicalDevice, uint32_t* pCount, VkQueueFamilyProperties2* pProps) {
  if (!pProps) {
    *pCount = kQueueFamilyCount;
    return;
  }
  if (*pCount > kQueueFamilyCount) *pCount = kQueueFamilyCount;
  for (uint32_t i = 0; i < *pCount; ++i) fill_queue_family(&pProps[i].queueFamilyProperties);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceMemoryProperties(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceMemoryProperties* p) {
  fill_memory_properties(from_handle<PhysicalDevice>(physicalDevice), p);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceMemoryProperties2(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceMemoryProperties2* p) {
  fill_memory_properties(from_handle<PhysicalDevice>(physicalDevice), &p->memoryProperties);
}

// coopvk has no images, samplers or texel buffers: no format supports any feature,
// which is what these queries report (truthfully) rather than an error.
VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceFormatProperties(
    VkPhysicalDevice, VkFormat, VkFormatProperties* p) {
  std::memset(p, 0, sizeof(*p));
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceFormatProperties2(
    VkPhysicalDevice, VkFormat, VkFormatProperties2* p) {
  std::memset(&p->formatProperties, 0, sizeof(p->formatProperties));
  if (auto* f3 = find_in_chain_mut<VkFormatProperties3>(p->pNext, VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_3)) {
    f3->linearTilingFeatures = f3->optimalTilingFeatures = f3->bufferFeatures = 0;
  }
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceImageFormatProperties(
    VkPhysicalDevice, VkFormat, VkImageType, VkImageTiling, VkImageUsageFlags,
    VkImageCreateFlags, VkImageFormatProperties* p) {
  std::memset(p, 0, sizeof(*p));
  return VK_ERROR_FORMAT_NOT_SUPPORTED;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceImageFormatProperties2(
    VkPhysicalDevice, const VkPhysicalDeviceImageFormatInfo2*, VkImageFormatProperties2* p) {
  std::memset(&p->imageFormatProperties, 0, sizeof(p->imageFormatProperties));
  return VK_ERROR_FORMAT_NOT_SUPPORTED;
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceSparseImageFormatProperties(
    VkPhysicalDevice, VkFormat, VkImageType, VkSampleCountFlagBits, VkImageUsageFlags,
    VkImageTiling, uint32_t* pCount, VkSparseImageFormatProperties*) {
  *pCount = 0;
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceSparseImageFormatProperties2(
    VkPhysicalDevice, const VkPhysicalDeviceSparseImageFormatInfo2*, uint32_t* pCount,
    VkSparseImageFormatProperties2*) {
  *pCount = 0;
}

// No external memory, fence or semaphore handle types are supported.
VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceExternalBufferProperties(
    VkPhysicalDevice, const VkPhysicalDeviceExternalBufferInfo*, VkExternalBufferProperties* p) {
  std::memset(&p->externalMemoryProperties, 0, sizeof(p->externalMemoryProperties));
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceExternalFenceProperties(
    VkPhysicalDevice, const VkPhysicalDeviceExternalFenceInfo*, VkExternalFenceProperties* p) {
  p->exportFromImportedHandleTypes = p->compatibleHandleTypes = 0;
  p->externalFenceFeatures = 0;
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceExternalSemaphoreProperties(
    VkPhysicalDevice, const VkPhysicalDeviceExternalSemaphoreInfo*,
    VkExternalSemaphoreProperties* p) {
  p->exportFromImportedHandleTypes = p->compatibleHandleTypes = 0;
  p->externalSemaphoreFeatures = 0;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceToolProperties(
    VkPhysicalDevice, uint32_t* pToolCount, VkPhysicalDeviceToolProperties*) {
  *pToolCount = 0;
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EnumerateDeviceExtensionProperties(
    VkPhysicalDevice, const char* pLayerName, uint32_t* pCount, VkExtensionProperties* pProps) {
  if (pLayerName) return VK_ERROR_LAYER_NOT_PRESENT;
  return enumerate_device_extensions(pCount, pProps);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EnumerateDeviceLayerProperties(
    VkPhysicalDevice, uint32_t* pCount, VkLayerProperties*) {
  *pCount = 0;
  return VK_SUCCESS;
}
