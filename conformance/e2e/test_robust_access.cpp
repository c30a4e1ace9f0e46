// robustBufferAccess (Vulkan spec, "Robust Buffer Access"): with the feature enabled, a
// load outside the bound range of a storage or uniform buffer returns zero or a value
// from inside that range, never memory outside it, and a store outside is discarded.
// The bound ranges sit in the middle of larger buffers full of canaries, so a load that
// reads outside shows a canary and a store that lands outside changes one.
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "compute_job.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

constexpr uint32_t kCanary = 0xDEADBEEFu;

struct Binding {
  VkDescriptorType type;
  Buffer buf;
  VkDeviceSize offset, range;
};

}  // namespace

TEST_CASE("robustBufferAccess: out-of-bounds loads give zero or in-range data, stores are dropped") {
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.features.robustBufferAccess = VK_TRUE;
  DeviceOptions opts;
  opts.features_chain = &f2;
  Device dev(opts);
  VkDevice d = dev.device;

  // src: 1024 uints of canaries; bound: uints [64, 64 + 256) holding 1000 + index.
  // dst: 1024 uints of canaries; bound: uints [128, 128 + 200).
  // ubo: 64 uvec4 of canaries; bound: 4 uvec4 (64 bytes) at byte 256 holding 7 * index.
  std::vector<Binding> b(3);
  b[0] = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, dev.create_buffer(4096), 256, 1024};
  b[1] = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, dev.create_buffer(4096), 512, 800};
  b[2] = {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, dev.create_buffer(1024, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT), 256, 64};
  auto* src = static_cast<uint32_t*>(b[0].buf.mapped);
  auto* dst = static_cast<uint32_t*>(b[1].buf.mapped);
  auto* ubo = static_cast<uint32_t*>(b[2].buf.mapped);
  for (uint32_t i = 0; i < 1024; ++i) src[i] = dst[i] = kCanary;
  for (uint32_t i = 0; i < 256; ++i) ubo[i] = kCanary;
  std::set<uint32_t> src_range, ubo_range;
  for (uint32_t i = 0; i < 256; ++i) src_range.insert(src[64 + i] = 1000 + i);
  for (uint32_t i = 0; i < 16; ++i) ubo_range.insert(ubo[64 + i] = 7 * i);

  std::vector<VkDescriptorSetLayoutBinding> lb;
  for (uint32_t i = 0; i < 3; ++i) lb.push_back({i, b[i].type, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  lci.bindingCount = 3;
  lci.pBindings = lb.data();
  VkDescriptorSetLayout sl;
  VK_CHECK(vkCreateDescriptorSetLayout(d, &lci, nullptr, &sl));
  VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &sl;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &pr;
  VkPipelineLayout pl;
  VK_CHECK(vkCreatePipelineLayout(d, &plci, nullptr, &pl));
  std::vector<uint32_t> words = load_spirv_file(std::string(COOPVK_E2E_SHADER_DIR) + "/robust_access.spv");
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = words.size() * 4;
  smci.pCode = words.data();
  VkShaderModule sm;
  VK_CHECK(vkCreateShaderModule(d, &smci, nullptr, &sm));
  VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = sm;
  cci.stage.pName = "main";
  cci.layout = pl;
  VkPipeline pipe;
  VK_CHECK(vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &cci, nullptr, &pipe));
  VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2}, {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1}};
  VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpci.maxSets = 1;
  dpci.poolSizeCount = 2;
  dpci.pPoolSizes = sizes;
  VkDescriptorPool pool;
  VK_CHECK(vkCreateDescriptorPool(d, &dpci, nullptr, &pool));
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &sl;
  VkDescriptorSet set;
  VK_CHECK(vkAllocateDescriptorSets(d, &ai, &set));
  for (uint32_t i = 0; i < 3; ++i) {
    VkDescriptorBufferInfo bi{b[i].buf.buffer, b[i].offset, b[i].range};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = i;
    w.descriptorCount = 1;
    w.descriptorType = b[i].type;
    w.pBufferInfo = &bi;
    vkUpdateDescriptorSets(d, 1, &w, 0, nullptr);
  }
  VkCommandBuffer cb = dev.begin();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &set, 0, nullptr);
  const uint32_t far = 1u << 20;
  vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &far);
  vkCmdDispatch(cb, 1, 1, 1);
  dev.submit_and_wait(cb);

  const uint32_t* out = dst + 128;  // the bound range of dst
  auto allowed = [&](uint32_t v, const std::set<uint32_t>& range) { return v == 0 || range.count(v); };
  uint32_t bad = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    if (i * 8 < 256 ? out[i] != 1000 + i * 8 : !allowed(out[i], src_range)) ++bad;
    if (!allowed(out[64 + i], src_range)) ++bad;
    uint32_t k = i % 8;
    // In range: the sum of row k. Out of range every component is zero or an in-range
    // value (at most 7 * 15 each), so a sum above 4 * 105 means a canary was read.
    if (k < 4 ? out[128 + i] != 28 * k * 4 + 42 : out[128 + i] > 4 * 105) ++bad;
  }
  CHECK(bad == 0);
  // Stores: lanes 0 and 1 land inside (uints 192 and 196 of the range), the rest nowhere.
  uint32_t outside = 0;
  for (uint32_t i = 0; i < 1024; ++i) {
    bool in_range = i >= 128 && i < 328;
    if (!in_range && dst[i] != kCanary) ++outside;
  }
  CHECK(outside == 0);
  CHECK(out[192] == 0xC0DE0000u);
  CHECK(out[196] == 0xC0DE0001u);
  for (uint32_t i = 0; i < 1024; ++i)
    if (src[i] == kCanary) CHECK(!(i >= 64 && i < 320));  // the shader never writes src

  vkDestroyDescriptorPool(d, pool, nullptr);
  vkDestroyPipeline(d, pipe, nullptr);
  vkDestroyShaderModule(d, sm, nullptr);
  vkDestroyPipelineLayout(d, pl, nullptr);
  vkDestroyDescriptorSetLayout(d, sl, nullptr);
  for (auto& x : b) dev.destroy_buffer(x.buf);
}
