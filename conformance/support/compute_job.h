// Runs one compute shader through the loader: host vectors become storage buffers
// (set 0, bindings 0..n-1), results are copied back. For tests of the shader side.
#pragma once

#include <string>
#include <vector>

#include "vk_test_env.h"

namespace coopvk::test {

std::vector<uint32_t> load_spirv_file(const std::string& path);

struct ComputeJob {
  std::vector<uint32_t> spirv;
  std::vector<std::vector<uint8_t>*> buffers;  // read before, written back after
  std::vector<uint8_t> push;                   // push-constant bytes (offset 0)
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> specialization;  // id -> bytes
  uint32_t required_subgroup_size = 0;         // 0: the default
  bool full_subgroups = false;
  uint32_t groups[3] = {1, 1, 1};
};

// Creates the pipeline, dispatches once, waits, copies results back. Returns the
// vkCreateComputePipelines result (VK_SUCCESS: the job ran).
VkResult run_compute_job(Device& dev, ComputeJob& job);

}  // namespace coopvk::test
