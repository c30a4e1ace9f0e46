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

#include "compute_job.h"
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
  using NF = NumberFormat;
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: *out = {"f16", NF::F16}; return true;
    case VK_COMPONENT_TYPE_FLOAT32_KHR: *out = {"f32", NF::F32}; return true;
    case VK_COMPONENT_TYPE_SINT8_KHR: *out = {"s8", NF::I8}; return true;
    case VK_COMPONENT_TYPE_UINT8_KHR: *out = {"u8", NF::U8}; return true;
    case VK_COMPONENT_TYPE_SINT32_KHR: *out = {"s32", NF::I32}; return true;
    case VK_COMPONENT_TYPE_UINT32_KHR: *out = {"u32", NF::U32}; return true;
    case VK_COMPONENT_TYPE_SINT8_PACKED_NV: *out = {"s8packed", NF::I8, true}; return true;
    case VK_COMPONENT_TYPE_UINT8_PACKED_NV: *out = {"u8packed", NF::U8, true}; return true;
    case VK_COMPONENT_TYPE_FLOAT_E4M3_NV: *out = {"e4m3", NF::E4M3}; return true;
    case VK_COMPONENT_TYPE_FLOAT_E5M2_NV: *out = {"e5m2", NF::E5M2}; return true;
    default: return false;
  }
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

inline VkConvertCooperativeVectorMatrixInfoNV convert_info(uint32_t rows, uint32_t cols, VkComponentTypeKHR src_type,
                                                          VkCooperativeVectorMatrixLayoutNV src_layout, size_t src_stride,
                                                          VkComponentTypeKHR dst_type,
                                                          VkCooperativeVectorMatrixLayoutNV dst_layout, size_t dst_stride) {
  VkConvertCooperativeVectorMatrixInfoNV info{VK_STRUCTURE_TYPE_CONVERT_COOPERATIVE_VECTOR_MATRIX_INFO_NV};
  info.numRows = rows;
  info.numColumns = cols;
  info.srcComponentType = src_type;
  info.srcLayout = src_layout;
  info.srcStride = src_stride;
  info.dstComponentType = dst_type;
  info.dstLayout = dst_layout;
  info.dstStride = dst_stride;
  return info;
}

inline size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace coopvk::test
