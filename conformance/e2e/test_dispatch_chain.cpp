// Long chains of small dependent dispatches in one command buffer, through the real loader.
//
// What ggml's graphs look like: hundreds of tiny dispatches, a pipeline barrier after each,
// every one reading what the one before wrote. Here each link (chain_step.comp) reads, for
// every element it writes, two elements that other workgroups of the link before wrote, and
// links ping-pong between two buffers with their own descriptor sets and push constants.
// Links have 1 to 64 workgroups (a single one runs on the queue thread alone, more are
// handed to the worker pool), in a pattern that switches between the two every few links.
// The result after 256 links is compared exactly with a CPU run of the same chain, so a
// link that starts before the one before has finished, or sees any of its writes late,
// shows up. Between submissions the host waits 0 to 2 ms, across the time idle workers
// spin before they sleep, so both the spinning and the sleeping hand-off are taken; with
// COOPVK_SPIN_US=0 every hand-off goes through the sleeping one, and with
// COOPVK_INLINE_US=0 every link of several workgroups is handed out. Devices are destroyed
// while their workers spin or sleep. A last case runs chains from three application
// threads on three queues of one device at once, contending for its one worker pool.
//
// The worker pool reads COOPVK_THREADS, COOPVK_SPIN_US and COOPVK_INLINE_US when a device's
// pool starts (its first dispatch), so they are set before each device is created and
// restored afterwards.
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "compute_job.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

constexpr uint32_t kLocal = 64;            // chain_step.comp's workgroup size
constexpr uint32_t kMaxGroups = 64;
constexpr uint32_t kElements = kMaxGroups * kLocal;  // of each buffer
constexpr uint32_t kLinks = 256;
// Workgroups of link k: kPattern[k % 8]; single-workgroup links next to large ones.
constexpr uint32_t kPattern[8] = {1, 64, 2, 1, 17, 5, 64, 3};

struct Push {
  uint32_t step, m;
};

// Sets an environment variable for as long as it lives, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

uint32_t link_value(const uint32_t* src, uint32_t i, uint32_t step) {
  const uint32_t a = src[(i + 1) % kElements], b = src[(i * 7 + step) % kElements];
  uint32_t x = (a * 2654435761u) ^ (b + step);
  for (uint32_t k = 0; k < 48; ++k) x = (x ^ (x >> 15)) * 2246822519u + k;
  return x;
}

// The chain on the CPU, from a and b as they are to both buffers at the end. `lost`: a link
// whose writes the next link does not see (for the test of the test).
void reference_chain(std::vector<uint32_t>& a, std::vector<uint32_t>& b, uint32_t lost = kLinks) {
  for (uint32_t k = 0; k < kLinks; ++k) {
    if (k == lost) continue;
    const std::vector<uint32_t>& src = k % 2 ? b : a;
    std::vector<uint32_t>& dst = k % 2 ? a : b;
    for (uint32_t i = 0; i < kPattern[k % 8] * kLocal; ++i) dst[i] = link_value(src.data(), i, k);
  }
}

// Initial contents for round r: different every round, so a round that did nothing fails.
void initial(uint32_t r, std::vector<uint32_t>& a, std::vector<uint32_t>& b) {
  a.resize(kElements);
  b.resize(kElements);
  uint32_t s = 0x9e3779b9u * (r + 1);
  for (uint32_t i = 0; i < kElements; ++i) {
    s = s * 1664525u + 1013904223u;
    a[i] = s ^ (s >> 15);
    b[i] = ~a[i];
  }
}

// The pipeline, two buffers, the two descriptor sets (A -> B, B -> A) and one command
// buffer holding the whole chain, recorded once and submitted every round. Everything is
// the rig's own (command pool included), so rigs on different threads share only the device.
struct ChainRig {
  Device& dev;
  uint32_t queue_index;
  VkCommandPool cmd_pool = VK_NULL_HANDLE;
  StorageLayout storage;  // src, dst; Push
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  Buffer a, b;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  explicit ChainRig(Device& d, uint32_t queue = 0)
      : dev(d), queue_index(queue), storage(d.device, 2, sizeof(Push)) {
    VkDevice vd = dev.device;
    VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VK_CHECK(vkCreateCommandPool(vd, &cpci, nullptr, &cmd_pool));
    std::vector<uint32_t> words = load_spirv_file(std::string(COOPVK_E2E_SHADER_DIR) + "/chain_step.spv");
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * 4;
    smci.pCode = words.data();
    VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cci.stage.pNext = &smci;
    cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cci.stage.pName = "main";
    cci.layout = storage.layout;
    VK_CHECK(vkCreateComputePipelines(vd, VK_NULL_HANDLE, 1, &cci, nullptr, &pipeline));

    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 2;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &size;
    VK_CHECK(vkCreateDescriptorPool(vd, &dpci, nullptr, &pool));
    a = dev.create_buffer(kElements * 4);
    b = dev.create_buffer(kElements * 4);
    const VkDescriptorSet sets[2] = {storage.write_set(pool, {a.buffer, b.buffer}),
                                     storage.write_set(pool, {b.buffer, a.buffer})};

    VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cbai.commandPool = cmd_pool;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VK_CHECK(vkAllocateCommandBuffers(vd, &cbai, &cb));
    VkCommandBufferBeginInfo cbbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_CHECK(vkBeginCommandBuffer(cb, &cbbi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    for (uint32_t k = 0; k < kLinks; ++k) {
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, storage.layout, 0, 1, &sets[k % 2], 0, nullptr);
      const Push push{k, kElements};
      vkCmdPushConstants(cb, storage.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
      vkCmdDispatch(cb, kPattern[k % 8], 1, 1);
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
                           0, nullptr, 0, nullptr);
    }
    VK_CHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_CHECK(vkCreateFence(vd, &fci, nullptr, &fence));
  }

  ~ChainRig() {
    vkDestroyFence(dev.device, fence, nullptr);
    dev.destroy_buffer(a);
    dev.destroy_buffer(b);
    vkDestroyCommandPool(dev.device, cmd_pool, nullptr);  // frees the command buffer
    vkDestroyDescriptorPool(dev.device, pool, nullptr);
    vkDestroyPipeline(dev.device, pipeline, nullptr);
  }
  ChainRig(const ChainRig&) = delete;
  ChainRig& operator=(const ChainRig&) = delete;

  // One round: fresh inputs, the chain, the fence, the check. Returns the wrong elements.
  uint32_t round(uint32_t r) {
    std::vector<uint32_t> ra, rb;
    initial(r, ra, rb);
    std::memcpy(a.mapped, ra.data(), kElements * 4);
    std::memcpy(b.mapped, rb.data(), kElements * 4);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VK_CHECK(vkQueueSubmit(dev.queues.at(queue_index), 1, &si, fence));
    reference_chain(ra, rb);  // while the device runs it
    VK_CHECK(vkWaitForFences(dev.device, 1, &fence, VK_TRUE, UINT64_MAX));
    VK_CHECK(vkResetFences(dev.device, 1, &fence));
    uint32_t bad = 0;
    const auto* ga = static_cast<const uint32_t*>(a.mapped);
    const auto* gb = static_cast<const uint32_t*>(b.mapped);
    for (uint32_t i = 0; i < kElements; ++i) bad += (ga[i] != ra[i]) + (gb[i] != rb[i]);
    return bad;
  }
};

// The host's pause before round r: none, shorter and longer than idle workers spin.
void gap(uint32_t r) {
  static const std::chrono::microseconds kGaps[] = {std::chrono::microseconds(0), std::chrono::microseconds(20),
                                                    std::chrono::microseconds(300), std::chrono::microseconds(2000)};
  const auto g = kGaps[r % 4];
  if (g.count()) std::this_thread::sleep_for(g);
}

}  // namespace

TEST_CASE("the chain's CPU reference tells a lost link or a wrong element apart") {
  // The device test can fail only if such errors change the chain's end.
  std::vector<uint32_t> a, b;
  initial(0, a, b);
  const std::vector<uint32_t> a0 = a, b0 = b;
  reference_chain(a, b);
  auto differ = [&](const std::vector<uint32_t>& a2, const std::vector<uint32_t>& b2) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < kElements; ++i) n += (a[i] != a2[i]) + (b[i] != b2[i]);
    return n;
  };
  // One element of the input off by one: the links mix it into many others.
  std::vector<uint32_t> a1 = a0, b1 = b0;
  a1[5] += 1;
  reference_chain(a1, b1);
  CHECK(differ(a1, b1) > 100);
  // A single-workgroup link whose writes the next link misses, and a 64-workgroup one.
  for (uint32_t lost : {kLinks - 5, kLinks - 7}) {
    std::vector<uint32_t> a2 = a0, b2 = b0;
    reference_chain(a2, b2, lost);
    CHECK(differ(a2, b2) > 0);
  }
}

TEST_CASE("chains of 256 dependent dispatches match the CPU on 1-, 2-, 3- and 8-thread pools, spinning and not") {
  constexpr uint32_t kRounds = 8;
  // COOPVK_INLINE_US=0 hands every link of more than one workgroup to the workers; by
  // default the small ones run on the queue thread alone.
  for (const char* inline_us : {"0", "5"}) {
    for (const char* spin : {"50", "0"}) {
      for (unsigned threads : {1u, 2u, 3u, 8u}) {
        ScopedEnv t("COOPVK_THREADS", std::to_string(threads));
        ScopedEnv s("COOPVK_SPIN_US", spin);
        ScopedEnv i("COOPVK_INLINE_US", inline_us);
        Device dev;
        ChainRig rig(dev);
        uint32_t failed_rounds = 0, bad_total = 0;
        for (uint32_t r = 0; r < kRounds; ++r) {
          gap(r);
          const uint32_t bad = rig.round(r);
          failed_rounds += bad != 0;
          bad_total += bad;
        }
        INFO("COOPVK_THREADS=" << threads << " COOPVK_SPIN_US=" << spin << " COOPVK_INLINE_US=" << inline_us << ": "
                               << failed_rounds << " of " << kRounds << " rounds wrong, " << bad_total
                               << " elements in all");
        CHECK(failed_rounds == 0);
      }  // the device goes with its workers spinning (50) or asleep (0)
    }
  }
}

TEST_CASE("three application threads run dispatch chains on three queues at once") {
  constexpr uint32_t kQueues = 3, kRounds = 6;
  for (const char* spin : {"50", "0"}) {
    ScopedEnv t("COOPVK_THREADS", "3");
    ScopedEnv s("COOPVK_SPIN_US", spin);
    ScopedEnv i("COOPVK_INLINE_US", "0");
    DeviceOptions opts;
    opts.queue_count = kQueues;
    Device dev(opts);
    std::atomic<uint32_t> failed_rounds{0}, errors{0};
    std::vector<std::thread> threads;
    for (uint32_t q = 0; q < kQueues; ++q) {
      threads.emplace_back([&, q] {
        try {  // no Catch2 assertions off the main thread
          ChainRig rig(dev, q);
          for (uint32_t r = 0; r < kRounds; ++r) {
            gap(r + q);
            if (rig.round(r * kQueues + q)) failed_rounds++;
          }
        } catch (const std::exception&) {
          errors++;
        }
      });
    }
    for (auto& th : threads) th.join();
    INFO("COOPVK_SPIN_US=" << spin);
    CHECK(errors.load() == 0);
    CHECK(failed_rounds.load() == 0);
  }
}
