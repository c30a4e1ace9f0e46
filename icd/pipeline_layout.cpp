// vkCreatePipelineLayout: the sets' layouts (shared, so the set layouts may be destroyed
// right after) and the push-constant size, plus the jit::PipelineLayoutInfo that the
// compiler uses to address descriptors.
#include "alloc.h"
#include "descriptor.h"
#include "log.h"
#include "vk_entrypoints.h"

using namespace coopvk;

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreatePipelineLayout(VkDevice device,
                                                           const VkPipelineLayoutCreateInfo* info,
                                                           const VkAllocationCallbacks* pAllocator,
                                                           VkPipelineLayout* pLayout) {
  Device* dev = from_handle<Device>(device);
  if (info->setLayoutCount > jit::kMaxDescriptorSets) {
    COOPVK_ERROR("vkCreatePipelineLayout: %u set layouts exceed maxBoundDescriptorSets (%u)",
                 info->setLayoutCount, jit::kMaxDescriptorSets);
    return VK_ERROR_UNKNOWN;
  }
  uint32_t push_bytes = 0;
  for (uint32_t i = 0; i < info->pushConstantRangeCount; ++i) {
    const VkPushConstantRange& r = info->pPushConstantRanges[i];
    if (r.offset > jit::kMaxPushConstantBytes || r.size > jit::kMaxPushConstantBytes - r.offset) {
      COOPVK_ERROR("vkCreatePipelineLayout: push constant range [%u, +%u) exceeds "
                   "maxPushConstantsSize (%u)", r.offset, r.size, jit::kMaxPushConstantBytes);
      return VK_ERROR_UNKNOWN;
    }
    if (r.offset + r.size > push_bytes) push_bytes = r.offset + r.size;
  }
  auto* pl = vk_new<PipelineLayout>(pick_allocator(pAllocator, dev->alloc()),
                                    VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!pl) return VK_ERROR_OUT_OF_HOST_MEMORY;
  pl->set_count = info->setLayoutCount;
  pl->push_constant_bytes = push_bytes;
  pl->jit_info.push_constant_bytes = push_bytes;
  for (uint32_t s = 0; s < info->setLayoutCount; ++s) {
    // VK_NULL_HANDLE is allowed here (graphicsPipelineLibrary); it is an empty set.
    auto* sl = from_handle<DescriptorSetLayout>(info->pSetLayouts[s]);
    if (!sl) continue;
    pl->sets[s] = sl->info;
    auto& out = pl->jit_info.sets[s].bindings;
    out.resize(sl->info->bindings.size());
    for (size_t b = 0; b < out.size(); ++b) {
      const BindingLayout& in = sl->info->bindings[b];
      out[b].present = in.present;
      out[b].kind = (in.type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER ||
                     in.type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC)
                        ? jit::DescriptorKind::UniformBuffer
                        : jit::DescriptorKind::StorageBuffer;
      out[b].first = in.first;
      out[b].count = in.count;
    }
  }
  *pLayout = to_handle<VkPipelineLayout>(pl);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyPipelineLayout(VkDevice device, VkPipelineLayout layout,
                                                        const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<PipelineLayout>(layout));
}
