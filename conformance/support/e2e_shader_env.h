// What every end-to-end shader test needs: its compiled shaders by name, specialization
// and push-constant bytes, and the subgroup sizes the device allows.
// COOPVK_E2E_SHADER_DIR: where the including test's compiled shaders are.
#pragma once

#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "compute_job.h"
#include "vk_test_env.h"

namespace coopvk::test {

inline std::string shader_path(const std::string& name) { return std::string(COOPVK_E2E_SHADER_DIR) + "/" + name + ".spv"; }
inline bool have_shader(const std::string& name) { return std::ifstream(shader_path(name)).good(); }
inline std::vector<uint32_t> shader(const std::string& name) { return load_spirv_file(shader_path(name)); }

inline std::vector<uint8_t> u32_bytes(std::initializer_list<uint32_t> v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.begin(), b.size());
  return b;
}
inline std::pair<uint32_t, std::vector<uint8_t>> spec(uint32_t id, uint32_t v) { return {id, u32_bytes({v})}; }

inline VkPhysicalDeviceSubgroupSizeControlProperties subgroup_sizes(VkPhysicalDevice pd) {
  VkPhysicalDeviceSubgroupSizeControlProperties sc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sc};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  return sc;
}

}  // namespace coopvk::test
