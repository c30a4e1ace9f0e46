// Compute dispatches through the real loader: GLSL shaders compiled at build time run on
// the driver and are checked against CPU references. Covers descriptors (plain, dynamic,
// uniform), push constants, many workgroups across the worker pool, workgroup barriers,
// vkCmdDispatchBase, vkCmdDispatchIndirect (counts written by an earlier command),
// modules chained into the stage, pipeline-cache round trips between devices, and
// record-time errors.
#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "compute_job.h"
#include "shader_references.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

std::vector<uint32_t> load_spv(const std::string& name) {
  return load_spirv_file(std::string(COOPVK_E2E_SHADER_DIR) + "/" + name + ".spv");
}

struct PipeOptions {
  VkPipelineCache cache = VK_NULL_HANDLE;
  VkPipelineCreateFlags flags = 0;
  bool chain_module = false;  // VkShaderModuleCreateInfo in the stage's pNext
};

// A compute pipeline over one set of `types` bindings (0..n-1) and `push` bytes of push
// constants.
struct Pipe {
  VkDevice dev = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;

  Pipe(VkDevice d, const std::string& shader, std::vector<VkDescriptorType> types, uint32_t push,
       const PipeOptions& o = {}, VkResult* result = nullptr)
      : dev(d) {
    std::vector<VkDescriptorSetLayoutBinding> b;
    for (uint32_t i = 0; i < types.size(); ++i)
      b.push_back({i, types[i], 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = static_cast<uint32_t>(b.size());
    lci.pBindings = b.data();
    VK_CHECK(vkCreateDescriptorSetLayout(dev, &lci, nullptr, &set_layout));
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push};
    VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pci.setLayoutCount = 1;
    pci.pSetLayouts = &set_layout;
    pci.pushConstantRangeCount = push ? 1 : 0;
    pci.pPushConstantRanges = &range;
    VK_CHECK(vkCreatePipelineLayout(dev, &pci, nullptr, &layout));

    std::vector<uint32_t> words = load_spv(shader);
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * 4;
    smci.pCode = words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cci.flags = o.flags;
    cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cci.stage.pName = "main";
    if (o.chain_module) {
      cci.stage.pNext = &smci;
    } else {
      VK_CHECK(vkCreateShaderModule(dev, &smci, nullptr, &module));
      cci.stage.module = module;
    }
    cci.layout = layout;
    pipeline = reinterpret_cast<VkPipeline>(uintptr_t(0xbad));
    VkResult r = vkCreateComputePipelines(dev, o.cache, 1, &cci, nullptr, &pipeline);
    if (module) vkDestroyShaderModule(dev, module, nullptr);  // the pipeline must not need it
    if (result) *result = r;
    else VK_CHECK(r);

    std::vector<VkDescriptorPoolSize> sizes;
    for (auto t : types) sizes.push_back({t, 16});
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 16;
    dpci.poolSizeCount = static_cast<uint32_t>(sizes.size());
    dpci.pPoolSizes = sizes.data();
    VK_CHECK(vkCreateDescriptorPool(dev, &dpci, nullptr, &pool));
  }
  ~Pipe() {
    vkDestroyDescriptorPool(dev, pool, nullptr);
    if (pipeline) vkDestroyPipeline(dev, pipeline, nullptr);
    vkDestroyPipelineLayout(dev, layout, nullptr);
    vkDestroyDescriptorSetLayout(dev, set_layout, nullptr);
  }

  VkDescriptorSet set(std::vector<VkDescriptorBufferInfo> infos, std::vector<VkDescriptorType> types) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layout;
    VkDescriptorSet s;
    VK_CHECK(vkAllocateDescriptorSets(dev, &ai, &s));
    std::vector<VkWriteDescriptorSet> w(infos.size());
    for (uint32_t i = 0; i < infos.size(); ++i) {
      w[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w[i].dstSet = s;
      w[i].dstBinding = i;
      w[i].descriptorCount = 1;
      w[i].descriptorType = types[i];
      w[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(dev, static_cast<uint32_t>(w.size()), w.data(), 0, nullptr);
    return s;
  }
};

const std::vector<VkDescriptorType> kTwoSsbo = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};

struct SaxpyPush {
  float a;
  uint32_t n;
};

// Runs saxpy over n elements with the given pipeline on `queue` and checks the result.
void run_saxpy(Device& dev, Pipe& p, uint32_t n, float a, uint32_t queue = 0) {
  Buffer x = dev.create_buffer(n * 4), y = dev.create_buffer(n * 4 + 64);
  auto* xf = static_cast<float*>(x.mapped);
  auto* yf = static_cast<float*>(y.mapped);
  for (uint32_t i = 0; i < n; ++i) {
    xf[i] = float(i % 1000) * 0.5f;
    yf[i] = float(i % 7);
  }
  for (uint32_t i = n; i < n + 16; ++i) yf[i] = -1.0f;  // must stay untouched
  VkDescriptorSet s = p.set({{x.buffer, 0, VK_WHOLE_SIZE}, {y.buffer, 0, VK_WHOLE_SIZE}}, kTwoSsbo);
  VkCommandBuffer cb = dev.begin();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, 0, nullptr);
  SaxpyPush pc{a, n};
  vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
  vkCmdDispatch(cb, (n + 63) / 64, 1, 1);
  dev.submit_and_wait(cb, queue);
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (yf[i] != a * (float(i % 1000) * 0.5f) + float(i % 7)) ++bad;
  for (uint32_t i = n; i < n + 16; ++i)
    if (yf[i] != -1.0f) ++bad;
  CHECK(bad == 0);
  dev.destroy_buffer(x);
  dev.destroy_buffer(y);
}

}  // namespace

TEST_CASE("saxpy over many workgroups with push constants matches the CPU") {
  Device dev;
  Pipe p(dev.device, "saxpy", kTwoSsbo, sizeof(SaxpyPush));
  run_saxpy(dev, p, 100003, 2.5f);
  run_saxpy(dev, p, 1, -1.0f);  // one workgroup, mostly inactive lanes
}

TEST_CASE("a module chained into the stage (maintenance5 style) works without a VkShaderModule") {
  Device dev;
  PipeOptions o;
  o.chain_module = true;
  Pipe p(dev.device, "saxpy", kTwoSsbo, sizeof(SaxpyPush), o);
  run_saxpy(dev, p, 5000, 3.0f);
}

TEST_CASE("workgroup barriers: shared-memory reduction across many workgroups") {
  Device dev;
  Pipe p(dev.device, "shared_reduce", kTwoSsbo, 0);
  const uint32_t groups = 300, n = groups * 128;
  Buffer in = dev.create_buffer(n * 4), out = dev.create_buffer(groups * 4);
  auto* v = static_cast<uint32_t*>(in.mapped);
  for (uint32_t i = 0; i < n; ++i) v[i] = (i * 2654435761u) >> 20;
  VkDescriptorSet s = p.set({{in.buffer, 0, VK_WHOLE_SIZE}, {out.buffer, 0, VK_WHOLE_SIZE}}, kTwoSsbo);
  VkCommandBuffer cb = dev.begin();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, 0, nullptr);
  vkCmdDispatch(cb, groups, 1, 1);
  dev.submit_and_wait(cb);
  auto* sums = static_cast<uint32_t*>(out.mapped);
  uint32_t bad = 0;
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t ref = 0;
    for (uint32_t i = 0; i < 128; ++i) ref += v[g * 128 + i];
    if (sums[g] != ref) ++bad;
  }
  CHECK(bad == 0);
  dev.destroy_buffer(in);
  dev.destroy_buffer(out);
}

TEST_CASE("dynamic offsets select the buffer range per bind; later binds do not affect earlier dispatches") {
  Device dev;
  const std::vector<VkDescriptorType> dyn = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC,
                                             VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC};
  Pipe p(dev.device, "saxpy", dyn, sizeof(SaxpyPush));
  const uint32_t n = 256;  // elements per slice; two slices per buffer
  Buffer x = dev.create_buffer(2 * n * 4), y = dev.create_buffer(2 * n * 4);
  auto* xf = static_cast<float*>(x.mapped);
  auto* yf = static_cast<float*>(y.mapped);
  for (uint32_t i = 0; i < 2 * n; ++i) {
    xf[i] = float(i);
    yf[i] = 1.0f;
  }
  VkDescriptorSet s = p.set({{x.buffer, 0, n * 4}, {y.buffer, 0, n * 4}}, dyn);
  VkCommandBuffer cb = dev.begin();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  SaxpyPush pc{2.0f, n};
  vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
  // y[0:n] += 2 * x[n:2n], then y[n:2n] += 3 * x[0:n].
  uint32_t offs1[2] = {n * 4, 0};
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, 2, offs1);
  vkCmdDispatch(cb, n / 64, 1, 1);
  uint32_t offs2[2] = {0, n * 4};
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, 2, offs2);
  pc.a = 3.0f;
  vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
  vkCmdDispatch(cb, n / 64, 1, 1);
  dev.submit_and_wait(cb);
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (yf[i] != 1.0f + 2.0f * float(n + i)) ++bad;
    if (yf[n + i] != 1.0f + 3.0f * float(i)) ++bad;
  }
  CHECK(bad == 0);
  dev.destroy_buffer(x);
  dev.destroy_buffer(y);
}

TEST_CASE("vkCmdDispatchBase and vkCmdDispatchIndirect give the right ids and counts") {
  Device dev;
  const std::vector<VkDescriptorType> types = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                               VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER};
  PipeOptions o;
  o.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;
  Pipe p(dev.device, "dispatch_ids", types, 0, o);
  const uint32_t slots = 8 * 8 * 8;
  Buffer out = dev.create_buffer(slots * 8), ubo = dev.create_buffer(256, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT),
         ind = dev.create_buffer(64, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  const uint32_t tag = 7000000;
  std::memcpy(static_cast<uint8_t*>(ubo.mapped) + 64, &tag, 4);  // descriptor offset 64
  VkDescriptorSet s = p.set({{out.buffer, 0, VK_WHOLE_SIZE}, {ubo.buffer, 64, 16}}, types);
  auto* ids = static_cast<uint32_t*>(out.mapped);
  auto slot = [](uint32_t x, uint32_t y, uint32_t z) { return (z * 8 + y) * 8 + x; };

  SECTION("base") {
    std::memset(ids, 0, slots * 8);
    VkCommandBuffer cb = dev.begin();
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, 0, nullptr);
    vkCmdDispatchBase(cb, 1, 2, 3, 3, 2, 1);
    dev.submit_and_wait(cb);
    uint32_t hit = 0, bad = 0;
    for (uint32_t z = 0; z < 8; ++z)
      for (uint32_t y = 0; y < 8; ++y)
        for (uint32_t x = 0; x < 8; ++x) {
          bool in = x >= 1 && x < 4 && y >= 2 && y < 4 && z == 3;
          uint32_t want_id = in ? tag + x + 100 * y + 10000 * z : 0;
          uint32_t want_n = in ? 3 + 100 * 2 + 10000 * 1 : 0;
          if (ids[slot(x, y, z) * 2] != want_id || ids[slot(x, y, z) * 2 + 1] != want_n) ++bad;
          hit += in;
        }
    CHECK(hit == 6);
    CHECK(bad == 0);
  }
  SECTION("indirect, with the counts written by an earlier command of the same buffer") {
    std::memset(ids, 0, slots * 8);
    std::memset(ind.mapped, 0xFF, 64);  // what a record-time read would see
    VkCommandBuffer cb = dev.begin();
    uint32_t counts[3] = {2, 3, 4};
    vkCmdUpdateBuffer(cb, ind.buffer, 16, sizeof(counts), counts);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_ACCESS_INDIRECT_COMMAND_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, 0,
                         1, &mb, 0, nullptr, 0, nullptr);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, 0, nullptr);
    vkCmdDispatchIndirect(cb, ind.buffer, 16);
    dev.submit_and_wait(cb);
    uint32_t bad = 0;
    for (uint32_t z = 0; z < 8; ++z)
      for (uint32_t y = 0; y < 8; ++y)
        for (uint32_t x = 0; x < 8; ++x) {
          bool in = x < 2 && y < 3 && z < 4;
          uint32_t want_id = in ? tag + x + 100 * y + 10000 * z : 0;
          uint32_t want_n = in ? 2 + 100 * 3 + 10000 * 4 : 0;
          if (ids[slot(x, y, z) * 2] != want_id || ids[slot(x, y, z) * 2 + 1] != want_n) ++bad;
        }
    CHECK(bad == 0);
  }
  dev.destroy_buffer(out);
  dev.destroy_buffer(ubo);
  dev.destroy_buffer(ind);
}

TEST_CASE("pipeline cache data carries compiled pipelines to another device") {
  // Without the disk cache, which would hand the second device the pipeline too (devices
  // read COOPVK_CACHE when they are created).
  ::setenv("COOPVK_CACHE", "0", 1);
  std::vector<uint8_t> data;
  size_t empty_size = 0;
  {
    Device dev;
    VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    VkPipelineCache cache;
    VK_CHECK(vkCreatePipelineCache(dev.device, &ci, nullptr, &cache));
    VK_CHECK(vkGetPipelineCacheData(dev.device, cache, &empty_size, nullptr));
    PipeOptions o;
    o.cache = cache;
    { Pipe p(dev.device, "saxpy", kTwoSsbo, sizeof(SaxpyPush), o); }
    size_t size = 0;
    VK_CHECK(vkGetPipelineCacheData(dev.device, cache, &size, nullptr));
    CHECK(size > empty_size);
    data.resize(size);
    VK_CHECK(vkGetPipelineCacheData(dev.device, cache, &size, data.data()));
    // A buffer one byte short gets the header and no entry, and says so.
    std::vector<uint8_t> short_buf(data.size() - 1);
    size_t short_size = short_buf.size();
    CHECK(vkGetPipelineCacheData(dev.device, cache, &short_size, short_buf.data()) == VK_INCOMPLETE);
    CHECK(short_size == empty_size);
    vkDestroyPipelineCache(dev.device, cache, nullptr);
  }
  // A fresh device has nothing compiled: with FAIL_ON_PIPELINE_COMPILE_REQUIRED the
  // pipeline can only come from the cache data.
  VkPhysicalDevicePipelineCreationCacheControlFeatures cc{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES};
  cc.pipelineCreationCacheControl = VK_TRUE;
  DeviceOptions opts;
  opts.features_chain = &cc;
  Device dev(opts);
  PipeOptions o;
  o.flags = VK_PIPELINE_CREATE_FAIL_ON_PIPELINE_COMPILE_REQUIRED_BIT;
  {
    VkResult r;
    Pipe miss(dev.device, "saxpy", kTwoSsbo, sizeof(SaxpyPush), o, &r);
    CHECK(r == VK_PIPELINE_COMPILE_REQUIRED);
    CHECK(miss.pipeline == VK_NULL_HANDLE);
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.data();
  VkPipelineCache cache;
  VK_CHECK(vkCreatePipelineCache(dev.device, &ci, nullptr, &cache));
  o.cache = cache;
  {
    Pipe hit(dev.device, "saxpy", kTwoSsbo, sizeof(SaxpyPush), o);
    run_saxpy(dev, hit, 777, 0.25f);
  }
  vkDestroyPipelineCache(dev.device, cache, nullptr);
}

TEST_CASE("dispatches from two queues at once both complete correctly") {
  DeviceOptions opts;
  opts.queue_count = 2;
  Device dev(opts);
  Pipe p(dev.device, "saxpy", kTwoSsbo, sizeof(SaxpyPush));
  const uint32_t n = 50000;
  struct Job {
    Buffer x, y;
    VkDescriptorSet set;
    VkCommandPool pool;
    uint32_t bad = 0;
  } jobs[2];
  for (uint32_t q = 0; q < 2; ++q) {
    Job& j = jobs[q];
    j.x = dev.create_buffer(n * 4);
    j.y = dev.create_buffer(n * 4);
    for (uint32_t i = 0; i < n; ++i) {
      static_cast<float*>(j.x.mapped)[i] = float(i % 100);
      static_cast<float*>(j.y.mapped)[i] = 0.0f;
    }
    j.set = p.set({{j.x.buffer, 0, VK_WHOLE_SIZE}, {j.y.buffer, 0, VK_WHOLE_SIZE}}, kTwoSsbo);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VK_CHECK(vkCreateCommandPool(dev.device, &pci, nullptr, &j.pool));
  }
  // Each thread records into its own pool and submits to its own queue 20 times (the
  // buffer accumulates); no Catch2 assertions inside the threads.
  constexpr int kReps = 20;
  auto worker = [&](uint32_t q) {
    Job& j = jobs[q];
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = j.pool;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    if (vkAllocateCommandBuffers(dev.device, &ai, &cb) != VK_SUCCESS) return void(j.bad = ~0u);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cb, &bi);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &j.set, 0, nullptr);
    SaxpyPush pc{float(q + 1), n};
    vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
    vkCmdDispatch(cb, (n + 63) / 64, 1, 1);
    if (vkEndCommandBuffer(cb) != VK_SUCCESS) return void(j.bad = ~0u);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    vkCreateFence(dev.device, &fci, nullptr, &fence);
    for (int rep = 0; rep < kReps; ++rep) {
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cb;
      vkQueueSubmit(dev.queues[q], 1, &si, fence);
      vkWaitForFences(dev.device, 1, &fence, VK_TRUE, UINT64_MAX);
      vkResetFences(dev.device, 1, &fence);
    }
    vkDestroyFence(dev.device, fence, nullptr);
    for (uint32_t i = 0; i < n; ++i)
      if (static_cast<float*>(j.y.mapped)[i] != float(kReps) * float(q + 1) * float(i % 100)) ++j.bad;
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  for (auto& j : jobs) {
    CHECK(j.bad == 0);
    vkDestroyCommandPool(dev.device, j.pool, nullptr);
    dev.destroy_buffer(j.x);
    dev.destroy_buffer(j.y);
  }
}

TEST_CASE("record-time errors: dispatch without pipeline or with an unbound set fails vkEndCommandBuffer") {
  Device dev;
  Pipe p(dev.device, "saxpy", kTwoSsbo, sizeof(SaxpyPush));
  VkCommandBuffer cb = dev.begin();
  vkCmdDispatch(cb, 1, 1, 1);
  CHECK(vkEndCommandBuffer(cb) != VK_SUCCESS);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &cb);
  cb = dev.begin();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdDispatch(cb, 1, 1, 1);
  CHECK(vkEndCommandBuffer(cb) != VK_SUCCESS);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &cb);
}

TEST_CASE("uniform and divergent control flow nested in each other, through the loader") {
  Device dev;
  for (uint32_t sg : {0u, 4u, 32u}) {
    for (int32_t flag : {0, 1}) {
      const uint32_t groups = 5;
      const int32_t n = 11;
      std::vector<uint8_t> out(groups * 64 * 5 * 4, 0xEE);
      ComputeJob job;
      job.spirv = load_spv("mixed_control_flow");
      job.buffers = {&out};
      int32_t push[2] = {n, flag};
      job.push.assign(reinterpret_cast<uint8_t*>(push), reinterpret_cast<uint8_t*>(push) + sizeof(push));
      job.required_subgroup_size = sg;
      job.groups[0] = groups;
      REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
      uint32_t bad = 0;
      for (uint32_t g = 0; g < groups; ++g)
        for (int32_t l = 0; l < 64; ++l) {
          MixedControlFlowExpected e = mixed_control_flow_expected(l, n, flag);
          for (int k = 0; k < 5; ++k) {
            int32_t got;
            std::memcpy(&got, out.data() + 4 * (g * 320 + 64 * k + l), 4);
            bad += got != e.out[k];
          }
        }
      INFO("subgroup size " << sg << ", flag " << flag);
      CHECK(bad == 0);
    }
  }
}

// Vulkan 1.3 requires uniformBufferStandardLayout (dEQP-VK.info.device_mandatory_features): uniform
// blocks may use std430 offsets and strides. The JIT reads every offset and stride from the
// module's decorations, so the std430 block reads back what the host wrote where std430 puts it.
TEST_CASE("uniformBufferStandardLayout: a std430 uniform block reads at its std430 offsets") {
  VkPhysicalDeviceVulkan12Features q12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 q2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &q12};
  {
    Instance inst;
    vkGetPhysicalDeviceFeatures2(inst.physical, &q2);
  }
  CHECK(q12.uniformBufferStandardLayout == VK_TRUE);
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  v12.uniformBufferStandardLayout = VK_TRUE;
  DeviceOptions opts;
  opts.features_chain = &v12;
  Device dev(opts);
  const std::vector<VkDescriptorType> types = {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                                               VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
  Pipe p(dev.device, "ubo_std430", types, 0);
  Buffer ubo = dev.create_buffer(256, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT), out = dev.create_buffer(16 * 16);
  auto* u = static_cast<uint8_t*>(ubo.mapped);
  std::memset(u, 0xFF, 256);  // anything read from a wrong offset is a NaN or huge
  auto put_f = [&](size_t off, float v) { std::memcpy(u + off, &v, 4); };
  auto put_u = [&](size_t off, uint32_t v) { std::memcpy(u + off, &v, 4); };
  for (uint32_t i = 0; i < 16; ++i) put_f(4 * i, float(i) + 0.5f);  // f[i]: stride 4
  for (uint32_t i = 0; i < 4; ++i) {
    put_f(64 + 8 * i, -1.0f);           // v[i].x: stride 8
    put_f(64 + 8 * i + 4, 10.0f * i);   // v[i].y
    put_f(96 + 8 * i, 100.0f * i);      // p[i].x: struct stride 8
    put_u(96 + 8 * i + 4, 7 + i);       // p[i].y
  }
  put_u(128, 4242);  // tail
  VkDescriptorSet s = p.set({{ubo.buffer, 0, VK_WHOLE_SIZE}, {out.buffer, 0, VK_WHOLE_SIZE}}, types);
  VkCommandBuffer cb = dev.begin();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, 0, nullptr);
  vkCmdDispatch(cb, 1, 1, 1);
  dev.submit_and_wait(cb);
  const auto* o = static_cast<const float*>(out.mapped);
  for (uint32_t i = 0; i < 16; ++i) {
    INFO("invocation " << i);
    CHECK(o[4 * i + 0] == float(i) + 0.5f);
    CHECK(o[4 * i + 1] == 10.0f * (i % 4));
    CHECK(o[4 * i + 2] == 100.0f * (i % 4) + float(7 + i % 4));
    CHECK(o[4 * i + 3] == 4242.0f);
  }
  dev.destroy_buffer(ubo);
  dev.destroy_buffer(out);
}
