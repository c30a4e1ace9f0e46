// Command pools and command buffers. Recording appends closures to a list; the queue
// thread replays them in order (queue.cpp). Execution is serial per queue, so pipeline
// barriers need no work beyond keeping that order.
#pragma once

#include "compute_state.h"
#include "device.h"

#include <atomic>
#include <functional>
#include <list>
#include <vector>

namespace coopvk::jit {
class WorkgroupRunner;
}

namespace coopvk {

struct Queue;
struct CommandBuffer;

// State a command sees while it runs on a queue.
struct ExecContext {
  Device* device;
  Queue* queue;
  jit::WorkgroupRunner* runner;  // the queue thread's, for its share of a dispatch
};

using Command = std::function<void(ExecContext&)>;

struct CommandPool {
  Device* device = nullptr;
  VkCommandPoolCreateFlags flags = 0;
  uint32_t queue_family = 0;
  std::list<CommandBuffer*> buffers;
};

enum class CbState { Initial, Recording, Executable, Invalid };

struct CommandBuffer : DispatchableObject {
  Device* device = nullptr;
  CommandPool* pool = nullptr;
  VkCommandBufferLevel level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  CbState state = CbState::Initial;
  VkCommandBufferUsageFlags usage = 0;
  // First error met while recording (an unsupported command, bad arguments);
  // vkEndCommandBuffer returns it so the failure is never silent.
  VkResult record_error = VK_SUCCESS;
  std::vector<Command> commands;
  std::atomic<uint32_t> pending{0};  // submissions not yet finished
  ComputeBindState compute;          // bound pipeline, sets, push constants (commands_compute.cpp)

  void reset();
  // Records a command if recording is still healthy.
  void record(Command c) {
    if (record_error == VK_SUCCESS) commands.push_back(std::move(c));
  }
  void fail(VkResult r, const char* what);
  void execute(ExecContext& ctx) const {
    for (const auto& c : commands) c(ctx);
  }
};

inline CommandBuffer* to_cb(VkCommandBuffer h) { return from_handle<CommandBuffer>(h); }

}  // namespace coopvk
