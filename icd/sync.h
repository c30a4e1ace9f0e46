// Fences, semaphores (binary and timeline) and events. All state is guarded by the
// owning device's sync_mutex; every change notifies its sync_cv.
#pragma once

#include "device.h"

namespace coopvk {

struct Fence {
  bool signaled = false;
  bool in_flight = false;  // submitted and not yet signaled: a poll may wait a little for it
};

struct Semaphore {
  VkSemaphoreType type = VK_SEMAPHORE_TYPE_BINARY;
  uint64_t value = 0;  // timeline: the counter; binary: 1 when signaled
};

struct Event {
  bool set = false;
};

// Called by the queue thread (and host paths) with no lock held.
void signal_fence(Device* dev, Fence* f);
// Called by vkQueueSubmit(2) for the fence it was given, with no lock held.
void mark_fence_in_flight(Device* dev, Fence* f);
void signal_semaphore(Device* dev, Semaphore* s, uint64_t value);
// Blocks until the semaphore operation can proceed; a binary wait consumes the signal.
void wait_semaphore(Device* dev, Semaphore* s, uint64_t value);
void set_event(Device* dev, Event* e, bool value);
void wait_event(Device* dev, Event* e);

}  // namespace coopvk
