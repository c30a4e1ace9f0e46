// Stress test of parallel workgroups with workgroup barriers, through the real loader.
//
// Many workgroups of a tiled matrix product (tiled_matmul.comp: each runs a long K loop
// over workgroup memory with two barrier phases per step) run at once on the worker
// pool, hundreds of times, on devices whose pools have 2, 3 and 8 threads (3 splits the
// workgroups unevenly; 8 is more threads than most CI machines have cores, so workers are
// preempted mid-workgroup). Each result is compared with a CPU reference, exactly (uint
// arithmetic wraps identically on both sides). What it catches: workgroup memory shared
// between workers, fibers switched at the wrong point, a dispatch that returns before its
// last workgroup has finished, results published to the host before the fence says so.
// A last case runs the same dispatches from three application threads on three queues of
// one device at once (queue threads contending for the one worker pool, pipelines created
// concurrently). Under ThreadSanitizer (COOPVK_TSAN) the same runs check the pool, queue,
// fence and fiber code for data races.
//
// The worker pool reads COOPVK_THREADS when a device's pool starts (its first dispatch),
// so the variable is set before each device is created and restored afterwards.
#include <catch2/catch_test_macros.hpp>

#include <atomic>
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

constexpr uint32_t kTile = 16;       // tiled_matmul.comp's workgroup is kTile x kTile
constexpr uint32_t kSentinel = 0xDEADBEEFu;  // what C holds before every dispatch

struct Dims {
  uint32_t M, N, K;
};

// One problem: inputs and their CPU reference, computed once and shared by all devices.
struct Problem {
  Dims d;
  std::vector<uint32_t> a, b, ref;
};

Problem make_problem(Dims d, uint32_t seed) {
  Problem p{d, std::vector<uint32_t>(size_t(d.M) * d.K), std::vector<uint32_t>(size_t(d.K) * d.N), {}};
  // Full-range pseudo-random words: a misplaced or stale tile element changes the sum.
  uint32_t s = seed;
  auto next = [&] { s = s * 1664525u + 1013904223u; return s ^ (s >> 13); };
  for (auto& v : p.a) v = next();
  for (auto& v : p.b) v = next();
  p.ref.assign(size_t(d.M) * d.N, 0);
  for (uint32_t i = 0; i < d.M; ++i)
    for (uint32_t k = 0; k < d.K; ++k) {
      const uint32_t aik = p.a[size_t(i) * d.K + k];
      const uint32_t* brow = &p.b[size_t(k) * d.N];
      uint32_t* crow = &p.ref[size_t(i) * d.N];
      for (uint32_t j = 0; j < d.N; ++j) crow[j] += aik * brow[j];
    }
  return p;
}

const std::vector<Problem>& problems() {
  // Different shapes exercise the push constants and uneven splits of the workgroups
  // (48 or 64 per dispatch); K up to 320 means up to 40 barriers per workgroup.
  static const std::vector<Problem> ps = {
      make_problem({128, 128, 256}, 1), make_problem({128, 128, 256}, 2),
      make_problem({64, 192, 128}, 3), make_problem({192, 64, 320}, 4)};
  return ps;
}

uint32_t count_mismatches(const uint32_t* got, const std::vector<uint32_t>& ref) {
  uint32_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    if (got[i] != ref[i]) ++bad;
  return bad;
}

// Sets COOPVK_THREADS for as long as it lives, then puts back what was there.
class ScopedThreadsEnv {
 public:
  explicit ScopedThreadsEnv(unsigned threads) {
    if (const char* old = std::getenv("COOPVK_THREADS")) old_ = old;
    setenv("COOPVK_THREADS", std::to_string(threads).c_str(), 1);
  }
  ~ScopedThreadsEnv() {
    if (old_) setenv("COOPVK_THREADS", old_->c_str(), 1);
    else unsetenv("COOPVK_THREADS");
  }
  ScopedThreadsEnv(const ScopedThreadsEnv&) = delete;
  ScopedThreadsEnv& operator=(const ScopedThreadsEnv&) = delete;

 private:
  std::optional<std::string> old_;
};

// The pipeline and, per problem, its buffers and a command buffer recorded once and
// submitted every round: fill C with the sentinel, then the dispatch. Everything is the
// rig's own (command pool included), so rigs on different threads share only the device.
struct MatmulRig {
  Device& dev;
  uint32_t queue_index;
  VkCommandPool cmd_pool = VK_NULL_HANDLE;
  StorageLayout storage;  // A, B, C; the dimensions as push constants
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  struct PerProblem {
    Buffer a, b, c;
    VkCommandBuffer cb = VK_NULL_HANDLE;
  };
  std::vector<PerProblem> per;

  explicit MatmulRig(Device& d, uint32_t queue = 0)
      : dev(d), queue_index(queue), storage(d.device, 3, sizeof(Dims)) {
    VkDevice vd = dev.device;
    VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VK_CHECK(vkCreateCommandPool(vd, &cpci, nullptr, &cmd_pool));
    std::vector<uint32_t> words =
        load_spirv_file(std::string(COOPVK_E2E_SHADER_DIR) + "/tiled_matmul.spv");
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

    const auto& ps = problems();
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, uint32_t(3 * ps.size())};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = uint32_t(ps.size());
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &size;
    VK_CHECK(vkCreateDescriptorPool(vd, &dpci, nullptr, &pool));

    for (const Problem& p : ps) {
      PerProblem pp;
      pp.a = dev.create_buffer(p.a.size() * 4);
      pp.b = dev.create_buffer(p.b.size() * 4);
      pp.c = dev.create_buffer(p.ref.size() * 4);
      std::memcpy(pp.a.mapped, p.a.data(), p.a.size() * 4);
      std::memcpy(pp.b.mapped, p.b.data(), p.b.size() * 4);

      VkDescriptorSet set = storage.write_set(pool, {pp.a.buffer, pp.b.buffer, pp.c.buffer});

      VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      cbai.commandPool = cmd_pool;
      cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      cbai.commandBufferCount = 1;
      VK_CHECK(vkAllocateCommandBuffers(vd, &cbai, &pp.cb));
      VkCommandBufferBeginInfo cbbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      VK_CHECK(vkBeginCommandBuffer(pp.cb, &cbbi));
      // The same inputs every round: the fill is what proves each round's dispatch wrote
      // every element of C (a skipped workgroup leaves sentinels, which never match).
      vkCmdFillBuffer(pp.cb, pp.c.buffer, 0, VK_WHOLE_SIZE, kSentinel);
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(pp.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           0, 1, &mb, 0, nullptr, 0, nullptr);
      vkCmdBindPipeline(pp.cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
      vkCmdBindDescriptorSets(pp.cb, VK_PIPELINE_BIND_POINT_COMPUTE, storage.layout, 0, 1, &set, 0,
                              nullptr);
      vkCmdPushConstants(pp.cb, storage.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Dims), &p.d);
      vkCmdDispatch(pp.cb, p.d.N / kTile, p.d.M / kTile, 1);
      VK_CHECK(vkEndCommandBuffer(pp.cb));
      per.push_back(pp);
    }
  }

  ~MatmulRig() {
    for (PerProblem& pp : per) {
      dev.destroy_buffer(pp.a);
      dev.destroy_buffer(pp.b);
      dev.destroy_buffer(pp.c);
    }
    vkDestroyCommandPool(dev.device, cmd_pool, nullptr);  // frees the command buffers
    vkDestroyDescriptorPool(dev.device, pool, nullptr);
    vkDestroyPipeline(dev.device, pipeline, nullptr);
  }
  MatmulRig(const MatmulRig&) = delete;
  MatmulRig& operator=(const MatmulRig&) = delete;

  // One round: every problem's command buffer in one submission (the queue thread runs
  // them back to back), one fence, then every C checked. Returns the mismatches.
  uint32_t round(VkFence fence) {
    std::vector<VkCommandBuffer> cbs;
    for (PerProblem& pp : per) cbs.push_back(pp.cb);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = uint32_t(cbs.size());
    si.pCommandBuffers = cbs.data();
    VK_CHECK(vkQueueSubmit(dev.queues.at(queue_index), 1, &si, fence));
    VK_CHECK(vkWaitForFences(dev.device, 1, &fence, VK_TRUE, UINT64_MAX));
    VK_CHECK(vkResetFences(dev.device, 1, &fence));
    uint32_t bad = 0;
    for (size_t i = 0; i < per.size(); ++i)
      bad += count_mismatches(static_cast<const uint32_t*>(per[i].c.mapped), problems()[i].ref);
    return bad;
  }
};

}  // namespace

TEST_CASE("the CPU reference and the checker of the parallel-workgroup stress test catch a wrong result") {
  // The stress test below can only fail if a wrong C is told apart from the reference.
  const Problem& p = problems()[2];
  std::vector<uint32_t> c = p.ref;
  CHECK(count_mismatches(c.data(), p.ref) == 0);
  c[c.size() / 2] += 1;  // one element of one workgroup's tile off by one
  CHECK(count_mismatches(c.data(), p.ref) == 1);
  std::vector<uint32_t> unwritten(p.ref.size(), kSentinel);
  CHECK(count_mismatches(unwritten.data(), p.ref) == p.ref.size());
  // A spot check of the reference itself: element (1, 2) by the definition.
  uint32_t e = 0;
  for (uint32_t k = 0; k < p.d.K; ++k) e += p.a[1 * p.d.K + k] * p.b[size_t(k) * p.d.N + 2];
  CHECK(p.ref[1 * p.d.N + 2] == e);
}

TEST_CASE("many workgroups with barrier-heavy K loops match the CPU on 2-, 3- and 8-thread pools") {
  constexpr uint32_t kRoundsPerDevice = 25;  // x 4 problems x 3 devices = 300 dispatches
  for (unsigned threads : {2u, 3u, 8u}) {
    ScopedThreadsEnv env(threads);
    Device dev;
    MatmulRig rig(dev);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VK_CHECK(vkCreateFence(dev.device, &fci, nullptr, &fence));
    uint32_t failed_rounds = 0, bad_total = 0;
    for (uint32_t r = 0; r < kRoundsPerDevice; ++r) {
      uint32_t bad = rig.round(fence);
      if (bad) ++failed_rounds;
      bad_total += bad;
    }
    vkDestroyFence(dev.device, fence, nullptr);
    INFO("COOPVK_THREADS=" << threads << ": " << failed_rounds << " of " << kRoundsPerDevice
                           << " rounds wrong, " << bad_total << " elements in all");
    CHECK(failed_rounds == 0);
  }
}

TEST_CASE("three application threads run barrier-heavy dispatches on three queues at once") {
  // One device, one worker pool, three queue threads taking turns on it, while the
  // application threads create their pipelines (the same SPIR-V: the implicit pipeline
  // cache is hit and filled concurrently), buffers and command buffers side by side.
  constexpr uint32_t kQueues = 3, kRounds = 8;  // 3 x 8 x 4 = 96 more dispatches
  ScopedThreadsEnv env(3);
  DeviceOptions opts;
  opts.queue_count = kQueues;
  Device dev(opts);
  std::atomic<uint32_t> failed_rounds{0}, errors{0};
  std::vector<std::thread> threads;
  for (uint32_t q = 0; q < kQueues; ++q) {
    threads.emplace_back([&, q] {
      try {  // no Catch2 assertions off the main thread
        MatmulRig rig(dev, q);
        VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence;
        VK_CHECK(vkCreateFence(dev.device, &fci, nullptr, &fence));
        for (uint32_t r = 0; r < kRounds; ++r)
          if (rig.round(fence)) failed_rounds++;
        vkDestroyFence(dev.device, fence, nullptr);
      } catch (const std::exception&) {
        errors++;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors.load() == 0);
  CHECK(failed_rounds.load() == 0);
}
