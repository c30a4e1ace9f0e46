// Runs one compute shader through the loader: host vectors become storage buffers
// (set 0, bindings 0..n-1), results are copied back. For tests of the shader side.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vk_test_env.h"

namespace coopvk::test {

std::vector<uint32_t> load_spirv_file(const std::string& path);

// The pipeline layout every ComputeJob uses: set 0 holds `bindings` storage buffers
// (bindings 0..n-1), then `push_bytes` of push constants at offset 0. Also for tests that
// record their own commands with the same kind of shader.
struct StorageLayout {
  VkDevice device = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  uint32_t bindings = 0;

  StorageLayout(VkDevice d, uint32_t binding_count, uint32_t push_bytes);
  ~StorageLayout();
  StorageLayout(const StorageLayout&) = delete;
  StorageLayout& operator=(const StorageLayout&) = delete;

  // A set from `pool` whose binding i is the whole of buffers[i] (one per binding).
  VkDescriptorSet write_set(VkDescriptorPool pool, const std::vector<VkBuffer>& buffers) const;
};

struct ComputeJob {
  std::vector<uint32_t> spirv;
  // Read before, written back after. One host vector given for several bindings is one
  // buffer bound to each of them (aliased descriptors).
  std::vector<std::vector<uint8_t>*> buffers;
  std::vector<uint8_t> push;                   // push-constant bytes (offset 0)
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> specialization;  // id -> bytes
  uint32_t required_subgroup_size = 0;         // 0: the default
  bool full_subgroups = false;
  uint32_t groups[3] = {1, 1, 1};
  // Recorded before the dispatch, in the same command buffer, with the job's buffers
  // (binding order; their contents already copied in): e.g. commands that produce what
  // the shader reads, and the barrier after them. The buffers then also have
  // VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT (the device must enable bufferDeviceAddress).
  std::function<void(VkCommandBuffer, const std::vector<Buffer>&)> before_dispatch;
};

// Creates the pipeline, dispatches once, waits, copies results back. Returns the
// vkCreateComputePipelines result (VK_SUCCESS: the job ran).
VkResult run_compute_job(Device& dev, ComputeJob& job);

}  // namespace coopvk::test
