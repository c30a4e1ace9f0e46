// Vulkan timeouts: 0 means "poll", UINT64_MAX means "forever", otherwise nanoseconds.
#pragma once

#include <chrono>

namespace coopvk {

template <typename Pred>
VkResult wait_with_timeout(Device* dev, std::unique_lock<std::mutex>& lock, uint64_t timeout_ns,
                           Pred pred) {
  if (pred()) return VK_SUCCESS;
  if (timeout_ns == 0) return VK_TIMEOUT;
  if (timeout_ns == UINT64_MAX) {
    dev->sync_cv.wait(lock, pred);
    return VK_SUCCESS;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  return dev->sync_cv.wait_until(lock, deadline, pred) ? VK_SUCCESS : VK_TIMEOUT;
}

}  // namespace coopvk
