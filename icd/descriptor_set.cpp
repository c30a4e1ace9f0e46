// Descriptor pools, sets, vkUpdateDescriptorSets (writes and copies) and descriptor
// update templates.
#include "alloc.h"
#include "descriptor.h"
#include "log.h"
#include "memory.h"
#include "vk_entrypoints.h"

#include <algorithm>
#include <cstring>

using namespace coopvk;

// ---- resolution (used at vkCmdBindDescriptorSets) ----------------------------------

void coopvk::resolve_descriptors(const DescriptorSet* set, const uint32_t* dynamic_offsets,
                                 jit::BufferDescriptor* out) {
  const SetLayoutInfo& l = *set->layout;
  uint32_t k = 0;
  for (uint32_t i = 0; i < l.descriptor_count; ++i) {
    const DescriptorSlot& s = set->slots[i];
    VkDeviceSize off = s.offset;
    if (l.is_dynamic[i]) off += dynamic_offsets[k++];
    if (!s.base || off > s.buffer_size) {
      out[i] = {nullptr, 0};  // unwritten or unbacked: fine as long as no shader uses it
      continue;
    }
    // VK_WHOLE_SIZE: to the end of the buffer from the *effective* offset, which for a
    // dynamic descriptor includes its dynamic offset (VkDescriptorBufferInfo::range).
    // Pure address arithmetic on what the write captured: nothing is dereferenced.
    VkDeviceSize range = s.range == VK_WHOLE_SIZE ? s.buffer_size - off
                                                  : std::min(s.range, s.buffer_size - off);
    out[i] = {s.base + off, range};
  }
}

namespace {

// The flat index of (binding, element), following the "consecutive binding updates"
// rule of VkWriteDescriptorSet: an update that starts in or runs past a binding
// continues with the next binding that has descriptors, which in the flat numbering is
// simply the next index. Returns descriptor_count when nothing is there.
uint32_t flat_index(const SetLayoutInfo& l, uint32_t binding, uint32_t element) {
  for (uint32_t b = binding; b < l.bindings.size(); ++b) {
    if (!l.bindings[b].present) {
      continue;  // a zero-count binding: the update starts at the next one
    }
    uint32_t idx = l.bindings[b].first + element;
    return idx < l.descriptor_count ? idx : l.descriptor_count;
  }
  return l.descriptor_count;
}

// Writes `count` buffer descriptors from `get(i)` starting at (binding, element).
template <typename Get>
void write_buffers(DescriptorSet* set, uint32_t binding, uint32_t element, uint32_t count,
                   VkDescriptorType type, Get get, const char* fn) {
  const SetLayoutInfo& l = *set->layout;
  if (descriptor_type_index(type) < 0) {
    COOPVK_ERROR("%s: descriptor type %d is not supported (buffers only); write ignored", fn,
                 static_cast<int>(type));
    return;
  }
  uint32_t start = flat_index(l, binding, element);
  if (count > l.descriptor_count - start) {
    COOPVK_ERROR("%s: writing %u descriptors at binding %u element %u runs past the set's %u "
                 "descriptors; the excess is ignored",
                 fn, count, binding, element, l.descriptor_count);
    count = l.descriptor_count - start;
  }
  for (uint32_t i = 0; i < count; ++i) {
    const VkDescriptorBufferInfo bi = get(i);
    DescriptorSlot& s = set->slots[start + i];
    const Buffer* buf = from_handle<Buffer>(bi.buffer);  // VK_NULL_HANDLE (nullDescriptor) -> unwritten
    s.base = buf ? buf->data() : nullptr;
    s.buffer_size = buf ? buf->size : 0;
    s.offset = bi.offset;
    s.range = bi.range;
    if (buf && !s.base)
      COOPVK_ERROR("%s: buffer written to a descriptor has no memory bound; the descriptor "
                   "stays empty", fn);
  }
}

void free_set(Device* dev, DescriptorSet* set) {
  DescriptorPool* pool = set->pool;
  for (int t = 0; t < 4; ++t) pool->used[t] -= set->layout->count_by_type[t];
  vk_delete(dev->alloc(), set);
}

}  // namespace

// ---- pools --------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateDescriptorPool(VkDevice device,
                                                           const VkDescriptorPoolCreateInfo* info,
                                                           const VkAllocationCallbacks* pAllocator,
                                                           VkDescriptorPool* pPool) {
  Device* dev = from_handle<Device>(device);
  auto* pool = vk_new<DescriptorPool>(pick_allocator(pAllocator, dev->alloc()),
                                      VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!pool) return VK_ERROR_OUT_OF_HOST_MEMORY;
  pool->flags = info->flags;
  pool->max_sets = info->maxSets;
  // Sizes of types no layout can have are accepted and simply never used: generic code
  // often sizes one pool for every type.
  for (uint32_t i = 0; i < info->poolSizeCount; ++i) {
    int t = descriptor_type_index(info->pPoolSizes[i].type);
    if (t >= 0) pool->capacity[t] += info->pPoolSizes[i].descriptorCount;
  }
  *pPool = to_handle<VkDescriptorPool>(pool);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyDescriptorPool(VkDevice device, VkDescriptorPool descriptorPool,
                                                        const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  DescriptorPool* pool = from_handle<DescriptorPool>(descriptorPool);
  if (!pool) return;
  for (DescriptorSet* s : pool->sets) vk_delete(dev->alloc(), s);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), pool);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_ResetDescriptorPool(VkDevice device,
                                                          VkDescriptorPool descriptorPool,
                                                          VkDescriptorPoolResetFlags) {
  Device* dev = from_handle<Device>(device);
  DescriptorPool* pool = from_handle<DescriptorPool>(descriptorPool);
  for (DescriptorSet* s : pool->sets) free_set(dev, s);
  pool->sets.clear();
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_AllocateDescriptorSets(VkDevice device,
                                                             const VkDescriptorSetAllocateInfo* info,
                                                             VkDescriptorSet* pSets) {
  Device* dev = from_handle<Device>(device);
  DescriptorPool* pool = from_handle<DescriptorPool>(info->descriptorPool);
  const uint32_t n = info->descriptorSetCount;
  // Check the whole request first so a failure allocates nothing.
  uint32_t need[4] = {};
  for (uint32_t i = 0; i < n; ++i) {
    const SetLayoutInfo& l = *from_handle<DescriptorSetLayout>(info->pSetLayouts[i])->info;
    for (int t = 0; t < 4; ++t) need[t] += l.count_by_type[t];
  }
  bool fits = pool->sets.size() + n <= pool->max_sets;
  for (int t = 0; t < 4; ++t) fits = fits && need[t] <= pool->capacity[t] - pool->used[t];
  if (!fits) {
    // Not an error to log loudly: apps are expected to react by making another pool.
    COOPVK_DEBUG("vkAllocateDescriptorSets: pool exhausted (%zu of %u sets in use)",
                 pool->sets.size(), pool->max_sets);
    for (uint32_t i = 0; i < n; ++i) pSets[i] = VK_NULL_HANDLE;
    return VK_ERROR_OUT_OF_POOL_MEMORY;
  }
  for (uint32_t i = 0; i < n; ++i) {
    auto* set = vk_new<DescriptorSet>(dev->alloc(), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
    if (!set) {
      // "If the creation of any of those descriptor sets fails, then the implementation
      // must destroy all successfully created descriptor set objects from this command,
      // set all entries of the pDescriptorSets array to VK_NULL_HANDLE".
      for (uint32_t k = 0; k < i; ++k) {
        auto* s = from_handle<DescriptorSet>(pSets[k]);
        pool->sets.remove(s);
        free_set(dev, s);
      }
      for (uint32_t k = 0; k < n; ++k) pSets[k] = VK_NULL_HANDLE;
      return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    set->pool = pool;
    set->layout = from_handle<DescriptorSetLayout>(info->pSetLayouts[i])->info;
    set->slots.resize(set->layout->descriptor_count);
    for (int t = 0; t < 4; ++t) pool->used[t] += set->layout->count_by_type[t];
    pool->sets.push_back(set);
    pSets[i] = to_handle<VkDescriptorSet>(set);
  }
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_FreeDescriptorSets(VkDevice device, VkDescriptorPool descriptorPool,
                                                         uint32_t count, const VkDescriptorSet* pSets) {
  Device* dev = from_handle<Device>(device);
  DescriptorPool* pool = from_handle<DescriptorPool>(descriptorPool);
  if (!(pool->flags & VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT)) {
    COOPVK_ERROR("vkFreeDescriptorSets: pool was not created with FREE_DESCRIPTOR_SET_BIT");
    return VK_ERROR_VALIDATION_FAILED_EXT;
  }
  for (uint32_t i = 0; i < count; ++i) {
    auto* s = from_handle<DescriptorSet>(pSets[i]);
    if (!s) continue;
    pool->sets.remove(s);
    free_set(dev, s);
  }
  return VK_SUCCESS;
}

// ---- updates ------------------------------------------------------------------------

VKAPI_ATTR void VKAPI_CALL coopvk_UpdateDescriptorSets(VkDevice, uint32_t writeCount,
                                                       const VkWriteDescriptorSet* pWrites,
                                                       uint32_t copyCount,
                                                       const VkCopyDescriptorSet* pCopies) {
  // Writes first, then copies (Vulkan spec, vkUpdateDescriptorSets: "The operations
  // described by pDescriptorWrites are performed first, followed by ... pDescriptorCopies").
  for (uint32_t i = 0; i < writeCount; ++i) {
    const VkWriteDescriptorSet& w = pWrites[i];
    if (w.descriptorCount == 0) continue;
    if (!w.pBufferInfo) {
      COOPVK_ERROR("vkUpdateDescriptorSets: write %u has no pBufferInfo (only buffer descriptors "
                   "are supported); ignored", i);
      continue;
    }
    write_buffers(from_handle<DescriptorSet>(w.dstSet), w.dstBinding, w.dstArrayElement,
                  w.descriptorCount, w.descriptorType,
                  [&](uint32_t k) { return w.pBufferInfo[k]; },
                  "vkUpdateDescriptorSets");
  }
  for (uint32_t i = 0; i < copyCount; ++i) {
    const VkCopyDescriptorSet& c = pCopies[i];
    auto* src = from_handle<DescriptorSet>(c.srcSet);
    auto* dst = from_handle<DescriptorSet>(c.dstSet);
    uint32_t s0 = flat_index(*src->layout, c.srcBinding, c.srcArrayElement);
    uint32_t d0 = flat_index(*dst->layout, c.dstBinding, c.dstArrayElement);
    uint32_t n = c.descriptorCount;
    if (n > src->layout->descriptor_count - s0 || n > dst->layout->descriptor_count - d0) {
      COOPVK_ERROR("vkUpdateDescriptorSets: copy %u of %u descriptors runs past a set; ignored", i, n);
      continue;
    }
    // memmove semantics: source and destination may be the same set and overlap.
    std::vector<DescriptorSlot> tmp(src->slots.begin() + s0, src->slots.begin() + s0 + n);
    std::copy(tmp.begin(), tmp.end(), dst->slots.begin() + d0);
  }
}

// ---- update templates ---------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateDescriptorUpdateTemplate(
    VkDevice device, const VkDescriptorUpdateTemplateCreateInfo* info,
    const VkAllocationCallbacks* pAllocator, VkDescriptorUpdateTemplate* pTemplate) {
  Device* dev = from_handle<Device>(device);
  if (info->templateType != VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET) {
    COOPVK_ERROR("vkCreateDescriptorUpdateTemplate: only DESCRIPTOR_SET templates are supported "
                 "(no push descriptors)");
    return VK_ERROR_UNKNOWN;
  }
  for (uint32_t i = 0; i < info->descriptorUpdateEntryCount; ++i)
    if (descriptor_type_index(info->pDescriptorUpdateEntries[i].descriptorType) < 0) {
      COOPVK_ERROR("vkCreateDescriptorUpdateTemplate: entry %u has unsupported descriptor type %d",
                   i, static_cast<int>(info->pDescriptorUpdateEntries[i].descriptorType));
      return VK_ERROR_UNKNOWN;
    }
  auto* t = vk_new<DescriptorUpdateTemplate>(pick_allocator(pAllocator, dev->alloc()),
                                             VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!t) return VK_ERROR_OUT_OF_HOST_MEMORY;
  for (uint32_t i = 0; i < info->descriptorUpdateEntryCount; ++i) {
    const auto& e = info->pDescriptorUpdateEntries[i];
    t->entries.push_back({e.dstBinding, e.dstArrayElement, e.descriptorCount, e.descriptorType,
                          e.offset, e.stride});
  }
  *pTemplate = to_handle<VkDescriptorUpdateTemplate>(t);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyDescriptorUpdateTemplate(
    VkDevice device, VkDescriptorUpdateTemplate descriptorUpdateTemplate,
    const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()),
            from_handle<DescriptorUpdateTemplate>(descriptorUpdateTemplate));
}

VKAPI_ATTR void VKAPI_CALL coopvk_UpdateDescriptorSetWithTemplate(
    VkDevice, VkDescriptorSet descriptorSet, VkDescriptorUpdateTemplate descriptorUpdateTemplate,
    const void* pData) {
  auto* set = from_handle<DescriptorSet>(descriptorSet);
  auto* t = from_handle<DescriptorUpdateTemplate>(descriptorUpdateTemplate);
  auto* base = static_cast<const uint8_t*>(pData);
  for (const auto& e : t->entries) {
    write_buffers(set, e.binding, e.element, e.count, e.type,
                  [&](uint32_t k) {
                    VkDescriptorBufferInfo bi;  // the app's data need not be aligned
                    std::memcpy(&bi, base + e.offset + k * e.stride, sizeof(bi));
                    return bi;
                  },
                  "vkUpdateDescriptorSetWithTemplate");
  }
}
