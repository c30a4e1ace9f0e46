// A queue runs its submissions in order on its own thread: wait semaphores, replay the
// command buffers, signal semaphores, then the fence.
#pragma once

#include "command_buffer.h"
#include "sync.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace coopvk {

struct SemaphoreOp {
  Semaphore* semaphore;
  uint64_t value;
};

struct Batch {
  std::vector<SemaphoreOp> waits;
  std::vector<CommandBuffer*> command_buffers;
  std::vector<SemaphoreOp> signals;
  Fence* fence = nullptr;  // set on the last batch of a submission only
};

struct Queue : DispatchableObject {
  Device* device = nullptr;
  uint32_t family = 0;
  uint32_t index = 0;
  VkDeviceQueueCreateFlags flags = 0;

  void start();
  void stop();
  void submit(std::vector<Batch>&& batches);
  void wait_idle();

 private:
  void run();
  void execute(Batch& b, jit::WorkgroupRunner& runner);

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;       // work arrived / stop requested
  std::condition_variable idle_cv_;  // queue drained
  std::deque<Batch> pending_;
  bool busy_ = false;
  bool stopping_ = false;
};

}  // namespace coopvk
