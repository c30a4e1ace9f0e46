// Timestamp query pools (the only query type: there is no graphics to count).
#include "alloc.h"
#include "command_buffer.h"
#include "log.h"
#include "vk_entrypoints.h"

#include <atomic>
#include <cstring>
#include <ctime>
#include <memory>

using namespace coopvk;

namespace {

struct QueryPool {
  uint32_t count = 0;
  std::unique_ptr<uint64_t[]> values;
  std::unique_ptr<std::atomic<bool>[]> available;
};

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void reset_range(Device* dev, QueryPool* p, uint32_t first, uint32_t count) {
  std::lock_guard<std::mutex> lock(dev->sync_mutex);
  for (uint32_t i = first; i < first + count && i < p->count; ++i) p->available[i] = false;
}

void record_timestamp(VkCommandBuffer commandBuffer, VkQueryPool queryPool, uint32_t query) {
  CommandBuffer* cb = to_cb(commandBuffer);
  QueryPool* p = from_handle<QueryPool>(queryPool);
  if (query >= p->count) {
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, "vkCmdWriteTimestamp: query index out of range");
    return;
  }
  cb->record([p, query](ExecContext& ctx) {
    {
      std::lock_guard<std::mutex> lock(ctx.device->sync_mutex);
      p->values[query] = now_ns();
      p->available[query] = true;
    }
    ctx.device->sync_cv.notify_all();
  });
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateQueryPool(VkDevice device, const VkQueryPoolCreateInfo* info,
                                                      const VkAllocationCallbacks* pAllocator,
                                                      VkQueryPool* pPool) {
  Device* dev = from_handle<Device>(device);
  if (info->queryType != VK_QUERY_TYPE_TIMESTAMP) {
    COOPVK_ERROR("vkCreateQueryPool: query type %d is not supported (timestamps only)", info->queryType);
    return VK_ERROR_FEATURE_NOT_PRESENT;
  }
  if (info->queryCount == 0) {
    COOPVK_ERROR("vkCreateQueryPool: queryCount must be greater than 0");
    return VK_ERROR_INITIALIZATION_FAILED;
  }
  QueryPool* p = vk_new<QueryPool>(pick_allocator(pAllocator, dev->alloc()), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!p) return VK_ERROR_OUT_OF_HOST_MEMORY;
  p->count = info->queryCount;
  p->values.reset(new (std::nothrow) uint64_t[p->count]());
  p->available.reset(new (std::nothrow) std::atomic<bool>[p->count]());
  if (!p->values || !p->available) {
    vk_delete(pick_allocator(pAllocator, dev->alloc()), p);
    return VK_ERROR_OUT_OF_HOST_MEMORY;
  }
  *pPool = to_handle<VkQueryPool>(p);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyQueryPool(VkDevice device, VkQueryPool queryPool,
                                                   const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<QueryPool>(queryPool));
}

VKAPI_ATTR void VKAPI_CALL coopvk_ResetQueryPool(VkDevice device, VkQueryPool queryPool,
                                                 uint32_t first, uint32_t count) {
  reset_range(from_handle<Device>(device), from_handle<QueryPool>(queryPool), first, count);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdResetQueryPool(VkCommandBuffer commandBuffer, VkQueryPool queryPool,
                                                    uint32_t first, uint32_t count) {
  QueryPool* p = from_handle<QueryPool>(queryPool);
  to_cb(commandBuffer)->record([p, first, count](ExecContext& ctx) {
    reset_range(ctx.device, p, first, count);
  });
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdWriteTimestamp(VkCommandBuffer cb, VkPipelineStageFlagBits,
                                                    VkQueryPool pool, uint32_t query) {
  record_timestamp(cb, pool, query);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdWriteTimestamp2(VkCommandBuffer cb, VkPipelineStageFlags2,
                                                     VkQueryPool pool, uint32_t query) {
  record_timestamp(cb, pool, query);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetQueryPoolResults(VkDevice device, VkQueryPool queryPool,
                                                          uint32_t first, uint32_t count,
                                                          size_t dataSize, void* pData,
                                                          VkDeviceSize stride,
                                                          VkQueryResultFlags flags) {
  Device* dev = from_handle<Device>(device);
  QueryPool* p = from_handle<QueryPool>(queryPool);
  const bool is64 = flags & VK_QUERY_RESULT_64_BIT;
  const bool with_avail = flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
  const size_t elem = is64 ? 8 : 4;
  const size_t need = elem * (with_avail ? 2 : 1);
  if (first > p->count || count > p->count - first || stride < need || stride % elem ||
      (count && dataSize < stride * (count - 1) + need)) {
    COOPVK_ERROR("vkGetQueryPoolResults: range, stride or dataSize is invalid");
    return VK_ERROR_VALIDATION_FAILED_EXT;
  }
  std::unique_lock<std::mutex> lock(dev->sync_mutex);
  if (flags & VK_QUERY_RESULT_WAIT_BIT) {
    dev->sync_cv.wait(lock, [&] {
      for (uint32_t i = 0; i < count; ++i)
        if (!p->available[first + i]) return false;
      return true;
    });
  }
  VkResult result = VK_SUCCESS;
  auto* out = static_cast<uint8_t*>(pData);
  for (uint32_t i = 0; i < count; ++i, out += stride) {
    bool avail = p->available[first + i];
    uint64_t v = p->values[first + i];
    if (!avail) result = VK_NOT_READY;
    // Values are written when available or when PARTIAL is asked for (then a partial
    // timestamp is as good as any value: we write the last one).
    if (avail || (flags & VK_QUERY_RESULT_PARTIAL_BIT)) {
      if (is64) std::memcpy(out, &v, 8);
      else { uint32_t v32 = uint32_t(v); std::memcpy(out, &v32, 4); }
    }
    if (with_avail) {
      uint64_t a = avail ? 1 : 0;
      if (is64) std::memcpy(out + 8, &a, 8);
      else { uint32_t a32 = uint32_t(a); std::memcpy(out + 4, &a32, 4); }
    }
  }
  return result;
}
