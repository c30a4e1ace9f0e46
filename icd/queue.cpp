// Queue thread, vkQueueSubmit(2), vkQueueWaitIdle.
#include "queue.h"

#include "log.h"
#include "vk_entrypoints.h"

#include "coopvk/jit/workgroup_runner.h"

using namespace coopvk;

void Queue::start() { thread_ = std::thread([this] { run(); }); }

void Queue::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Queue::submit(std::vector<Batch>&& batches) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& b : batches) {
      for (CommandBuffer* cb : b.command_buffers) cb->pending.fetch_add(1);
      pending_.push_back(std::move(b));
    }
  }
  cv_.notify_all();
}

void Queue::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_cv_.wait(lock, [&] { return pending_.empty() && !busy_; });
}

void Queue::run() {
  jit::WorkgroupRunner runner;  // this thread's share of every dispatch runs on it
  for (;;) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping and drained
      batch = std::move(pending_.front());
      pending_.pop_front();
      busy_ = true;
    }
    execute(batch, runner);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    idle_cv_.notify_all();
  }
}

void Queue::execute(Batch& b, jit::WorkgroupRunner& runner) {
  for (const SemaphoreOp& w : b.waits) wait_semaphore(device, w.semaphore, w.value);
  ExecContext ctx{device, this, &runner};
  for (CommandBuffer* cb : b.command_buffers) {
    cb->execute(ctx);
    // One-time-submit buffers become invalid once run (Vulkan spec, "Command Buffer
    // Lifecycle"); the app must reset them before recording again.
    if (cb->usage & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) cb->state = CbState::Invalid;
    cb->pending.fetch_sub(1);
  }
  for (const SemaphoreOp& s : b.signals) signal_semaphore(device, s.semaphore, s.value);
  if (b.fence) signal_fence(device, b.fence);
}

namespace {

VkResult check_executable(CommandBuffer* cb, const char* fn) {
  if (cb->state != CbState::Executable || cb->level != VK_COMMAND_BUFFER_LEVEL_PRIMARY) {
    COOPVK_ERROR("%s: command buffer %p is not an executable primary command buffer", fn,
                 static_cast<void*>(cb));
    return VK_ERROR_VALIDATION_FAILED_EXT;
  }
  return VK_SUCCESS;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_QueueSubmit(VkQueue queue, uint32_t submitCount,
                                                  const VkSubmitInfo* pSubmits, VkFence fence) {
  Queue* q = from_handle<Queue>(queue);
  std::vector<Batch> batches(submitCount);
  for (uint32_t i = 0; i < submitCount; ++i) {
    const VkSubmitInfo& s = pSubmits[i];
    auto* tl = find_in_chain<VkTimelineSemaphoreSubmitInfo>(
        s.pNext, VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
    for (uint32_t k = 0; k < s.waitSemaphoreCount; ++k) {
      uint64_t v = tl && k < tl->waitSemaphoreValueCount && tl->pWaitSemaphoreValues
                       ? tl->pWaitSemaphoreValues[k] : 0;
      batches[i].waits.push_back({from_handle<Semaphore>(s.pWaitSemaphores[k]), v});
    }
    for (uint32_t k = 0; k < s.commandBufferCount; ++k) {
      CommandBuffer* cb = to_cb(s.pCommandBuffers[k]);
      if (VkResult r = check_executable(cb, "vkQueueSubmit"); r != VK_SUCCESS) return r;
      batches[i].command_buffers.push_back(cb);
    }
    for (uint32_t k = 0; k < s.signalSemaphoreCount; ++k) {
      uint64_t v = tl && k < tl->signalSemaphoreValueCount && tl->pSignalSemaphoreValues
                       ? tl->pSignalSemaphoreValues[k] : 0;
      batches[i].signals.push_back({from_handle<Semaphore>(s.pSignalSemaphores[k]), v});
    }
  }
  if (fence) {
    if (batches.empty()) batches.emplace_back();
    batches.back().fence = from_handle<Fence>(fence);
    mark_fence_in_flight(q->device, batches.back().fence);
  }
  q->submit(std::move(batches));
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_QueueSubmit2(VkQueue queue, uint32_t submitCount,
                                                   const VkSubmitInfo2* pSubmits, VkFence fence) {
  Queue* q = from_handle<Queue>(queue);
  std::vector<Batch> batches(submitCount);
  for (uint32_t i = 0; i < submitCount; ++i) {
    const VkSubmitInfo2& s = pSubmits[i];
    for (uint32_t k = 0; k < s.waitSemaphoreInfoCount; ++k)
      batches[i].waits.push_back({from_handle<Semaphore>(s.pWaitSemaphoreInfos[k].semaphore),
                                  s.pWaitSemaphoreInfos[k].value});
    for (uint32_t k = 0; k < s.commandBufferInfoCount; ++k) {
      CommandBuffer* cb = to_cb(s.pCommandBufferInfos[k].commandBuffer);
      if (VkResult r = check_executable(cb, "vkQueueSubmit2"); r != VK_SUCCESS) return r;
      batches[i].command_buffers.push_back(cb);
    }
    for (uint32_t k = 0; k < s.signalSemaphoreInfoCount; ++k)
      batches[i].signals.push_back({from_handle<Semaphore>(s.pSignalSemaphoreInfos[k].semaphore),
                                    s.pSignalSemaphoreInfos[k].value});
  }
  if (fence) {
    if (batches.empty()) batches.emplace_back();
    batches.back().fence = from_handle<Fence>(fence);
    mark_fence_in_flight(q->device, batches.back().fence);
  }
  q->submit(std::move(batches));
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_QueueWaitIdle(VkQueue queue) {
  from_handle<Queue>(queue)->wait_idle();
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_QueueBindSparse(VkQueue, uint32_t, const VkBindSparseInfo*,
                                                      VkFence) {
  COOPVK_ERROR("vkQueueBindSparse: sparse binding is not supported (no queue has SPARSE_BINDING)");
  return VK_ERROR_FEATURE_NOT_PRESENT;
}
