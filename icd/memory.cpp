// vkAllocateMemory, mapping, flush/invalidate (no-ops: the one memory type is coherent).
#include "memory.h"

#include "alloc.h"
#include "log.h"
#include "vk_entrypoints.h"

#include <sys/mman.h>

#include <cstring>

using namespace coopvk;

namespace {

// Large allocations come straight from mmap: zeroed lazily by the kernel and returned
// to it on free. Small ones from the heap, zeroed here so contents are deterministic.
constexpr VkDeviceSize kMmapThreshold = 1 << 20;
constexpr VkDeviceSize kHugePageSize = 2 << 20;

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_AllocateMemory(VkDevice device,
                                                     const VkMemoryAllocateInfo* info,
                                                     const VkAllocationCallbacks* pAllocator,
                                                     VkDeviceMemory* pMemory) {
  Device* dev = from_handle<Device>(device);
  if (info->memoryTypeIndex != 0) {
    COOPVK_ERROR("vkAllocateMemory: memory type %u does not exist (only type 0)", info->memoryTypeIndex);
    return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  if (info->allocationSize == 0 || info->allocationSize > dev->physical->heap_size) {
    COOPVK_ERROR("vkAllocateMemory: size %llu is outside (0, %llu]",
                 static_cast<unsigned long long>(info->allocationSize),
                 static_cast<unsigned long long>(dev->physical->heap_size));
    return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  for (auto* s = static_cast<const VkBaseInStructure*>(info->pNext); s; s = s->pNext) {
    if (s->sType == VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR ||
        s->sType == VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT ||
        s->sType == VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO) {
      COOPVK_ERROR("vkAllocateMemory: external memory is not supported");
      return VK_ERROR_INVALID_EXTERNAL_HANDLE;
    }
  }
  DeviceMemory* mem = vk_new<DeviceMemory>(pick_allocator(pAllocator, dev->alloc()),
                                           VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!mem) return VK_ERROR_OUT_OF_HOST_MEMORY;
  mem->size = info->allocationSize;
  if (mem->size >= kMmapThreshold) {
    void* p = mmap(nullptr, mem->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) p = nullptr;
    // Shaders walk large buffers with row strides of kilobytes (a matrix's rows: each on a
    // page of its own with 4 KiB pages), so the TLB misses with small pages; ask for
    // transparent huge pages, which the kernel grants where THP is "madvise" (Debian's
    // default). Only advice: without them everything still works.
    if (p && mem->size >= kHugePageSize) madvise(p, mem->size, MADV_HUGEPAGE);
    mem->data = static_cast<uint8_t*>(p);
    mem->mmapped = true;
  } else {
    void* p = nullptr;
    if (posix_memalign(&p, kMemoryAlignment, mem->size) != 0) p = nullptr;
    if (p) std::memset(p, 0, mem->size);
    mem->data = static_cast<uint8_t*>(p);
  }
  if (!mem->data) {
    vk_delete(pick_allocator(pAllocator, dev->alloc()), mem);
    COOPVK_ERROR("vkAllocateMemory: the host could not provide %llu bytes",
                 static_cast<unsigned long long>(info->allocationSize));
    return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  *pMemory = to_handle<VkDeviceMemory>(mem);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_FreeMemory(VkDevice device, VkDeviceMemory memory,
                                             const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  DeviceMemory* mem = from_handle<DeviceMemory>(memory);
  if (!mem) return;
  if (mem->mmapped)
    munmap(mem->data, mem->size);
  else
    std::free(mem->data);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), mem);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_MapMemory(VkDevice, VkDeviceMemory memory, VkDeviceSize offset,
                                                VkDeviceSize size, VkMemoryMapFlags, void** ppData) {
  DeviceMemory* mem = from_handle<DeviceMemory>(memory);
  if (offset >= mem->size || (size != VK_WHOLE_SIZE && (size == 0 || size > mem->size - offset))) {
    COOPVK_ERROR("vkMapMemory: range [%llu, +%llu) is outside the %llu-byte allocation",
                 static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size),
                 static_cast<unsigned long long>(mem->size));
    *ppData = nullptr;
    return VK_ERROR_MEMORY_MAP_FAILED;
  }
  if (mem->mapped) {
    COOPVK_ERROR("vkMapMemory: memory is already mapped");
    *ppData = nullptr;
    return VK_ERROR_MEMORY_MAP_FAILED;
  }
  mem->mapped = true;
  *ppData = mem->data + offset;
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_UnmapMemory(VkDevice, VkDeviceMemory memory) {
  from_handle<DeviceMemory>(memory)->mapped = false;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_FlushMappedMemoryRanges(VkDevice, uint32_t,
                                                              const VkMappedMemoryRange*) {
  return VK_SUCCESS;  // host-coherent: CPU writes are the device's writes
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_InvalidateMappedMemoryRanges(VkDevice, uint32_t,
                                                                   const VkMappedMemoryRange*) {
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetDeviceMemoryCommitment(VkDevice, VkDeviceMemory memory,
                                                            VkDeviceSize* pCommitted) {
  *pCommitted = from_handle<DeviceMemory>(memory)->size;
}

VKAPI_ATTR uint64_t VKAPI_CALL coopvk_GetDeviceMemoryOpaqueCaptureAddress(
    VkDevice, const VkDeviceMemoryOpaqueCaptureAddressInfo* info) {
  return reinterpret_cast<uint64_t>(from_handle<DeviceMemory>(info->memory)->data);
}
