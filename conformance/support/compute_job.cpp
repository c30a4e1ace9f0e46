#include "compute_job.h"

#include <cstring>
#include <fstream>

namespace coopvk::test {

std::vector<uint32_t> load_spirv_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

StorageLayout::StorageLayout(VkDevice d, uint32_t binding_count, uint32_t push_bytes)
    : device(d), bindings(binding_count) {
  std::vector<VkDescriptorSetLayoutBinding> b;
  for (uint32_t i = 0; i < bindings; ++i)
    b.push_back({i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  lci.bindingCount = bindings;
  lci.pBindings = b.data();
  VK_CHECK(vkCreateDescriptorSetLayout(device, &lci, nullptr, &set_layout));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &set_layout;
  plci.pushConstantRangeCount = push_bytes ? 1 : 0;
  plci.pPushConstantRanges = &range;
  if (VkResult r = vkCreatePipelineLayout(device, &plci, nullptr, &layout); r != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
    VK_CHECK(r);
  }
}

StorageLayout::~StorageLayout() {
  vkDestroyPipelineLayout(device, layout, nullptr);
  vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
}

VkDescriptorSet StorageLayout::write_set(VkDescriptorPool pool, const std::vector<VkBuffer>& buffers) const {
  if (buffers.size() != bindings) throw std::runtime_error("write_set: one buffer per binding");
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &set_layout;
  VkDescriptorSet set;
  VK_CHECK(vkAllocateDescriptorSets(device, &ai, &set));
  std::vector<VkDescriptorBufferInfo> infos(bindings);
  std::vector<VkWriteDescriptorSet> writes(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    infos[i] = {buffers[i], 0, VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device, bindings, writes.data(), 0, nullptr);
  return set;
}

VkResult run_compute_job(Device& dev, ComputeJob& job) {
  VkDevice d = dev.device;
  const uint32_t n = uint32_t(job.buffers.size());
  StorageLayout storage(d, n, uint32_t(job.push.size()));
  const VkPipelineLayout layout = storage.layout;

  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = job.spirv.size() * 4;
  smci.pCode = job.spirv.data();
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint8_t> spec_data;
  for (auto& [id, bytes] : job.specialization) {
    entries.push_back({id, uint32_t(spec_data.size()), bytes.size()});
    spec_data.insert(spec_data.end(), bytes.begin(), bytes.end());
  }
  VkSpecializationInfo spec{uint32_t(entries.size()), entries.data(), spec_data.size(), spec_data.data()};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo req{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO, &smci};
  req.requiredSubgroupSize = job.required_subgroup_size;
  VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cci.stage.pNext = job.required_subgroup_size ? static_cast<const void*>(&req) : &smci;
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.pName = "main";
  cci.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  if (job.full_subgroups) cci.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  cci.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult created = vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &cci, nullptr, &pipeline);

  if (created == VK_SUCCESS) {
    std::vector<Buffer> bufs;
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    if (job.before_dispatch) usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    std::vector<size_t> made;  // binding -> index in bufs
    std::vector<std::vector<uint8_t>*> made_from;
    for (auto* host : job.buffers) {
      size_t k = 0;
      while (k < made_from.size() && made_from[k] != host) ++k;
      if (k == made_from.size()) {
        bufs.push_back(dev.create_buffer(host->size() ? host->size() : 4, usage));
        std::memcpy(bufs.back().mapped, host->data(), host->size());
        made_from.push_back(host);
      }
      made.push_back(k);
    }
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n ? n : 1};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    VkDescriptorPool pool;
    VK_CHECK(vkCreateDescriptorPool(d, &dpci, nullptr, &pool));
    std::vector<VkBuffer> handles;
    for (size_t k : made) handles.push_back(bufs[k].buffer);
    VkDescriptorSet set = storage.write_set(pool, handles);
    VkCommandBuffer cb = dev.begin();
    if (job.before_dispatch) {
      std::vector<Buffer> by_binding;
      for (size_t k : made) by_binding.push_back(bufs[k]);
      job.before_dispatch(cb, by_binding);
    }
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    if (!job.push.empty())
      vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(job.push.size()), job.push.data());
    vkCmdDispatch(cb, job.groups[0], job.groups[1], job.groups[2]);
    dev.submit_and_wait(cb);
    for (size_t k = 0; k < bufs.size(); ++k) {
      std::memcpy(made_from[k]->data(), bufs[k].mapped, made_from[k]->size());
      dev.destroy_buffer(bufs[k]);
    }
    vkDestroyDescriptorPool(d, pool, nullptr);
    vkDestroyPipeline(d, pipeline, nullptr);
  }
  return created;
}

}  // namespace coopvk::test
