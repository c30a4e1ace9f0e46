// Buffers: creation, memory requirements, binding and device addresses.
#include "alloc.h"
#include "log.h"
#include "memory.h"
#include "vk_entrypoints.h"

using namespace coopvk;

namespace {

constexpr VkDeviceSize kBufferAlignment = 64;  // a cache line; >= every offset alignment limit

void requirements_for(VkDeviceSize size, VkMemoryRequirements* r) {
  r->size = (size + kBufferAlignment - 1) & ~(kBufferAlignment - 1);
  r->alignment = kBufferAlignment;
  r->memoryTypeBits = 1;
}

void fill_requirements2(VkDeviceSize size, VkMemoryRequirements2* r) {
  requirements_for(size, &r->memoryRequirements);
  if (auto* d = find_in_chain_mut<VkMemoryDedicatedRequirements>(
          r->pNext, VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS)) {
    d->prefersDedicatedAllocation = VK_FALSE;
    d->requiresDedicatedAllocation = VK_FALSE;
  }
}

VkResult bind(const VkBindBufferMemoryInfo& b) {
  Buffer* buf = from_handle<Buffer>(b.buffer);
  DeviceMemory* mem = from_handle<DeviceMemory>(b.memory);
  if (b.memoryOffset % kBufferAlignment != 0 || b.memoryOffset > mem->size ||
      buf->size > mem->size - b.memoryOffset) {
    COOPVK_ERROR("vkBindBufferMemory: %llu bytes at offset %llu do not fit a %llu-byte allocation "
                 "with alignment %llu",
                 static_cast<unsigned long long>(buf->size),
                 static_cast<unsigned long long>(b.memoryOffset),
                 static_cast<unsigned long long>(mem->size),
                 static_cast<unsigned long long>(kBufferAlignment));
    return VK_ERROR_UNKNOWN;
  }
  buf->memory = mem;
  buf->offset = b.memoryOffset;
  return VK_SUCCESS;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateBuffer(VkDevice device, const VkBufferCreateInfo* info,
                                                   const VkAllocationCallbacks* pAllocator,
                                                   VkBuffer* pBuffer) {
  Device* dev = from_handle<Device>(device);
  if (info->flags & (VK_BUFFER_CREATE_SPARSE_BINDING_BIT | VK_BUFFER_CREATE_SPARSE_RESIDENCY_BIT |
                     VK_BUFFER_CREATE_SPARSE_ALIASED_BIT | VK_BUFFER_CREATE_PROTECTED_BIT)) {
    COOPVK_ERROR("vkCreateBuffer: sparse and protected buffers are not supported (flags 0x%x)",
                 info->flags);
    return VK_ERROR_FEATURE_NOT_PRESENT;
  }
  if (info->size == 0 || info->size > dev->physical->heap_size) {
    COOPVK_ERROR("vkCreateBuffer: size %llu is outside (0, maxBufferSize]",
                 static_cast<unsigned long long>(info->size));
    return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  Buffer* b = vk_new<Buffer>(pick_allocator(pAllocator, dev->alloc()), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!b) return VK_ERROR_OUT_OF_HOST_MEMORY;
  b->size = info->size;
  b->usage = info->usage;
  b->flags = info->flags;
  *pBuffer = to_handle<VkBuffer>(b);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyBuffer(VkDevice device, VkBuffer buffer,
                                                const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<Buffer>(buffer));
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetBufferMemoryRequirements(VkDevice, VkBuffer buffer,
                                                              VkMemoryRequirements* r) {
  requirements_for(from_handle<Buffer>(buffer)->size, r);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetBufferMemoryRequirements2(
    VkDevice, const VkBufferMemoryRequirementsInfo2* info, VkMemoryRequirements2* r) {
  fill_requirements2(from_handle<Buffer>(info->buffer)->size, r);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetDeviceBufferMemoryRequirements(
    VkDevice, const VkDeviceBufferMemoryRequirements* info, VkMemoryRequirements2* r) {
  fill_requirements2(info->pCreateInfo->size, r);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_BindBufferMemory(VkDevice, VkBuffer buffer,
                                                       VkDeviceMemory memory, VkDeviceSize offset) {
  VkBindBufferMemoryInfo b{VK_STRUCTURE_TYPE_BIND_BUFFER_MEMORY_INFO, nullptr, buffer, memory, offset};
  return bind(b);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_BindBufferMemory2(VkDevice, uint32_t count,
                                                        const VkBindBufferMemoryInfo* infos) {
  for (uint32_t i = 0; i < count; ++i)
    if (VkResult r = bind(infos[i]); r != VK_SUCCESS) return r;
  return VK_SUCCESS;
}

VKAPI_ATTR VkDeviceAddress VKAPI_CALL coopvk_GetBufferDeviceAddress(
    VkDevice, const VkBufferDeviceAddressInfo* info) {
  return reinterpret_cast<VkDeviceAddress>(from_handle<Buffer>(info->buffer)->data());
}

VKAPI_ATTR uint64_t VKAPI_CALL coopvk_GetBufferOpaqueCaptureAddress(
    VkDevice, const VkBufferDeviceAddressInfo* info) {
  return reinterpret_cast<uint64_t>(from_handle<Buffer>(info->buffer)->data());
}
