// Handle <-> object casts. Dispatchable objects start with the loader's dispatch slot
// (LoaderDriverInterface.md, "Driver Dispatchable Object Creation"); non-dispatchable
// handles are plain pointers to the driver object (64-bit platforms only).
#pragma once

#include <vulkan/vk_icd.h>
#include <vulkan/vulkan.h>

#include <cstdint>

namespace coopvk {

static_assert(sizeof(void*) == 8, "non-dispatchable handles are stored as pointers");

struct DispatchableObject {
  VK_LOADER_DATA loader_data;
  DispatchableObject() { set_loader_magic_value(this); }
};

template <typename Obj, typename Handle>
inline Obj* from_handle(Handle h) {
  return reinterpret_cast<Obj*>(h);
}

template <typename Handle, typename Obj>
inline Handle to_handle(Obj* o) {
  return reinterpret_cast<Handle>(o);
}

// Walks a pNext chain for the first structure of type `s` (unknown structures are
// skipped, as the spec requires of implementations).
template <typename T>
inline const T* find_in_chain(const void* pnext, VkStructureType s) {
  for (auto* b = static_cast<const VkBaseInStructure*>(pnext); b; b = b->pNext)
    if (b->sType == s) return reinterpret_cast<const T*>(b);
  return nullptr;
}

template <typename T>
inline T* find_in_chain_mut(void* pnext, VkStructureType s) {
  for (auto* b = static_cast<VkBaseOutStructure*>(pnext); b; b = b->pNext)
    if (b->sType == s) return reinterpret_cast<T*>(b);
  return nullptr;
}

// The "two-call idiom" of every Vulkan enumeration: with a null array report the count,
// otherwise copy up to *count items and return VK_INCOMPLETE when some did not fit.
template <typename T>
inline VkResult enumerate_out(const T* items, uint32_t n, uint32_t* count, T* out) {
  if (!out) {
    *count = n;
    return VK_SUCCESS;
  }
  uint32_t k = *count < n ? *count : n;
  for (uint32_t i = 0; i < k; ++i) out[i] = items[i];
  *count = k;
  return k < n ? VK_INCOMPLETE : VK_SUCCESS;
}

}  // namespace coopvk
