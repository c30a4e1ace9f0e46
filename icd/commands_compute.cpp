// vkCmdBindPipeline, vkCmdBindDescriptorSets, vkCmdPushConstants, vkCmdDispatch,
// vkCmdDispatchBase, vkCmdDispatchIndirect.
//
// Binds update the command buffer's ComputeBindState at record time; every dispatch
// copies what it needs (shader, resolved descriptor arrays, push constant bytes) into
// its closure and runs on the device's worker pool when the queue replays it. The
// queue thread waits for the dispatch to finish before the next command, which is what
// makes pipeline barriers free (command_buffer.h).
#include "command_buffer.h"
#include "descriptor.h"
#include "log.h"
#include "memory.h"
#include "pipeline.h"
#include "vk_entrypoints.h"
#include "worker_pool.h"

#include <atomic>
#include <cstring>

using namespace coopvk;

namespace {

struct DispatchSnapshot {
  std::shared_ptr<const jit::CompiledShader> shader;
  std::shared_ptr<WorkgroupCost> cost;
  std::shared_ptr<const std::vector<jit::BufferDescriptor>> sets[jit::kMaxDescriptorSets];
  std::array<uint8_t, jit::kMaxPushConstantBytes> push;

  jit::DispatchState state(const uint32_t base[3], const uint32_t count[3]) const {
    jit::DispatchState ds{};
    for (uint32_t s = 0; s < jit::kMaxDescriptorSets; ++s)
      ds.sets[s] = sets[s] ? sets[s]->data() : nullptr;
    ds.push_constants = push.data();
    // One token per execution, taken when the dispatch runs: a command buffer submitted
    // again may find its matrices changed in between.
    static std::atomic<uint64_t> serial{0};
    ds.dispatch_serial = serial.fetch_add(1, std::memory_order_relaxed) + 1;
    for (int i = 0; i < 3; ++i) {
      ds.base_workgroup[i] = base[i];
      ds.num_workgroups[i] = count[i];
    }
    return ds;
  }
};

// Checks that a dispatch can run and takes the snapshot; false (recorded as a failure)
// otherwise.
bool snapshot(CommandBuffer* cb, const char* fn, DispatchSnapshot* out) {
  const ComputeBindState& st = cb->compute;
  if (!st.pipeline) {
    char msg[160];
    std::snprintf(msg, sizeof(msg), "%s: no compute pipeline is bound", fn);
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, msg);
    return false;
  }
  for (uint32_t s = 0; s < jit::kMaxDescriptorSets; ++s) {
    if ((st.pipeline->required_sets_mask & (1u << s)) && !st.sets[s]) {
      char msg[160];
      std::snprintf(msg, sizeof(msg), "%s: the pipeline's layout uses descriptor set %u, which is not bound",
                    fn, s);
      cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, msg);
      return false;
    }
  }
  out->shader = st.shader;
  out->cost = st.cost;
  for (uint32_t s = 0; s < jit::kMaxDescriptorSets; ++s) out->sets[s] = st.sets[s];
  out->push = st.push;
  return true;
}

void record_dispatch(CommandBuffer* cb, const char* fn, const uint32_t base[3], const uint32_t count[3]) {
  DispatchSnapshot snap;
  if (!snapshot(cb, fn, &snap)) return;
  if (uint64_t(count[0]) * count[1] * count[2] == 0) return;  // nothing to run (valid)
  uint32_t b[3] = {base[0], base[1], base[2]}, c[3] = {count[0], count[1], count[2]};
  cb->record([snap = std::move(snap), b0 = b[0], b1 = b[1], b2 = b[2], c0 = c[0], c1 = c[1],
              c2 = c[2]](ExecContext& ctx) {
    const uint32_t base[3] = {b0, b1, b2}, count[3] = {c0, c1, c2};
    jit::DispatchState ds = snap.state(base, count);
    COOPVK_DEBUG("dispatch %ux%ux%u (base %u,%u,%u) of a %ux%ux%u shader", c0, c1, c2, b0, b1, b2,
                 snap.shader->local_size[0], snap.shader->local_size[1], snap.shader->local_size[2]);
    device_worker_pool(ctx.device).dispatch(*snap.shader, ds, snap.cost.get(), *ctx.runner);
  });
}

}  // namespace

VKAPI_ATTR void VKAPI_CALL coopvk_CmdBindPipeline(VkCommandBuffer commandBuffer,
                                                  VkPipelineBindPoint bindPoint, VkPipeline pipeline) {
  CommandBuffer* cb = to_cb(commandBuffer);
  if (bindPoint != VK_PIPELINE_BIND_POINT_COMPUTE) {
    cb->fail(VK_ERROR_FEATURE_NOT_PRESENT, "vkCmdBindPipeline: only the compute bind point exists");
    return;
  }
  auto* p = from_handle<Pipeline>(pipeline);
  cb->compute.pipeline = p;
  cb->compute.shader = p ? p->shader : nullptr;
  cb->compute.cost = p ? p->cost : nullptr;
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdBindDescriptorSets(VkCommandBuffer commandBuffer,
                                                        VkPipelineBindPoint bindPoint,
                                                        VkPipelineLayout, uint32_t firstSet,
                                                        uint32_t setCount,
                                                        const VkDescriptorSet* pSets,
                                                        uint32_t dynamicOffsetCount,
                                                        const uint32_t* pDynamicOffsets) {
  CommandBuffer* cb = to_cb(commandBuffer);
  if (bindPoint != VK_PIPELINE_BIND_POINT_COMPUTE) {
    cb->fail(VK_ERROR_FEATURE_NOT_PRESENT, "vkCmdBindDescriptorSets: only the compute bind point exists");
    return;
  }
  if (firstSet > jit::kMaxDescriptorSets || setCount > jit::kMaxDescriptorSets - firstSet) {
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, "vkCmdBindDescriptorSets: sets beyond maxBoundDescriptorSets");
    return;
  }
  // Dynamic offsets are consumed set by set, in binding order within each set.
  uint32_t needed = 0;
  for (uint32_t i = 0; i < setCount; ++i)
    if (auto* set = from_handle<DescriptorSet>(pSets[i])) needed += set->layout->dynamic_count;
  if (needed != dynamicOffsetCount) {
    char msg[200];
    std::snprintf(msg, sizeof(msg),
                  "vkCmdBindDescriptorSets: %u dynamic offsets given, the sets have %u dynamic "
                  "descriptors", dynamicOffsetCount, needed);
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, msg);
    return;
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < setCount; ++i) {
    auto* set = from_handle<DescriptorSet>(pSets[i]);
    if (!set) {  // VK_NULL_HANDLE is allowed with graphicsPipelineLibrary: leaves it unbound
      cb->compute.sets[firstSet + i] = nullptr;
      continue;
    }
    auto resolved = std::make_shared<std::vector<jit::BufferDescriptor>>(
        std::max<uint32_t>(set->layout->descriptor_count, 1));
    resolve_descriptors(set, pDynamicOffsets + k, resolved->data());
    k += set->layout->dynamic_count;
    cb->compute.sets[firstSet + i] = std::move(resolved);
  }
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdPushConstants(VkCommandBuffer commandBuffer, VkPipelineLayout,
                                                   VkShaderStageFlags, uint32_t offset, uint32_t size,
                                                   const void* pValues) {
  CommandBuffer* cb = to_cb(commandBuffer);
  if (offset > jit::kMaxPushConstantBytes || size > jit::kMaxPushConstantBytes - offset || !pValues) {
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT,
             "vkCmdPushConstants: range exceeds maxPushConstantsSize (256) or pValues is null");
    return;
  }
  std::memcpy(cb->compute.push.data() + offset, pValues, size);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdDispatch(VkCommandBuffer commandBuffer, uint32_t x, uint32_t y,
                                              uint32_t z) {
  const uint32_t base[3] = {0, 0, 0}, count[3] = {x, y, z};
  record_dispatch(to_cb(commandBuffer), "vkCmdDispatch", base, count);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdDispatchBase(VkCommandBuffer commandBuffer, uint32_t bx,
                                                  uint32_t by, uint32_t bz, uint32_t x, uint32_t y,
                                                  uint32_t z) {
  const uint32_t base[3] = {bx, by, bz}, count[3] = {x, y, z};
  record_dispatch(to_cb(commandBuffer), "vkCmdDispatchBase", base, count);
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdDispatchIndirect(VkCommandBuffer commandBuffer, VkBuffer buffer,
                                                      VkDeviceSize offset) {
  CommandBuffer* cb = to_cb(commandBuffer);
  Buffer* buf = from_handle<Buffer>(buffer);
  if (offset % 4 != 0 || offset > buf->size ||
      buf->size - offset < sizeof(VkDispatchIndirectCommand)) {
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT,
             "vkCmdDispatchIndirect: offset must be a multiple of 4 with 12 bytes inside the buffer");
    return;
  }
  DispatchSnapshot snap;
  if (!snapshot(cb, "vkCmdDispatchIndirect", &snap)) return;
  // The group counts are read when the command runs: earlier commands may write them.
  cb->record([snap = std::move(snap), buf, offset](ExecContext& ctx) {
    if (!buf->data()) {
      COOPVK_ERROR("vkCmdDispatchIndirect: the buffer has no memory bound; dispatch skipped");
      return;
    }
    VkDispatchIndirectCommand c;
    std::memcpy(&c, buf->data() + offset, sizeof(c));
    const uint32_t base[3] = {0, 0, 0}, count[3] = {c.x, c.y, c.z};
    if (uint64_t(c.x) * c.y * c.z == 0) return;
    if (c.x > 65535 || c.y > 65535 || c.z > 65535) {
      // VUID-VkDispatchIndirectCommand-x-00417 and friends; running ~2^48 groups would hang.
      COOPVK_ERROR("vkCmdDispatchIndirect: group count (%u, %u, %u) exceeds "
                   "maxComputeWorkGroupCount (65535); dispatch skipped", c.x, c.y, c.z);
      return;
    }
    jit::DispatchState ds = snap.state(base, count);
    device_worker_pool(ctx.device).dispatch(*snap.shader, ds, snap.cost.get(), *ctx.runner);
  });
}
