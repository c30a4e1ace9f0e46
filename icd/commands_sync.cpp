// Barriers and events inside command buffers. A queue runs its commands one after the
// other and every write is a plain host store, so a barrier's ordering and visibility
// guarantees already hold: barriers record nothing. Events do real work because the
// host (or another queue) can set them.
#include "command_buffer.h"
#include "sync.h"
#include "vk_entrypoints.h"

#include <vector>

using namespace coopvk;

VKAPI_ATTR void VKAPI_CALL coopvk_CmdPipelineBarrier(
    VkCommandBuffer, VkPipelineStageFlags, VkPipelineStageFlags, VkDependencyFlags, uint32_t,
    const VkMemoryBarrier*, uint32_t, const VkBufferMemoryBarrier*, uint32_t,
    const VkImageMemoryBarrier*) {}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdPipelineBarrier2(VkCommandBuffer, const VkDependencyInfo*) {}

static void record_set(VkCommandBuffer commandBuffer, VkEvent event, bool value) {
  Event* e = from_handle<Event>(event);
  to_cb(commandBuffer)->record([e, value](ExecContext& ctx) { set_event(ctx.device, e, value); });
}

static void record_wait(VkCommandBuffer commandBuffer, uint32_t count, const VkEvent* events) {
  std::vector<Event*> list;
  for (uint32_t i = 0; i < count; ++i) list.push_back(from_handle<Event>(events[i]));
  to_cb(commandBuffer)->record([list = std::move(list)](ExecContext& ctx) {
    for (Event* e : list) wait_event(ctx.device, e);
  });
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdSetEvent(VkCommandBuffer cb, VkEvent event, VkPipelineStageFlags) {
  record_set(cb, event, true);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdSetEvent2(VkCommandBuffer cb, VkEvent event, const VkDependencyInfo*) {
  record_set(cb, event, true);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdResetEvent(VkCommandBuffer cb, VkEvent event, VkPipelineStageFlags) {
  record_set(cb, event, false);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdResetEvent2(VkCommandBuffer cb, VkEvent event, VkPipelineStageFlags2) {
  record_set(cb, event, false);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdWaitEvents(
    VkCommandBuffer cb, uint32_t count, const VkEvent* events, VkPipelineStageFlags,
    VkPipelineStageFlags, uint32_t, const VkMemoryBarrier*, uint32_t, const VkBufferMemoryBarrier*,
    uint32_t, const VkImageMemoryBarrier*) {
  record_wait(cb, count, events);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdWaitEvents2(VkCommandBuffer cb, uint32_t count,
                                                 const VkEvent* events, const VkDependencyInfo*) {
  record_wait(cb, count, events);
}
