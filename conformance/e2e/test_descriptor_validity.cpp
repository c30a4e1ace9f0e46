// Descriptor validity (Vulkan spec, "Descriptor Validity" and vkCmdBindDescriptorSets):
// a descriptor the bound pipeline does not statically use may refer to a buffer that
// has been destroyed, or never have been written. llama.cpp's Vulkan backend relies on
// this: it reuses one 12-binding set layout for every pipeline and updates only the
// bindings a pipeline uses. Binding such a set and dispatching must work, through
// vkUpdateDescriptorSets, update templates and dynamic offsets alike. The ASan build
// of this test catches any read of a destroyed Buffer object.
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "compute_job.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

constexpr uint32_t kBindings = 6;  // saxpy uses bindings 0 and 1 only

struct SaxpyPush {
  float a;
  uint32_t n;
};

// A pipeline over kBindings bindings of `type`, running saxpy.comp (x: 0, y: 1).
struct WideSaxpy {
  VkDevice dev;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;

  WideSaxpy(VkDevice d, VkDescriptorType type) : dev(d) {
    std::vector<VkDescriptorSetLayoutBinding> b;
    for (uint32_t i = 0; i < kBindings; ++i) b.push_back({i, type, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = kBindings;
    lci.pBindings = b.data();
    VK_CHECK(vkCreateDescriptorSetLayout(dev, &lci, nullptr, &set_layout));
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(SaxpyPush)};
    VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pci.setLayoutCount = 1;
    pci.pSetLayouts = &set_layout;
    pci.pushConstantRangeCount = 1;
    pci.pPushConstantRanges = &range;
    VK_CHECK(vkCreatePipelineLayout(dev, &pci, nullptr, &layout));
    std::vector<uint32_t> words = load_spirv_file(std::string(COOPVK_E2E_SHADER_DIR) + "/saxpy.spv");
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * 4;
    smci.pCode = words.data();
    VkShaderModule module;
    VK_CHECK(vkCreateShaderModule(dev, &smci, nullptr, &module));
    VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cci.stage.module = module;
    cci.stage.pName = "main";
    cci.layout = layout;
    VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cci, nullptr, &pipeline));
    vkDestroyShaderModule(dev, module, nullptr);
    VkDescriptorPoolSize size{type, 8 * kBindings};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    dpci.maxSets = 8;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &size;
    VK_CHECK(vkCreateDescriptorPool(dev, &dpci, nullptr, &pool));
  }
  ~WideSaxpy() {
    vkDestroyDescriptorPool(dev, pool, nullptr);
    vkDestroyPipeline(dev, pipeline, nullptr);
    vkDestroyPipelineLayout(dev, layout, nullptr);
    vkDestroyDescriptorSetLayout(dev, set_layout, nullptr);
  }
  VkDescriptorSet allocate() {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layout;
    VkDescriptorSet s;
    VK_CHECK(vkAllocateDescriptorSets(dev, &ai, &s));
    return s;
  }
};

void write(VkDevice dev, VkDescriptorSet s, uint32_t binding, VkDescriptorType type, VkBuffer b,
           VkDeviceSize range = VK_WHOLE_SIZE) {
  VkDescriptorBufferInfo bi{b, 0, range};
  VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
  w.dstSet = s;
  w.dstBinding = binding;
  w.descriptorCount = 1;
  w.descriptorType = type;
  w.pBufferInfo = &bi;
  vkUpdateDescriptorSets(dev, 1, &w, 0, nullptr);
}

void fill_inputs(Buffer& x, Buffer& y, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    static_cast<float*>(x.mapped)[i] = float(i % 251);
    static_cast<float*>(y.mapped)[i] = float(i % 13);
  }
}

// Elements of y that are not y0 + a * x.
uint32_t count_bad(const Buffer& y, uint32_t n, float a) {
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (static_cast<float*>(y.mapped)[i] != float(i % 13) + a * float(i % 251)) ++bad;
  return bad;
}

VkCommandBuffer record_saxpy(Device& dev, WideSaxpy& p, VkDescriptorSet s, uint32_t n, float a,
                             const uint32_t* dyn = nullptr) {
  VkCommandBuffer cb = dev.begin();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &s, dyn ? kBindings : 0, dyn);
  SaxpyPush pc{a, n};
  vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(pc), &pc);
  vkCmdDispatch(cb, (n + 63) / 64, 1, 1);
  return cb;
}

// Buffers written to the bindings saxpy does not use, then destroyed with their memory.
void write_then_destroy_unused(Device& dev, VkDescriptorSet s, VkDescriptorType type, bool template_update) {
  std::vector<Buffer> stale;
  for (uint32_t b = 2; b < kBindings; ++b) stale.push_back(dev.create_buffer(1 << 20));  // big: mmap'd
  if (template_update) {
    VkDescriptorUpdateTemplateEntry e{2, 0, kBindings - 2, type, 0, sizeof(VkDescriptorBufferInfo)};
    VkDescriptorUpdateTemplateCreateInfo tci{VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO};
    tci.descriptorUpdateEntryCount = 1;
    tci.pDescriptorUpdateEntries = &e;
    tci.templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET;
    VkDescriptorUpdateTemplate t;
    VK_CHECK(vkCreateDescriptorUpdateTemplate(dev.device, &tci, nullptr, &t));
    std::vector<VkDescriptorBufferInfo> infos;
    for (auto& b : stale) infos.push_back({b.buffer, 0, VK_WHOLE_SIZE});
    vkUpdateDescriptorSetWithTemplate(dev.device, s, t, infos.data());
    vkDestroyDescriptorUpdateTemplate(dev.device, t, nullptr);
  } else {
    for (uint32_t b = 2; b < kBindings; ++b) write(dev.device, s, b, type, stale[b - 2].buffer);
  }
  for (auto& b : stale) dev.destroy_buffer(b);
}

}  // namespace

TEST_CASE("unused descriptors may refer to destroyed buffers or be unwritten") {
  Device dev;
  const VkDescriptorType t = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  WideSaxpy p(dev.device, t);
  const uint32_t n = 4099;
  Buffer x = dev.create_buffer(n * 4), y = dev.create_buffer(n * 4);
  for (bool tmpl : {false, true}) {
    fill_inputs(x, y, n);
    VkDescriptorSet s = p.allocate();
    write(dev.device, s, 0, t, x.buffer);
    write(dev.device, s, 1, t, y.buffer);
    write_then_destroy_unused(dev, s, t, tmpl);
    dev.submit_and_wait(record_saxpy(dev, p, s, n, 2.0f));
    CHECK(count_bad(y, n, 2.0f) == 0);
    // The same set, re-pointed like ggml does: binding 0 now a fresh buffer.
    Buffer x2 = dev.create_buffer(n * 4);
    std::memcpy(x2.mapped, x.mapped, n * 4);
    write(dev.device, s, 0, t, x2.buffer);
    dev.submit_and_wait(record_saxpy(dev, p, s, n, 1.0f));
    CHECK(count_bad(y, n, 3.0f) == 0);  // 2x + 1x
    dev.destroy_buffer(x2);
  }
  {
    // Never written at all.
    fill_inputs(x, y, n);
    VkDescriptorSet s = p.allocate();
    write(dev.device, s, 0, t, x.buffer);
    write(dev.device, s, 1, t, y.buffer);
    dev.submit_and_wait(record_saxpy(dev, p, s, n, -3.0f));
    CHECK(count_bad(y, n, -3.0f) == 0);
  }
  dev.destroy_buffer(x);
  dev.destroy_buffer(y);
}

TEST_CASE("unused dynamic descriptors may refer to destroyed buffers; their offsets still count") {
  Device dev;
  const VkDescriptorType t = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC;
  WideSaxpy p(dev.device, t);
  const uint32_t n = 1000;
  Buffer x = dev.create_buffer(2 * n * 4), y = dev.create_buffer(2 * n * 4);
  fill_inputs(x, y, 2 * n);
  VkDescriptorSet s = p.allocate();
  write(dev.device, s, 0, t, x.buffer, n * 4);
  write(dev.device, s, 1, t, y.buffer, n * 4);
  write_then_destroy_unused(dev, s, t, false);
  // x from its second half, y from its first; the stale bindings get (meaningless) offsets.
  const uint32_t dyn[kBindings] = {n * 4, 0, 256, 512, 1u << 30, 768};
  dev.submit_and_wait(record_saxpy(dev, p, s, n, 0.5f, dyn));
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (static_cast<float*>(y.mapped)[i] != float(i % 13) + 0.5f * float((n + i) % 251)) ++bad;
  CHECK(bad == 0);
  dev.destroy_buffer(x);
  dev.destroy_buffer(y);
}

TEST_CASE("a set freed, its pool reset, or re-written after recording does not change a recorded dispatch") {
  Device dev;
  const VkDescriptorType t = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  WideSaxpy p(dev.device, t);
  const uint32_t n = 2048;
  Buffer x = dev.create_buffer(n * 4), y = dev.create_buffer(n * 4);
  fill_inputs(x, y, n);
  VkDescriptorSet s = p.allocate();
  write(dev.device, s, 0, t, x.buffer);
  write(dev.device, s, 1, t, y.buffer);
  VkCommandBuffer cb = record_saxpy(dev, p, s, n, 4.0f);
  // What the command buffer needs was captured when it was recorded; the application
  // invalidates the set (and even the pool's memory) before it runs.
  vkFreeDescriptorSets(dev.device, p.pool, 1, &s);
  VkDescriptorSet other = p.allocate();
  write(dev.device, other, 1, t, x.buffer);  // would alias y with x if read at run time
  VK_CHECK(vkResetDescriptorPool(dev.device, p.pool, 0));
  dev.submit_and_wait(cb);
  CHECK(count_bad(y, n, 4.0f) == 0);
  dev.destroy_buffer(x);
  dev.destroy_buffer(y);
}
