// vkCreateDescriptorSetLayout and vkGetDescriptorSetLayoutSupport. Buffer descriptors
// only; any other type fails layout creation with a message naming it, so an app finds
// out at the first call that cannot work rather than at dispatch.
#include "alloc.h"
#include "descriptor.h"
#include "log.h"
#include "vk_entrypoints.h"

#include <algorithm>

using namespace coopvk;

int coopvk::descriptor_type_index(VkDescriptorType t) {
  switch (t) {
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER: return 0;
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER: return 1;
    case VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC: return 2;
    case VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC: return 3;
    default: return -1;
  }
}

bool coopvk::descriptor_type_dynamic(VkDescriptorType t) {
  return t == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC ||
         t == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC;
}

namespace {

// Builds the flat numbering; returns false (with a log line) on anything unsupported.
bool build_layout(const VkDescriptorSetLayoutCreateInfo* info, SetLayoutInfo* out, const char* fn) {
  if (info->flags & VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT) {
    COOPVK_ERROR("%s: push descriptor layouts are not supported (VK_KHR_push_descriptor is not "
                 "advertised)", fn);
    return false;
  }
  // Binding numbers may be sparse and in any order; flat indices follow binding order.
  std::vector<const VkDescriptorSetLayoutBinding*> order;
  for (uint32_t i = 0; i < info->bindingCount; ++i) order.push_back(&info->pBindings[i]);
  std::sort(order.begin(), order.end(),
            [](auto* a, auto* b) { return a->binding < b->binding; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->binding == order[i - 1]->binding) {
      COOPVK_ERROR("%s: binding %u appears twice", fn, order[i]->binding);
      return false;
    }
  uint32_t max_binding = order.empty() ? 0 : order.back()->binding + 1;
  if (max_binding > 4096) {
    // Bindings are indexed directly; a huge sparse number would waste memory.
    COOPVK_ERROR("%s: binding number %u is above coopvk's limit of 4095", fn, max_binding - 1);
    return false;
  }
  out->bindings.resize(max_binding);
  for (auto* b : order) {
    if (b->descriptorCount == 0) continue;  // reserves the number, holds nothing
    int ti = descriptor_type_index(b->descriptorType);
    if (ti < 0) {
      COOPVK_ERROR("%s: binding %u has descriptor type %d; coopvk supports only storage and "
                   "uniform buffers (and their _DYNAMIC forms)",
                   fn, b->binding, static_cast<int>(b->descriptorType));
      return false;
    }
    if (b->stageFlags & ~VkShaderStageFlags(VK_SHADER_STAGE_COMPUTE_BIT))
      COOPVK_DEBUG("%s: binding %u names non-compute stages; only compute runs here", fn, b->binding);
    BindingLayout& bl = out->bindings[b->binding];
    bl.present = true;
    bl.type = b->descriptorType;
    bl.first = out->descriptor_count;
    bl.count = b->descriptorCount;
    out->descriptor_count += b->descriptorCount;
    out->count_by_type[ti] += b->descriptorCount;
    bool dyn = descriptor_type_dynamic(b->descriptorType);
    if (dyn) out->dynamic_count += b->descriptorCount;
    out->is_dynamic.insert(out->is_dynamic.end(), b->descriptorCount, dyn ? 1 : 0);
  }
  return true;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateDescriptorSetLayout(
    VkDevice device, const VkDescriptorSetLayoutCreateInfo* info,
    const VkAllocationCallbacks* pAllocator, VkDescriptorSetLayout* pLayout) {
  Device* dev = from_handle<Device>(device);
  auto li = std::make_shared<SetLayoutInfo>();
  if (!build_layout(info, li.get(), "vkCreateDescriptorSetLayout")) return VK_ERROR_UNKNOWN;
  auto* l = vk_new<DescriptorSetLayout>(pick_allocator(pAllocator, dev->alloc()),
                                        VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!l) return VK_ERROR_OUT_OF_HOST_MEMORY;
  l->info = std::move(li);
  *pLayout = to_handle<VkDescriptorSetLayout>(l);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyDescriptorSetLayout(VkDevice device,
                                                             VkDescriptorSetLayout layout,
                                                             const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<DescriptorSetLayout>(layout));
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetDescriptorSetLayoutSupport(
    VkDevice, const VkDescriptorSetLayoutCreateInfo* info, VkDescriptorSetLayoutSupport* support) {
  SetLayoutInfo li;
  // Silence the log: a support query is not an error.
  bool ok = true;
  for (uint32_t i = 0; i < info->bindingCount; ++i)
    if (info->pBindings[i].descriptorCount && descriptor_type_index(info->pBindings[i].descriptorType) < 0)
      ok = false;
  if (info->flags & VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT) ok = false;
  if (ok) ok = build_layout(info, &li, "vkGetDescriptorSetLayoutSupport");
  support->supported = ok ? VK_TRUE : VK_FALSE;
  if (auto* v = find_in_chain_mut<VkDescriptorSetVariableDescriptorCountLayoutSupport>(
          support->pNext, VK_STRUCTURE_TYPE_DESCRIPTOR_SET_VARIABLE_DESCRIPTOR_COUNT_LAYOUT_SUPPORT))
    v->maxVariableDescriptorCount = 0;  // descriptorBindingVariableDescriptorCount is not supported
}
