// Host allocation through the application's VkAllocationCallbacks when it gives them
// (Vulkan spec, "Memory Allocation"), else the C allocator. Every driver object is
// created with vk_new and destroyed with vk_delete so the callbacks see both ends.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace coopvk {

inline void* vk_alloc(const VkAllocationCallbacks* cb, size_t size, size_t align,
                      VkSystemAllocationScope scope) {
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  if (cb && cb->pfnAllocation) return cb->pfnAllocation(cb->pUserData, size, align, scope);
  void* p = nullptr;
  if (posix_memalign(&p, align, size ? size : 1) != 0) return nullptr;
  return p;
}

inline void vk_free(const VkAllocationCallbacks* cb, void* p) {
  if (!p) return;
  if (cb && cb->pfnFree) {
    cb->pfnFree(cb->pUserData, p);
    return;
  }
  std::free(p);
}

// The allocator an object uses: the one given at its creation, else its parent's.
inline const VkAllocationCallbacks* pick_allocator(const VkAllocationCallbacks* given,
                                                   const VkAllocationCallbacks* parent) {
  return given ? given : parent;
}

template <typename T, typename... Args>
T* vk_new(const VkAllocationCallbacks* cb, VkSystemAllocationScope scope, Args&&... args) {
  void* p = vk_alloc(cb, sizeof(T), alignof(T), scope);
  if (!p) return nullptr;
  return new (p) T(std::forward<Args>(args)...);
}

template <typename T>
void vk_delete(const VkAllocationCallbacks* cb, T* obj) {
  if (!obj) return;
  obj->~T();
  vk_free(cb, obj);
}

}  // namespace coopvk
