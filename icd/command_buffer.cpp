// Command pools, command buffer lifecycle, secondary command buffers.
#include "command_buffer.h"

#include "alloc.h"
#include "log.h"
#include "vk_entrypoints.h"

using namespace coopvk;

void CommandBuffer::reset() {
  commands.clear();
  commands.shrink_to_fit();
  record_error = VK_SUCCESS;
  compute = {};
  state = CbState::Initial;
  usage = 0;
}

void CommandBuffer::fail(VkResult r, const char* what) {
  COOPVK_ERROR("%s", what);
  if (record_error == VK_SUCCESS) record_error = r;
}

void coopvk::record_unsupported_command(VkCommandBuffer h, const char* name) {
  COOPVK_ERROR("%s is not supported by coopvk; vkEndCommandBuffer will fail", name);
  CommandBuffer* cb = to_cb(h);
  if (cb && cb->record_error == VK_SUCCESS) cb->record_error = VK_ERROR_FEATURE_NOT_PRESENT;
}

void coopvk::log_unsupported_entry(const char* name) {
  COOPVK_ERROR("%s is not supported by coopvk", name);
}

// ---- pools --------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateCommandPool(VkDevice device,
                                                        const VkCommandPoolCreateInfo* info,
                                                        const VkAllocationCallbacks* pAllocator,
                                                        VkCommandPool* pPool) {
  Device* dev = from_handle<Device>(device);
  if (info->queueFamilyIndex >= kQueueFamilyCount) {
    COOPVK_ERROR("vkCreateCommandPool: queue family %u does not exist", info->queueFamilyIndex);
    return VK_ERROR_INITIALIZATION_FAILED;
  }
  if (info->flags & VK_COMMAND_POOL_CREATE_PROTECTED_BIT) {
    COOPVK_ERROR("vkCreateCommandPool: protected command pools are not supported");
    return VK_ERROR_FEATURE_NOT_PRESENT;
  }
  CommandPool* pool = vk_new<CommandPool>(pick_allocator(pAllocator, dev->alloc()),
                                          VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!pool) return VK_ERROR_OUT_OF_HOST_MEMORY;
  pool->device = dev;
  pool->flags = info->flags;
  pool->queue_family = info->queueFamilyIndex;
  *pPool = to_handle<VkCommandPool>(pool);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyCommandPool(VkDevice device, VkCommandPool commandPool,
                                                     const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  CommandPool* pool = from_handle<CommandPool>(commandPool);
  if (!pool) return;
  // Command buffers are allocated from the device's allocator (they outlive no pool).
  for (CommandBuffer* cb : pool->buffers) vk_delete(dev->alloc(), cb);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), pool);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_ResetCommandPool(VkDevice, VkCommandPool commandPool,
                                                       VkCommandPoolResetFlags) {
  for (CommandBuffer* cb : from_handle<CommandPool>(commandPool)->buffers) cb->reset();
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_TrimCommandPool(VkDevice, VkCommandPool, VkCommandPoolTrimFlags) {
  // Nothing is pooled beyond each command buffer's own list, freed on reset.
}

// ---- command buffers ----------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL coopvk_AllocateCommandBuffers(
    VkDevice device, const VkCommandBufferAllocateInfo* info, VkCommandBuffer* pCommandBuffers) {
  Device* dev = from_handle<Device>(device);
  CommandPool* pool = from_handle<CommandPool>(info->commandPool);
  for (uint32_t i = 0; i < info->commandBufferCount; ++i) {
    CommandBuffer* cb = vk_new<CommandBuffer>(dev->alloc(), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
    if (!cb) {
      for (uint32_t k = 0; k < i; ++k) {
        pool->buffers.remove(to_cb(pCommandBuffers[k]));
        vk_delete(dev->alloc(), to_cb(pCommandBuffers[k]));
      }
      for (uint32_t k = 0; k < info->commandBufferCount; ++k) pCommandBuffers[k] = VK_NULL_HANDLE;
      return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    cb->device = dev;
    cb->pool = pool;
    cb->level = info->level;
    pool->buffers.push_back(cb);
    pCommandBuffers[i] = to_handle<VkCommandBuffer>(cb);
  }
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_FreeCommandBuffers(VkDevice device, VkCommandPool commandPool,
                                                     uint32_t count,
                                                     const VkCommandBuffer* pCommandBuffers) {
  Device* dev = from_handle<Device>(device);
  CommandPool* pool = from_handle<CommandPool>(commandPool);
  for (uint32_t i = 0; i < count; ++i) {
    CommandBuffer* cb = to_cb(pCommandBuffers[i]);
    if (!cb) continue;
    pool->buffers.remove(cb);
    vk_delete(dev->alloc(), cb);
  }
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_BeginCommandBuffer(VkCommandBuffer commandBuffer,
                                                         const VkCommandBufferBeginInfo* info) {
  CommandBuffer* cb = to_cb(commandBuffer);
  if (cb->state != CbState::Initial) {
    // Begin implicitly resets only when the pool allows it (Vulkan spec,
    // vkBeginCommandBuffer: "If commandBuffer was allocated from a pool with
    // RESET_COMMAND_BUFFER_BIT, it is implicitly reset").
    if (!(cb->pool->flags & VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT)) {
      COOPVK_ERROR("vkBeginCommandBuffer: command buffer is not in the initial state and its pool "
                   "lacks RESET_COMMAND_BUFFER_BIT");
      return VK_ERROR_VALIDATION_FAILED_EXT;
    }
    cb->reset();
  }
  cb->usage = info->flags;
  cb->state = CbState::Recording;
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_EndCommandBuffer(VkCommandBuffer commandBuffer) {
  CommandBuffer* cb = to_cb(commandBuffer);
  if (cb->state != CbState::Recording) {
    COOPVK_ERROR("vkEndCommandBuffer: command buffer is not recording");
    return VK_ERROR_VALIDATION_FAILED_EXT;
  }
  if (cb->record_error != VK_SUCCESS) {
    cb->state = CbState::Invalid;
    return cb->record_error;
  }
  cb->state = CbState::Executable;
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_ResetCommandBuffer(VkCommandBuffer commandBuffer,
                                                         VkCommandBufferResetFlags) {
  CommandBuffer* cb = to_cb(commandBuffer);
  if (!(cb->pool->flags & VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT)) {
    COOPVK_ERROR("vkResetCommandBuffer: pool was not created with RESET_COMMAND_BUFFER_BIT");
    return VK_ERROR_VALIDATION_FAILED_EXT;
  }
  cb->reset();
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdExecuteCommands(VkCommandBuffer commandBuffer, uint32_t count,
                                                     const VkCommandBuffer* pCommandBuffers) {
  CommandBuffer* cb = to_cb(commandBuffer);
  for (uint32_t i = 0; i < count; ++i) {
    CommandBuffer* sec = to_cb(pCommandBuffers[i]);
    if (sec->level != VK_COMMAND_BUFFER_LEVEL_SECONDARY || sec->state != CbState::Executable) {
      cb->fail(VK_ERROR_VALIDATION_FAILED_EXT,
               "vkCmdExecuteCommands: argument is not an executable secondary command buffer");
      return;
    }
    // Secondaries are run by reference: re-recording one invalidates this primary, as
    // the spec says, so referencing its current list is the spec's own semantics.
    cb->record([sec](ExecContext& ctx) { sec->execute(ctx); });
  }
}
