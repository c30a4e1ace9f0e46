// Shared by the cooperative-vector end-to-end tests: a device with VK_NV_cooperative_vector
// and what its shaders use (8/16-bit storage and arithmetic, buffer device addresses,
// subgroup size control), the property query and the conversion command through the
// loader, and the component types by the tags the generated shaders are named with
// (coopvec_variants.cmake).
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "component_formats.h"
#include "compute_job.h"
#include "coopvec_vk_info.h"
#include "e2e_shader_env.h"
#include "matrix_reference.h"
#include "vk_test_env.h"

namespace coopvk::test {

// A component type of a VkCooperativeVectorPropertiesNV member: its tag, and its format
// (for the packed interpretations, that of one of the four 8-bit values).
struct VecType {
  const char* tag = nullptr;
  NumberFormat f = NumberFormat::F32;
  bool packed = false;
};
inline bool vec_type(VkComponentTypeKHR t, VecType* out) {
  if (t == VK_COMPONENT_TYPE_SINT8_PACKED_NV || t == VK_COMPONENT_TYPE_UINT8_PACKED_NV) {
    const bool s = t == VK_COMPONENT_TYPE_SINT8_PACKED_NV;
    *out = {s ? "s8packed" : "u8packed", s ? NumberFormat::I8 : NumberFormat::U8, true};
    return true;
  }
  Format f;  // FLOAT_E4M3_NV and FLOAT_E5M2_NV are the float8 EXT values
  if (!format_of(t, &f)) return false;
  *out = {f.tag, f.f, false};
  return true;
}

// Everything the cooperative-vector shaders need, on at once; `training` also enables
// cooperativeVectorTraining, `vectors` false leaves cooperativeVector off (the
// extension stays enabled).
struct VectorDevice {
  VkPhysicalDeviceCooperativeVectorFeaturesNV cv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV};
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &cv};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v11};
  DeviceOptions opts;
  explicit VectorDevice(bool training = true, bool vectors = true) {
    f2.features.shaderInt16 = VK_TRUE;
    v11.storageBuffer16BitAccess = VK_TRUE;
    v12.storageBuffer8BitAccess = v12.shaderFloat16 = v12.shaderInt8 = VK_TRUE;
    v12.bufferDeviceAddress = v12.vulkanMemoryModel = VK_TRUE;
    v13.subgroupSizeControl = v13.computeFullSubgroups = v13.synchronization2 = VK_TRUE;
    cv.cooperativeVector = vectors ? VK_TRUE : VK_FALSE;
    cv.cooperativeVectorTraining = training ? VK_TRUE : VK_FALSE;
    opts.features_chain = &f2;
    opts.extensions = {"VK_NV_cooperative_vector"};
  }
};

inline std::vector<VkCooperativeVectorPropertiesNV> vector_properties(const Instance& inst) {
  auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeVectorPropertiesNV>(
      vkGetInstanceProcAddr(inst.instance, "vkGetPhysicalDeviceCooperativeVectorPropertiesNV"));
  REQUIRE(fn);
  uint32_t n = 0;
  REQUIRE(fn(inst.physical, &n, nullptr) == VK_SUCCESS);
  std::vector<VkCooperativeVectorPropertiesNV> p(n, {VK_STRUCTURE_TYPE_COOPERATIVE_VECTOR_PROPERTIES_NV});
  REQUIRE(fn(inst.physical, &n, p.data()) == VK_SUCCESS);
  p.resize(n);
  return p;
}

inline VkPhysicalDeviceCooperativeVectorPropertiesNV vector_limits(VkPhysicalDevice pd) {
  VkPhysicalDeviceCooperativeVectorPropertiesNV cv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_PROPERTIES_NV};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &cv};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  return cv;
}

inline PFN_vkConvertCooperativeVectorMatrixNV host_convert(const Device& dev) {
  auto fn = reinterpret_cast<PFN_vkConvertCooperativeVectorMatrixNV>(
      vkGetDeviceProcAddr(dev.device, "vkConvertCooperativeVectorMatrixNV"));
  REQUIRE(fn);
  return fn;
}

inline size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace coopvk::test
