// Fence, semaphore and event entry points.
#include "sync.h"

#include <chrono>

#include "alloc.h"
#include "log.h"
#include "vk_entrypoints.h"

using namespace coopvk;

void coopvk::signal_fence(Device* dev, Fence* f) {
  {
    std::lock_guard<std::mutex> lock(dev->sync_mutex);
    f->signaled = true;
    f->in_flight = false;
  }
  dev->sync_cv.notify_all();
}

void coopvk::mark_fence_in_flight(Device* dev, Fence* f) {
  std::lock_guard<std::mutex> lock(dev->sync_mutex);
  f->in_flight = true;
}

void coopvk::signal_semaphore(Device* dev, Semaphore* s, uint64_t value) {
  {
    std::lock_guard<std::mutex> lock(dev->sync_mutex);
    if (s->type == VK_SEMAPHORE_TYPE_TIMELINE) {
      if (value > s->value) s->value = value;
    } else {
      s->value = 1;
    }
  }
  dev->sync_cv.notify_all();
}

void coopvk::wait_semaphore(Device* dev, Semaphore* s, uint64_t value) {
  std::unique_lock<std::mutex> lock(dev->sync_mutex);
  if (s->type == VK_SEMAPHORE_TYPE_TIMELINE) {
    dev->sync_cv.wait(lock, [&] { return s->value >= value; });
  } else {
    dev->sync_cv.wait(lock, [&] { return s->value != 0; });
    s->value = 0;  // a binary wait unsignals the semaphore
  }
}

void coopvk::set_event(Device* dev, Event* e, bool value) {
  {
    std::lock_guard<std::mutex> lock(dev->sync_mutex);
    e->set = value;
  }
  dev->sync_cv.notify_all();
}

void coopvk::wait_event(Device* dev, Event* e) {
  std::unique_lock<std::mutex> lock(dev->sync_mutex);
  dev->sync_cv.wait(lock, [&] { return e->set; });
}

// ---- fences -------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateFence(VkDevice device, const VkFenceCreateInfo* info,
                                                  const VkAllocationCallbacks* pAllocator,
                                                  VkFence* pFence) {
  Device* dev = from_handle<Device>(device);
  if (find_in_chain<VkBaseInStructure>(info->pNext, VK_STRUCTURE_TYPE_EXPORT_FENCE_CREATE_INFO)) {
    COOPVK_ERROR("vkCreateFence: external fences are not supported");
    return VK_ERROR_INVALID_EXTERNAL_HANDLE;
  }
  Fence* f = vk_new<Fence>(pick_allocator(pAllocator, dev->alloc()), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!f) return VK_ERROR_OUT_OF_HOST_MEMORY;
  f->signaled = (info->flags & VK_FENCE_CREATE_SIGNALED_BIT) != 0;
  *pFence = to_handle<VkFence>(f);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyFence(VkDevice device, VkFence fence,
                                               const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<Fence>(fence));
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_ResetFences(VkDevice device, uint32_t count,
                                                  const VkFence* pFences) {
  Device* dev = from_handle<Device>(device);
  std::lock_guard<std::mutex> lock(dev->sync_mutex);
  for (uint32_t i = 0; i < count; ++i) from_handle<Fence>(pFences[i])->signaled = false;
  return VK_SUCCESS;
}

// Applications written for GPUs poll fences in tight loops: ggml's Vulkan backend spins on
// vkGetFenceStatus until its graph is done. On a CPU driver that loop takes a core from the
// threads doing the work (llama-bench tg on 2 cores: 34 tokens/s spinning, 56 with the
// spinner's core free). A poll that finds a submitted fence unsignaled therefore waits up
// to kFenceStatusWait for it before answering VK_NOT_READY: the spinner sleeps, the answer
// is the same. A fence nothing will signal (never submitted) is answered at once.
constexpr std::chrono::microseconds kFenceStatusWait{200};

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetFenceStatus(VkDevice device, VkFence fence) {
  Device* dev = from_handle<Device>(device);
  Fence* f = from_handle<Fence>(fence);
  std::unique_lock<std::mutex> lock(dev->sync_mutex);
  if (!f->signaled && f->in_flight) dev->sync_cv.wait_for(lock, kFenceStatusWait, [&] { return f->signaled; });
  return f->signaled ? VK_SUCCESS : VK_NOT_READY;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_WaitForFences(VkDevice device, uint32_t count,
                                                    const VkFence* pFences, VkBool32 waitAll,
                                                    uint64_t timeout) {
  Device* dev = from_handle<Device>(device);
  std::unique_lock<std::mutex> lock(dev->sync_mutex);
  return wait_with_timeout(dev, lock, timeout, [&] {
    for (uint32_t i = 0; i < count; ++i) {
      bool s = from_handle<Fence>(pFences[i])->signaled;
      if (waitAll && !s) return false;
      if (!waitAll && s) return true;
    }
    return bool(waitAll);
  });
}

// ---- semaphores ---------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateSemaphore(VkDevice device,
                                                      const VkSemaphoreCreateInfo* info,
                                                      const VkAllocationCallbacks* pAllocator,
                                                      VkSemaphore* pSemaphore) {
  Device* dev = from_handle<Device>(device);
  if (find_in_chain<VkBaseInStructure>(info->pNext, VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO)) {
    COOPVK_ERROR("vkCreateSemaphore: external semaphores are not supported");
    return VK_ERROR_INVALID_EXTERNAL_HANDLE;
  }
  Semaphore* s = vk_new<Semaphore>(pick_allocator(pAllocator, dev->alloc()),
                                   VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!s) return VK_ERROR_OUT_OF_HOST_MEMORY;
  if (auto* t = find_in_chain<VkSemaphoreTypeCreateInfo>(
          info->pNext, VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO)) {
    s->type = t->semaphoreType;
    if (s->type == VK_SEMAPHORE_TYPE_TIMELINE) s->value = t->initialValue;
  }
  *pSemaphore = to_handle<VkSemaphore>(s);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroySemaphore(VkDevice device, VkSemaphore semaphore,
                                                   const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<Semaphore>(semaphore));
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetSemaphoreCounterValue(VkDevice device,
                                                               VkSemaphore semaphore,
                                                               uint64_t* pValue) {
  Device* dev = from_handle<Device>(device);
  Semaphore* s = from_handle<Semaphore>(semaphore);
  if (s->type != VK_SEMAPHORE_TYPE_TIMELINE) {
    COOPVK_ERROR("vkGetSemaphoreCounterValue: semaphore is not a timeline semaphore");
    return VK_ERROR_UNKNOWN;
  }
  std::lock_guard<std::mutex> lock(dev->sync_mutex);
  *pValue = s->value;
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_WaitSemaphores(VkDevice device,
                                                     const VkSemaphoreWaitInfo* info,
                                                     uint64_t timeout) {
  Device* dev = from_handle<Device>(device);
  const bool any = (info->flags & VK_SEMAPHORE_WAIT_ANY_BIT) != 0;
  std::unique_lock<std::mutex> lock(dev->sync_mutex);
  return wait_with_timeout(dev, lock, timeout, [&] {
    for (uint32_t i = 0; i < info->semaphoreCount; ++i) {
      bool ok = from_handle<Semaphore>(info->pSemaphores[i])->value >= info->pValues[i];
      if (any && ok) return true;
      if (!any && !ok) return false;
    }
    return !any || info->semaphoreCount == 0;
  });
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_SignalSemaphore(VkDevice device,
                                                      const VkSemaphoreSignalInfo* info) {
  Device* dev = from_handle<Device>(device);
  Semaphore* s = from_handle<Semaphore>(info->semaphore);
  if (s->type != VK_SEMAPHORE_TYPE_TIMELINE) {
    COOPVK_ERROR("vkSignalSemaphore: semaphore is not a timeline semaphore");
    return VK_ERROR_UNKNOWN;
  }
  signal_semaphore(dev, s, info->value);
  return VK_SUCCESS;
}

// ---- events -------------------------------------------------------------------------

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateEvent(VkDevice device, const VkEventCreateInfo*,
                                                  const VkAllocationCallbacks* pAllocator,
                                                  VkEvent* pEvent) {
  Device* dev = from_handle<Device>(device);
  Event* e = vk_new<Event>(pick_allocator(pAllocator, dev->alloc()), VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!e) return VK_ERROR_OUT_OF_HOST_MEMORY;
  *pEvent = to_handle<VkEvent>(e);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyEvent(VkDevice device, VkEvent event,
                                               const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<Event>(event));
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetEventStatus(VkDevice device, VkEvent event) {
  Device* dev = from_handle<Device>(device);
  std::lock_guard<std::mutex> lock(dev->sync_mutex);
  return from_handle<Event>(event)->set ? VK_EVENT_SET : VK_EVENT_RESET;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_SetEvent(VkDevice device, VkEvent event) {
  set_event(from_handle<Device>(device), from_handle<Event>(event), true);
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_ResetEvent(VkDevice device, VkEvent event) {
  set_event(from_handle<Device>(device), from_handle<Event>(event), false);
  return VK_SUCCESS;
}
