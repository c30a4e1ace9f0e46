// Fences, semaphores, events, timestamps and multi-threaded submission.
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "vk_test_env.h"

using namespace coopvk::test;
using namespace std::chrono_literals;

namespace {

VkSemaphore make_semaphore(VkDevice dev, VkSemaphoreType type, uint64_t initial = 0) {
  VkSemaphoreTypeCreateInfo t{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  t.semaphoreType = type;
  t.initialValue = initial;
  VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &t};
  VkSemaphore s;
  VK_CHECK(vkCreateSemaphore(dev, &ci, nullptr, &s));
  return s;
}

VkFence make_fence(VkDevice dev, bool signaled = false) {
  VkFenceCreateInfo ci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (signaled) ci.flags = VK_FENCE_CREATE_SIGNALED_BIT;
  VkFence f;
  VK_CHECK(vkCreateFence(dev, &ci, nullptr, &f));
  return f;
}

VkCommandBuffer record_fill(Device& dev, VkCommandPool pool, VkBuffer buf, uint32_t value) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  VK_CHECK(vkAllocateCommandBuffers(dev.device, &ai, &cb));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VK_CHECK(vkBeginCommandBuffer(cb, &bi));
  vkCmdFillBuffer(cb, buf, 0, VK_WHOLE_SIZE, value);
  VK_CHECK(vkEndCommandBuffer(cb));
  return cb;
}

}  // namespace

TEST_CASE("fences: create signaled, reset, poll, timeout") {
  Device dev;
  VkFence f = make_fence(dev.device, true);
  CHECK(vkGetFenceStatus(dev.device, f) == VK_SUCCESS);
  VK_CHECK(vkResetFences(dev.device, 1, &f));
  CHECK(vkGetFenceStatus(dev.device, f) == VK_NOT_READY);
  CHECK(vkWaitForFences(dev.device, 1, &f, VK_TRUE, 0) == VK_TIMEOUT);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(vkWaitForFences(dev.device, 1, &f, VK_TRUE, 20'000'000) == VK_TIMEOUT);
  CHECK(std::chrono::steady_clock::now() - t0 >= 19ms);
  // An empty submission signals the fence once earlier work is done.
  VK_CHECK(vkQueueSubmit(dev.queues[0], 0, nullptr, f));
  CHECK(vkWaitForFences(dev.device, 1, &f, VK_TRUE, UINT64_MAX) == VK_SUCCESS);
  // waitAny over one signaled and one unsignaled fence.
  VkFence g = make_fence(dev.device);
  VkFence both[2] = {f, g};
  CHECK(vkWaitForFences(dev.device, 2, both, VK_FALSE, 0) == VK_SUCCESS);
  CHECK(vkWaitForFences(dev.device, 2, both, VK_TRUE, 0) == VK_TIMEOUT);
  // Polled until done, as ggml does (a poll of a submitted fence may wait a little for it,
  // sync.cpp): the fill is finished when the poll says so, and a reset fence polls unready.
  Buffer b = dev.create_buffer(1 << 20);
  VkCommandBuffer cb = record_fill(dev, dev.pool, b.buffer, 0x5A5A5A5Au);
  VK_CHECK(vkResetFences(dev.device, 1, &f));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  VK_CHECK(vkQueueSubmit(dev.queues[0], 1, &si, f));
  VkResult r;
  while ((r = vkGetFenceStatus(dev.device, f)) == VK_NOT_READY) {
  }
  CHECK(r == VK_SUCCESS);
  const auto* words = static_cast<const uint32_t*>(b.mapped);
  CHECK(words[0] == 0x5A5A5A5Au);
  CHECK(words[(1 << 18) - 1] == 0x5A5A5A5Au);
  VK_CHECK(vkResetFences(dev.device, 1, &f));
  CHECK(vkGetFenceStatus(dev.device, f) == VK_NOT_READY);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &cb);
  dev.destroy_buffer(b);
  vkDestroyFence(dev.device, f, nullptr);
  vkDestroyFence(dev.device, g, nullptr);
}

TEST_CASE("a queue waits for a timeline value signaled from the host") {
  Device dev;
  Buffer b = dev.create_buffer(64);
  VkSemaphore tl = make_semaphore(dev.device, VK_SEMAPHORE_TYPE_TIMELINE, 1);
  uint64_t v = 0;
  VK_CHECK(vkGetSemaphoreCounterValue(dev.device, tl, &v));
  CHECK(v == 1);
  VkCommandBuffer cb = record_fill(dev, dev.pool, b.buffer, 0xCAFE);
  uint64_t wait_value = 5, signal_value = 10;
  VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ts.waitSemaphoreValueCount = 1;
  ts.pWaitSemaphoreValues = &wait_value;
  ts.signalSemaphoreValueCount = 1;
  ts.pSignalSemaphoreValues = &signal_value;
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &ts};
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &tl;
  si.pWaitDstStageMask = &stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &tl;
  VkFence f = make_fence(dev.device);
  VK_CHECK(vkQueueSubmit(dev.queues[0], 1, &si, f));
  std::this_thread::sleep_for(30ms);
  CHECK(vkGetFenceStatus(dev.device, f) == VK_NOT_READY);  // still blocked on value 5
  CHECK(static_cast<uint32_t*>(b.mapped)[0] == 0);
  VkSemaphoreSignalInfo sig{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
  sig.semaphore = tl;
  sig.value = 5;
  VK_CHECK(vkSignalSemaphore(dev.device, &sig));
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &tl;
  wi.pValues = &signal_value;
  VK_CHECK(vkWaitSemaphores(dev.device, &wi, UINT64_MAX));
  VK_CHECK(vkWaitForFences(dev.device, 1, &f, VK_TRUE, UINT64_MAX));
  CHECK(static_cast<uint32_t*>(b.mapped)[0] == 0xCAFEu);
  VK_CHECK(vkGetSemaphoreCounterValue(dev.device, tl, &v));
  CHECK(v == 10);
  uint64_t too_far = 11;
  wi.pValues = &too_far;
  CHECK(vkWaitSemaphores(dev.device, &wi, 1'000'000) == VK_TIMEOUT);
  vkDestroyFence(dev.device, f, nullptr);
  vkDestroySemaphore(dev.device, tl, nullptr);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &cb);
  dev.destroy_buffer(b);
}

TEST_CASE("a binary semaphore orders work across two queues (vkQueueSubmit2)") {
  DeviceOptions opts;
  opts.queue_count = 2;
  VkPhysicalDeviceSynchronization2Features s2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
  s2.synchronization2 = VK_TRUE;
  opts.features_chain = &s2;
  Device dev(opts);
  Buffer a = dev.create_buffer(1 << 20), b = dev.create_buffer(1 << 20);
  VkSemaphore sem = make_semaphore(dev.device, VK_SEMAPHORE_TYPE_BINARY);
  VkEvent gate;
  VkEventCreateInfo eci{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
  VK_CHECK(vkCreateEvent(dev.device, &eci, nullptr, &gate));

  // Queue 0: wait for a host-set event, fill A, signal. Queue 1: wait, copy A -> B.
  VkCommandBuffer c0 = dev.begin();
  vkCmdWaitEvents(c0, 1, &gate, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                  nullptr, 0, nullptr, 0, nullptr);
  vkCmdFillBuffer(c0, a.buffer, 0, VK_WHOLE_SIZE, 0x5151);
  VK_CHECK(vkEndCommandBuffer(c0));
  VkCommandBuffer c1 = dev.begin();
  VkBufferCopy r{0, 0, 1 << 20};
  vkCmdCopyBuffer(c1, a.buffer, b.buffer, 1, &r);
  VK_CHECK(vkEndCommandBuffer(c1));

  VkCommandBufferSubmitInfo cbi0{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, c0};
  VkCommandBufferSubmitInfo cbi1{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, c1};
  VkSemaphoreSubmitInfo ssi{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
  ssi.semaphore = sem;
  ssi.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  VkSubmitInfo2 s0{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
  s0.commandBufferInfoCount = 1;
  s0.pCommandBufferInfos = &cbi0;
  s0.signalSemaphoreInfoCount = 1;
  s0.pSignalSemaphoreInfos = &ssi;
  VkSubmitInfo2 s1{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
  s1.waitSemaphoreInfoCount = 1;
  s1.pWaitSemaphoreInfos = &ssi;
  s1.commandBufferInfoCount = 1;
  s1.pCommandBufferInfos = &cbi1;
  VkFence f = make_fence(dev.device);
  VK_CHECK(vkQueueSubmit2(dev.queues[0], 1, &s0, VK_NULL_HANDLE));
  VK_CHECK(vkQueueSubmit2(dev.queues[1], 1, &s1, f));
  std::this_thread::sleep_for(20ms);
  CHECK(vkGetEventStatus(dev.device, gate) == VK_EVENT_RESET);
  CHECK(vkGetFenceStatus(dev.device, f) == VK_NOT_READY);
  VK_CHECK(vkSetEvent(dev.device, gate));
  VK_CHECK(vkWaitForFences(dev.device, 1, &f, VK_TRUE, UINT64_MAX));
  auto* w = static_cast<uint32_t*>(b.mapped);
  CHECK(w[0] == 0x5151u);
  CHECK(w[(1 << 18) - 1] == 0x5151u);
  VK_CHECK(vkDeviceWaitIdle(dev.device));
  vkDestroyEvent(dev.device, gate, nullptr);
  vkDestroyFence(dev.device, f, nullptr);
  vkDestroySemaphore(dev.device, sem, nullptr);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &c0);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &c1);
  dev.destroy_buffer(a);
  dev.destroy_buffer(b);
}

TEST_CASE("vkCmdSetEvent is seen by the host") {
  Device dev;
  VkEvent e;
  VkEventCreateInfo eci{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
  VK_CHECK(vkCreateEvent(dev.device, &eci, nullptr, &e));
  CHECK(vkGetEventStatus(dev.device, e) == VK_EVENT_RESET);
  VkCommandBuffer cb = dev.begin();
  vkCmdSetEvent(cb, e, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  dev.submit_and_wait(cb);
  CHECK(vkGetEventStatus(dev.device, e) == VK_EVENT_SET);
  cb = dev.begin();
  vkCmdResetEvent(cb, e, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  dev.submit_and_wait(cb);
  CHECK(vkGetEventStatus(dev.device, e) == VK_EVENT_RESET);
  vkDestroyEvent(dev.device, e, nullptr);
}

TEST_CASE("submissions from several threads to several queues all complete correctly") {
  DeviceOptions opts;
  opts.queue_count = 4;
  Device dev(opts);
  constexpr int kThreads = 4, kRounds = 40;
  std::vector<Buffer> bufs;
  for (int t = 0; t < kThreads; ++t) bufs.push_back(dev.create_buffer(64 * 1024));
  VkSemaphore tl = make_semaphore(dev.device, VK_SEMAPHORE_TYPE_TIMELINE, 0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        // Command pools are externally synchronized: one per thread.
        VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        VkCommandPool pool;
        VK_CHECK(vkCreateCommandPool(dev.device, &pci, nullptr, &pool));
        VkFence f = make_fence(dev.device);
        for (int r = 0; r < kRounds; ++r) {
          uint32_t value = uint32_t(t * 1000 + r);
          VkCommandBuffer cb = record_fill(dev, pool, bufs[t].buffer, value);
          VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
          si.commandBufferCount = 1;
          si.pCommandBuffers = &cb;
          VK_CHECK(vkQueueSubmit(dev.queues[t], 1, &si, f));
          VK_CHECK(vkWaitForFences(dev.device, 1, &f, VK_TRUE, UINT64_MAX));
          VK_CHECK(vkResetFences(dev.device, 1, &f));
          auto* w = static_cast<uint32_t*>(bufs[t].mapped);
          if (w[0] != value || w[16383] != value) failures++;
          vkFreeCommandBuffers(dev.device, pool, 1, &cb);
        }
        // Each thread then bumps the shared timeline from its queue.
        uint64_t sig = uint64_t(t + 1);
        VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
        ts.signalSemaphoreValueCount = 1;
        ts.pSignalSemaphoreValues = &sig;
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &ts};
        si.signalSemaphoreCount = 1;
        si.pSignalSemaphores = &tl;
        VK_CHECK(vkQueueSubmit(dev.queues[t], 1, &si, VK_NULL_HANDLE));
        VK_CHECK(vkQueueWaitIdle(dev.queues[t]));
        vkDestroyFence(dev.device, f, nullptr);
        vkDestroyCommandPool(dev.device, pool, nullptr);
      } catch (...) {
        failures += 1000;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  uint64_t v = 0;
  VK_CHECK(vkGetSemaphoreCounterValue(dev.device, tl, &v));
  CHECK(v == kThreads);  // the maximum of all signals
  vkDestroySemaphore(dev.device, tl, nullptr);
  for (auto& b : bufs) dev.destroy_buffer(b);
}

TEST_CASE("timestamp queries are ordered and reset from host and device") {
  VkPhysicalDeviceHostQueryResetFeatures hqr{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES};
  hqr.hostQueryReset = VK_TRUE;
  DeviceOptions opts;
  opts.features_chain = &hqr;
  Device dev(opts);
  VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = 4;
  VkQueryPool qp;
  VK_CHECK(vkCreateQueryPool(dev.device, &qci, nullptr, &qp));
  vkResetQueryPool(dev.device, qp, 0, 4);
  uint64_t res[8] = {};
  CHECK(vkGetQueryPoolResults(dev.device, qp, 0, 2, sizeof(res), res, 16,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT) ==
        VK_NOT_READY);
  CHECK(res[1] == 0);  // availability 0

  Buffer a = dev.create_buffer(16 << 20), b = dev.create_buffer(16 << 20);
  VkCommandBuffer cb = dev.begin();
  vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
  VkBufferCopy r{0, 0, 16 << 20};
  vkCmdCopyBuffer(cb, a.buffer, b.buffer, 1, &r);
  vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, qp, 1);
  dev.submit_and_wait(cb);
  VK_CHECK(vkGetQueryPoolResults(dev.device, qp, 0, 2, sizeof(res), res, 16,
                                 VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT |
                                     VK_QUERY_RESULT_WAIT_BIT));
  CHECK(res[1] == 1);
  CHECK(res[3] == 1);
  CHECK(res[2] > res[0]);  // a 16 MiB copy takes more than a nanosecond

  cb = dev.begin();
  vkCmdResetQueryPool(cb, qp, 0, 2);
  dev.submit_and_wait(cb);
  CHECK(vkGetQueryPoolResults(dev.device, qp, 0, 1, sizeof(res), res, 8,
                              VK_QUERY_RESULT_64_BIT) == VK_NOT_READY);
  SECTION("bad stride is rejected") {
    CHECK(vkGetQueryPoolResults(dev.device, qp, 0, 2, sizeof(res), res, 4,
                                VK_QUERY_RESULT_64_BIT) != VK_SUCCESS);
  }
  SECTION("non-timestamp pools are not supported") {
    VkQueryPoolCreateInfo occ{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    occ.queryType = VK_QUERY_TYPE_OCCLUSION;
    occ.queryCount = 1;
    VkQueryPool bad;
    CHECK(vkCreateQueryPool(dev.device, &occ, nullptr, &bad) != VK_SUCCESS);
  }
  vkDestroyQueryPool(dev.device, qp, nullptr);
  dev.destroy_buffer(a);
  dev.destroy_buffer(b);
}

TEST_CASE("pipeline barriers (1 and 2) keep the order of transfers") {
  Device dev;
  Buffer a = dev.create_buffer(4096), b = dev.create_buffer(4096);
  VkCommandBuffer cb = dev.begin();
  vkCmdFillBuffer(cb, a.buffer, 0, 4096, 7);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                       &mb, 0, nullptr, 0, nullptr);
  VkBufferCopy r{0, 0, 4096};
  vkCmdCopyBuffer(cb, a.buffer, b.buffer, 1, &r);
  VkMemoryBarrier2 mb2{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb2.srcStageMask = mb2.dstStageMask = VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT;
  VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  di.memoryBarrierCount = 1;
  di.pMemoryBarriers = &mb2;
  vkCmdPipelineBarrier2(cb, &di);
  vkCmdFillBuffer(cb, a.buffer, 0, 4096, 9);
  dev.submit_and_wait(cb);
  CHECK(static_cast<uint32_t*>(b.mapped)[1023] == 7u);
  CHECK(static_cast<uint32_t*>(a.mapped)[1023] == 9u);
  dev.destroy_buffer(a);
  dev.destroy_buffer(b);
}
