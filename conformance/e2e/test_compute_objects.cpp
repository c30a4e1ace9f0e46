// Compute objects through the real loader, without running shaders: descriptor set
// layouts, pools and sets (exhaustion, free, reset, updates), pipeline layouts, pipeline
// caches (header, UUID, foreign data), and shader modules rejecting malformed SPIR-V.
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <vector>

#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

VkDescriptorSetLayout make_layout(VkDevice dev, std::vector<VkDescriptorSetLayoutBinding> b,
                                  VkResult* result = nullptr) {
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.bindingCount = static_cast<uint32_t>(b.size());
  ci.pBindings = b.data();
  VkDescriptorSetLayout l = VK_NULL_HANDLE;
  VkResult r = vkCreateDescriptorSetLayout(dev, &ci, nullptr, &l);
  if (result) *result = r;
  else VK_CHECK(r);
  return l;
}

VkDescriptorSetLayoutBinding binding(uint32_t b, VkDescriptorType t, uint32_t count = 1) {
  return {b, t, count, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
}

VkDescriptorPool make_pool(VkDevice dev, uint32_t max_sets, std::vector<VkDescriptorPoolSize> sizes,
                           VkDescriptorPoolCreateFlags flags = 0) {
  VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  ci.flags = flags;
  ci.maxSets = max_sets;
  ci.poolSizeCount = static_cast<uint32_t>(sizes.size());
  ci.pPoolSizes = sizes.data();
  VkDescriptorPool p;
  VK_CHECK(vkCreateDescriptorPool(dev, &ci, nullptr, &p));
  return p;
}

VkResult allocate(VkDevice dev, VkDescriptorPool pool, std::vector<VkDescriptorSetLayout> layouts,
                  std::vector<VkDescriptorSet>* out) {
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool;
  ai.descriptorSetCount = static_cast<uint32_t>(layouts.size());
  ai.pSetLayouts = layouts.data();
  out->assign(layouts.size(), reinterpret_cast<VkDescriptorSet>(uintptr_t(0xdead)));
  return vkAllocateDescriptorSets(dev, &ai, out->data());
}

}  // namespace

TEST_CASE("descriptor set layouts take buffer descriptors and refuse the rest") {
  Device dev;
  VkDescriptorSetLayout l = make_layout(
      dev.device, {binding(0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3),
                   binding(5, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER),
                   binding(2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, 2),
                   binding(3, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC),
                   binding(4, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 0)});  // reserved, empty
  CHECK(l != VK_NULL_HANDLE);
  vkDestroyDescriptorSetLayout(dev.device, l, nullptr);

  VkResult r;
  VkDescriptorSetLayout bad =
      make_layout(dev.device, {binding(0, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE)}, &r);
  CHECK(r != VK_SUCCESS);
  CHECK(r != VK_ERROR_OUT_OF_HOST_MEMORY);  // the failure is not disguised as memory
  if (r == VK_SUCCESS) vkDestroyDescriptorSetLayout(dev.device, bad, nullptr);

  VkDescriptorSetLayoutBinding sampler = binding(0, VK_DESCRIPTOR_TYPE_SAMPLER);
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.bindingCount = 1;
  ci.pBindings = &sampler;
  VkDescriptorSetLayoutSupport support{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_SUPPORT};
  vkGetDescriptorSetLayoutSupport(dev.device, &ci, &support);
  CHECK(support.supported == VK_FALSE);
  VkDescriptorSetLayoutBinding ssbo = binding(0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4);
  ci.pBindings = &ssbo;
  vkGetDescriptorSetLayoutSupport(dev.device, &ci, &support);
  CHECK(support.supported == VK_TRUE);
}

TEST_CASE("descriptor pools run out of sets and of descriptors, and free/reset give them back") {
  Device dev;
  VkDescriptorSetLayout two = make_layout(dev.device, {binding(0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2)});
  VkDescriptorSetLayout ubo = make_layout(dev.device, {binding(0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)});
  std::vector<VkDescriptorSet> sets;

  SECTION("maxSets") {
    VkDescriptorPool pool = make_pool(dev.device, 2, {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 100}},
                                      VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT);
    REQUIRE(allocate(dev.device, pool, {two, two}, &sets) == VK_SUCCESS);
    CHECK(sets[0] != VK_NULL_HANDLE);
    CHECK(sets[1] != VK_NULL_HANDLE);
    std::vector<VkDescriptorSet> more;
    CHECK(allocate(dev.device, pool, {two}, &more) == VK_ERROR_OUT_OF_POOL_MEMORY);
    CHECK(more[0] == VK_NULL_HANDLE);  // failed allocations leave null handles
    VK_CHECK(vkFreeDescriptorSets(dev.device, pool, 1, &sets[0]));
    CHECK(allocate(dev.device, pool, {two}, &more) == VK_SUCCESS);
    vkDestroyDescriptorPool(dev.device, pool, nullptr);  // frees the sets still in it
  }
  SECTION("descriptors of one type") {
    VkDescriptorPool pool = make_pool(dev.device, 10,
                                      {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3},
                                       {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 8}});  // ignored type
    REQUIRE(allocate(dev.device, pool, {two}, &sets) == VK_SUCCESS);
    std::vector<VkDescriptorSet> more;
    CHECK(allocate(dev.device, pool, {two}, &more) == VK_ERROR_OUT_OF_POOL_MEMORY);
    // No uniform buffers were asked for in the pool at all.
    CHECK(allocate(dev.device, pool, {ubo}, &more) == VK_ERROR_OUT_OF_POOL_MEMORY);
    // A request that fails as a whole allocates nothing, even the part that would fit.
    VkDescriptorSetLayout one = make_layout(dev.device, {binding(0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)});
    CHECK(allocate(dev.device, pool, {one, two}, &more) == VK_ERROR_OUT_OF_POOL_MEMORY);
    CHECK(allocate(dev.device, pool, {one}, &more) == VK_SUCCESS);
    VK_CHECK(vkResetDescriptorPool(dev.device, pool, 0));
    CHECK(allocate(dev.device, pool, {one, two}, &more) == VK_SUCCESS);
    vkDestroyDescriptorSetLayout(dev.device, one, nullptr);
    vkDestroyDescriptorPool(dev.device, pool, nullptr);
  }
  vkDestroyDescriptorSetLayout(dev.device, two, nullptr);
  vkDestroyDescriptorSetLayout(dev.device, ubo, nullptr);
}

TEST_CASE("descriptor writes, copies and templates are accepted; sets outlive their layout") {
  Device dev;
  Buffer buf = dev.create_buffer(4096);
  VkDescriptorSetLayout l = make_layout(
      dev.device, {binding(0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2),
                   binding(1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1),
                   binding(2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, 1)});
  VkDescriptorPool pool = make_pool(dev.device, 4,
                                    {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 8},
                                     {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, 4}});
  std::vector<VkDescriptorSet> sets;
  REQUIRE(allocate(dev.device, pool, {l, l}, &sets) == VK_SUCCESS);
  vkDestroyDescriptorSetLayout(dev.device, l, nullptr);  // sets must not depend on it

  // Three descriptors from binding 0 element 0 roll over into binding 1 (consecutive
  // binding updates).
  VkDescriptorBufferInfo infos[3] = {{buf.buffer, 0, 256}, {buf.buffer, 256, 256},
                                     {buf.buffer, 512, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
  w.dstSet = sets[0];
  w.dstBinding = 0;
  w.descriptorCount = 3;
  w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  w.pBufferInfo = infos;
  VkCopyDescriptorSet c{VK_STRUCTURE_TYPE_COPY_DESCRIPTOR_SET};
  c.srcSet = sets[0];
  c.srcBinding = 0;
  c.dstSet = sets[1];
  c.dstBinding = 0;
  c.descriptorCount = 3;
  vkUpdateDescriptorSets(dev.device, 1, &w, 1, &c);

  VkDescriptorUpdateTemplateEntry e{2, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, 0,
                                    sizeof(VkDescriptorBufferInfo)};
  VkDescriptorUpdateTemplateCreateInfo tci{VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO};
  tci.descriptorUpdateEntryCount = 1;
  tci.pDescriptorUpdateEntries = &e;
  tci.templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET;
  VkDescriptorUpdateTemplate t;
  VK_CHECK(vkCreateDescriptorUpdateTemplate(dev.device, &tci, nullptr, &t));
  vkUpdateDescriptorSetWithTemplate(dev.device, sets[1], t, &infos[0]);
  vkDestroyDescriptorUpdateTemplate(dev.device, t, nullptr);

  vkDestroyDescriptorPool(dev.device, pool, nullptr);
  dev.destroy_buffer(buf);
}

TEST_CASE("pipeline layouts with sets and push constants") {
  Device dev;
  VkDescriptorSetLayout a = make_layout(dev.device, {binding(0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)});
  VkDescriptorSetLayout b = make_layout(dev.device, {binding(1, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC)});
  VkDescriptorSetLayout sl[3] = {a, b, a};
  VkPushConstantRange ranges[2] = {{VK_SHADER_STAGE_COMPUTE_BIT, 0, 16},
                                   {VK_SHADER_STAGE_COMPUTE_BIT, 64, 192}};
  VkPipelineLayoutCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  ci.setLayoutCount = 3;
  ci.pSetLayouts = sl;
  ci.pushConstantRangeCount = 2;
  ci.pPushConstantRanges = ranges;
  VkPipelineLayout pl;
  VK_CHECK(vkCreatePipelineLayout(dev.device, &ci, nullptr, &pl));
  vkDestroyDescriptorSetLayout(dev.device, a, nullptr);
  vkDestroyDescriptorSetLayout(dev.device, b, nullptr);
  vkDestroyPipelineLayout(dev.device, pl, nullptr);

  VkPipelineLayoutCreateInfo empty{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  VK_CHECK(vkCreatePipelineLayout(dev.device, &empty, nullptr, &pl));
  vkDestroyPipelineLayout(dev.device, pl, nullptr);
}

namespace {

std::vector<uint8_t> cache_data(VkDevice dev, VkPipelineCache cache) {
  size_t size = 0;
  VK_CHECK(vkGetPipelineCacheData(dev, cache, &size, nullptr));
  std::vector<uint8_t> data(size);
  VK_CHECK(vkGetPipelineCacheData(dev, cache, &size, data.data()));
  data.resize(size);
  return data;
}

VkPipelineCache make_cache(VkDevice dev, const void* data, size_t size) {
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = size;
  ci.pInitialData = data;
  VkPipelineCache c;
  VK_CHECK(vkCreatePipelineCache(dev, &ci, nullptr, &c));
  return c;
}

}  // namespace

TEST_CASE("pipeline cache data starts with the standard header and the device's UUID") {
  Device dev;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(dev.inst.physical, &props);
  VkPipelineCache cache = make_cache(dev.device, nullptr, 0);
  std::vector<uint8_t> data = cache_data(dev.device, cache);
  REQUIRE(data.size() >= sizeof(VkPipelineCacheHeaderVersionOne));
  VkPipelineCacheHeaderVersionOne h;
  std::memcpy(&h, data.data(), sizeof(h));
  CHECK(h.headerSize == 32);
  CHECK(h.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
  CHECK(h.vendorID == props.vendorID);
  CHECK(h.deviceID == props.deviceID);
  CHECK(std::memcmp(h.pipelineCacheUUID, props.pipelineCacheUUID, VK_UUID_SIZE) == 0);

  // Too small for the header: nothing written, size 0, VK_INCOMPLETE.
  std::vector<uint8_t> small(16, 0xAB);
  size_t size = small.size();
  CHECK(vkGetPipelineCacheData(dev.device, cache, &size, small.data()) == VK_INCOMPLETE);
  CHECK(size == 0);
  CHECK(small == std::vector<uint8_t>(16, 0xAB));

  // Its own data is accepted back; merging an empty cache changes nothing.
  VkPipelineCache again = make_cache(dev.device, data.data(), data.size());
  CHECK(cache_data(dev.device, again) == data);
  VK_CHECK(vkMergePipelineCaches(dev.device, again, 1, &cache));
  CHECK(cache_data(dev.device, again) == data);
  vkDestroyPipelineCache(dev.device, again, nullptr);
  vkDestroyPipelineCache(dev.device, cache, nullptr);
}

TEST_CASE("pipeline caches from foreign or garbage data are created empty") {
  Device dev;
  VkPipelineCache empty = make_cache(dev.device, nullptr, 0);
  const std::vector<uint8_t> empty_data = cache_data(dev.device, empty);

  std::vector<uint8_t> garbage(1000);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 37 + 11);
  VkPipelineCache g = make_cache(dev.device, garbage.data(), garbage.size());
  CHECK(cache_data(dev.device, g) == empty_data);

  // A well-formed header from "another device" (different UUID), with bogus entries.
  std::vector<uint8_t> foreign = empty_data;
  foreign[16] ^= 0xFF;
  foreign.insert(foreign.end(), garbage.begin(), garbage.end());
  VkPipelineCache f = make_cache(dev.device, foreign.data(), foreign.size());
  CHECK(cache_data(dev.device, f) == empty_data);

  // Our header, then an entry whose length runs past the end: ignored, no crash.
  std::vector<uint8_t> truncated = empty_data;
  uint32_t count = 1;
  std::memcpy(truncated.data() + 36, &count, 4);
  truncated.insert(truncated.end(), 32, 0x5A);  // key
  uint64_t len = 1u << 30;
  truncated.insert(truncated.end(), reinterpret_cast<uint8_t*>(&len), reinterpret_cast<uint8_t*>(&len) + 8);
  VkPipelineCache t = make_cache(dev.device, truncated.data(), truncated.size());
  CHECK(cache_data(dev.device, t) == empty_data);

  vkDestroyPipelineCache(dev.device, t, nullptr);
  vkDestroyPipelineCache(dev.device, f, nullptr);
  vkDestroyPipelineCache(dev.device, g, nullptr);
  vkDestroyPipelineCache(dev.device, empty, nullptr);
}

TEST_CASE("malformed SPIR-V fails vkCreateShaderModule with an error, not a crash") {
  Device dev;
  auto try_create = [&](std::vector<uint32_t> words, size_t bytes) {
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = bytes;
    ci.pCode = words.data();
    VkShaderModule m = VK_NULL_HANDLE;
    VkResult r = vkCreateShaderModule(dev.device, &ci, nullptr, &m);
    if (r == VK_SUCCESS) vkDestroyShaderModule(dev.device, m, nullptr);
    return r;
  };
  // Bad magic.
  CHECK(try_create({0x12345678, 0x00010600, 0, 8, 0}, 20) == VK_ERROR_UNKNOWN);
  // Truncated header.
  CHECK(try_create({0x07230203, 0x00010600}, 8) == VK_ERROR_UNKNOWN);
  // An instruction whose word count runs past the end (OpCapability claiming 10 words).
  CHECK(try_create({0x07230203, 0x00010600, 0, 8, 0, (10u << 16) | 17u, 1}, 28) == VK_ERROR_UNKNOWN);
  // An instruction with word count 0 (would loop forever if trusted).
  CHECK(try_create({0x07230203, 0x00010600, 0, 8, 0, 0u, 1}, 28) == VK_ERROR_UNKNOWN);
}
