// vkCmdCopyBuffer(2), vkCmdFillBuffer, vkCmdUpdateBuffer. Ranges are checked when
// recorded, so execution can trust them.
#include "command_buffer.h"
#include "memory.h"
#include "vk_entrypoints.h"

#include <cstring>
#include <vector>

using namespace coopvk;

namespace {

bool in_range(const Buffer* b, VkDeviceSize offset, VkDeviceSize size) {
  return b->memory && offset <= b->size && size <= b->size - offset;
}

void record_copy(CommandBuffer* cb, Buffer* src, Buffer* dst, std::vector<VkBufferCopy> regions,
                 const char* fn) {
  for (const VkBufferCopy& r : regions) {
    if (r.size == 0 || !in_range(src, r.srcOffset, r.size) || !in_range(dst, r.dstOffset, r.size)) {
      cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, fn);
      return;
    }
  }
  cb->record([src, dst, regions = std::move(regions)](ExecContext&) {
    for (const VkBufferCopy& r : regions)
      std::memmove(dst->data() + r.dstOffset, src->data() + r.srcOffset, r.size);
  });
}

}  // namespace

VKAPI_ATTR void VKAPI_CALL coopvk_CmdCopyBuffer(VkCommandBuffer commandBuffer, VkBuffer srcBuffer,
                                                VkBuffer dstBuffer, uint32_t regionCount,
                                                const VkBufferCopy* pRegions) {
  record_copy(to_cb(commandBuffer), from_handle<Buffer>(srcBuffer), from_handle<Buffer>(dstBuffer),
              std::vector<VkBufferCopy>(pRegions, pRegions + regionCount),
              "vkCmdCopyBuffer: a region is empty, outside a buffer, or a buffer has no memory");
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdCopyBuffer2(VkCommandBuffer commandBuffer,
                                                 const VkCopyBufferInfo2* info) {
  std::vector<VkBufferCopy> regions;
  for (uint32_t i = 0; i < info->regionCount; ++i)
    regions.push_back({info->pRegions[i].srcOffset, info->pRegions[i].dstOffset,
                       info->pRegions[i].size});
  record_copy(to_cb(commandBuffer), from_handle<Buffer>(info->srcBuffer),
              from_handle<Buffer>(info->dstBuffer), std::move(regions),
              "vkCmdCopyBuffer2: a region is empty, outside a buffer, or a buffer has no memory");
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdFillBuffer(VkCommandBuffer commandBuffer, VkBuffer dstBuffer,
                                                VkDeviceSize dstOffset, VkDeviceSize size,
                                                uint32_t data) {
  CommandBuffer* cb = to_cb(commandBuffer);
  Buffer* dst = from_handle<Buffer>(dstBuffer);
  if (size == VK_WHOLE_SIZE && dstOffset <= dst->size) {
    // "the remaining size rounded down to a multiple of 4" (vkCmdFillBuffer).
    size = (dst->size - dstOffset) & ~VkDeviceSize(3);
  }
  if (dstOffset % 4 || size % 4 || size == 0 || !in_range(dst, dstOffset, size)) {
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT,
             "vkCmdFillBuffer: offset/size must be multiples of 4 inside the bound buffer");
    return;
  }
  cb->record([dst, dstOffset, size, data](ExecContext&) {
    uint8_t* p = dst->data() + dstOffset;
    for (VkDeviceSize i = 0; i < size; i += 4) std::memcpy(p + i, &data, 4);
  });
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdUpdateBuffer(VkCommandBuffer commandBuffer, VkBuffer dstBuffer,
                                                  VkDeviceSize dstOffset, VkDeviceSize dataSize,
                                                  const void* pData) {
  CommandBuffer* cb = to_cb(commandBuffer);
  Buffer* dst = from_handle<Buffer>(dstBuffer);
  if (dstOffset % 4 || dataSize % 4 || dataSize == 0 || dataSize > 65536 || !pData ||
      !in_range(dst, dstOffset, dataSize)) {
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT,
             "vkCmdUpdateBuffer: need 4-byte aligned offset/size, size <= 65536, inside the buffer");
    return;
  }
  // The data is copied now: the application may reuse pData as soon as this returns.
  std::vector<uint8_t> bytes(static_cast<const uint8_t*>(pData),
                             static_cast<const uint8_t*>(pData) + dataSize);
  cb->record([dst, dstOffset, bytes = std::move(bytes)](ExecContext&) {
    std::memcpy(dst->data() + dstOffset, bytes.data(), bytes.size());
  });
}
