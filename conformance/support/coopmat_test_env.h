// Shared by the cooperative-matrix end-to-end tests: a device with every feature their
// shaders use (cooperative matrices with bfloat16 and float8, the maintenance1 operations,
// 8/16-bit storage, subgroup size control), the property queries through the loader, the
// component formats the test shaders are named by, and specialization helpers.
// COOPVK_E2E_SHADER_DIR: where the including test's compiled shaders are.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "compute_job.h"
#include "component_formats.h"
#include "e2e_shader_env.h"
#include "matrix_reference.h"
#include "vk_test_env.h"

namespace coopvk::test {

// Everything the multiply-add shaders need, on at once.
struct MatrixDevice {
  VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT m1{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_MAINTENANCE_1_FEATURES_EXT};
  VkPhysicalDeviceShaderFloat8FeaturesEXT f8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT};
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR, &f8};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, &bf};
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &cm};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v11};
  DeviceOptions opts;
  // maintenance1: also enable VK_EXT_cooperative_matrix_maintenance1 and its features.
  explicit MatrixDevice(bool robust_matrices = false, bool maintenance1 = false) {
    f2.features.shaderInt16 = VK_TRUE;
    v11.storageBuffer16BitAccess = VK_TRUE;
    v12.storageBuffer8BitAccess = v12.shaderFloat16 = v12.shaderInt8 = VK_TRUE;
    v12.bufferDeviceAddress = v12.vulkanMemoryModel = VK_TRUE;
    v13.subgroupSizeControl = v13.computeFullSubgroups = VK_TRUE;
    cm.cooperativeMatrix = VK_TRUE;
    cm.cooperativeMatrixRobustBufferAccess = robust_matrices ? VK_TRUE : VK_FALSE;
    bf.shaderBFloat16Type = bf.shaderBFloat16CooperativeMatrix = VK_TRUE;
    f8.shaderFloat8 = f8.shaderFloat8CooperativeMatrix = VK_TRUE;
    opts.features_chain = &f2;
    opts.extensions = {"VK_KHR_cooperative_matrix", "VK_KHR_shader_bfloat16", "VK_EXT_shader_float8"};
    if (maintenance1) {
      m1.cooperativeMatrixProperties2 = m1.cooperativeMatrixReductions = m1.cooperativeMatrixConversions = VK_TRUE;
      m1.cooperativeMatrixPerElementOperations = m1.cooperativeMatrixGetCoordinate = VK_TRUE;
      f8.pNext = &m1;
      opts.extensions.push_back("VK_EXT_cooperative_matrix_maintenance1");
    }
  }
};

// MatrixDevice with VK_NV_cooperative_matrix2 enabled; the test sets the nv2 features it
// needs before creating the device (constructed in place: md's chain points into it).
struct Nv2MatrixDevice {
  MatrixDevice md;
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV nv2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  Nv2MatrixDevice() {
    md.f8.pNext = &nv2;
    md.opts.extensions.push_back("VK_NV_cooperative_matrix2");
  }
  Nv2MatrixDevice(const Nv2MatrixDevice&) = delete;
  Nv2MatrixDevice& operator=(const Nv2MatrixDevice&) = delete;
};

inline std::vector<VkCooperativeMatrixPropertiesKHR> matrix_properties(const Instance& inst) {
  VkPhysicalDevice pd = inst.physical;
  auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      vkGetInstanceProcAddr(inst.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  uint32_t n = 0;
  REQUIRE(fn);
  REQUIRE(fn(pd, &n, nullptr) == VK_SUCCESS);
  std::vector<VkCooperativeMatrixPropertiesKHR> p(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
  REQUIRE(fn(pd, &n, p.data()) == VK_SUCCESS);
  p.resize(n);
  return p;
}


}  // namespace coopvk::test
