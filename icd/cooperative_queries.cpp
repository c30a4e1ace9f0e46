// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR, ...Properties2EXT,
// ...FlexibleDimensionsPropertiesNV and vkGetPhysicalDeviceCooperativeVectorPropertiesNV:
// thin wrappers that answer from the capability table (cooperative_caps.cpp).
#include "cooperative_queries.h"

#include "log.h"
#include "physical_device.h"
#include "vk_entrypoints.h"

using namespace coopvk;

namespace {

// A zeroed Vulkan structure with its sType (and pNext) set.
template <typename T>
T make_struct(VkStructureType type, void* next = nullptr) {
  T s{};
  s.sType = type;
  s.pNext = next;
  return s;
}

}  // namespace

caps::DeviceFacts coopvk::cooperative_device_facts(VkPhysicalDevice physical_device) {
  caps::DeviceFacts f;

  // Subgroup sizes exactly as vkGetPhysicalDeviceProperties2 reports them: the EXT rules
  // name VkPhysicalDeviceSubgroupProperties::subgroupSize and min/maxSubgroupSize.
  auto ssc = make_struct<VkPhysicalDeviceSubgroupSizeControlProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES);
  auto sg = make_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &ssc);
  auto props = make_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg);
  coopvk_GetPhysicalDeviceProperties2(physical_device, &props);
  f.subgroup_size = sg.subgroupSize;
  f.min_subgroup_size = ssc.minSubgroupSize;
  f.max_subgroup_size = ssc.maxSubgroupSize;

  // Features from the one list of supported features (physical_device_features.cpp).
  // A struct the driver does not know (an extension it lacks) stays all false.
  auto size_control = make_struct<VkPhysicalDeviceSubgroupSizeControlFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES);
  auto cm2 = make_struct<VkPhysicalDeviceCooperativeMatrix2FeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV);
  auto bf16 = make_struct<VkPhysicalDeviceShaderBfloat16FeaturesKHR>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR);
  auto fp8 = make_struct<VkPhysicalDeviceShaderFloat8FeaturesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT);
  auto cv = make_struct<VkPhysicalDeviceCooperativeVectorFeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV);
  fill_features(&size_control, size_control.sType);
  fill_features(&cm2, cm2.sType);
  fill_features(&bf16, bf16.sType);
  fill_features(&fp8, fp8.sType);
  fill_features(&cv, cv.sType);
  f.subgroup_size_control = size_control.subgroupSizeControl;
  f.workgroup_scope = cm2.cooperativeMatrixWorkgroupScope;
  f.flexible_dimensions = cm2.cooperativeMatrixFlexibleDimensions;
  f.bfloat16_matrices = bf16.shaderBFloat16CooperativeMatrix;
  f.float8_matrices = fp8.shaderFloat8CooperativeMatrix;
  f.cooperative_vector_training = cv.cooperativeVectorTraining;
  return f;
}

namespace {

bool count_pointer_ok(const void* count, const char* command) {
  if (count) return true;
  COOPVK_ERROR("%s: VUID-%s-pPropertyCount-parameter: pPropertyCount is NULL", command, command);
  return false;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceCooperativeMatrixPropertiesKHR(
    VkPhysicalDevice physicalDevice, uint32_t* pPropertyCount, VkCooperativeMatrixPropertiesKHR* pProperties) {
  if (!count_pointer_ok(pPropertyCount, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"))
    return VK_ERROR_VALIDATION_FAILED;
  return caps::matrix_properties_khr(cooperative_device_facts(physicalDevice), pPropertyCount, pProperties);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceCooperativeMatrixPropertiesNV(
    VkPhysicalDevice physicalDevice, uint32_t* pPropertyCount, VkCooperativeMatrixPropertiesNV* pProperties) {
  if (!count_pointer_ok(pPropertyCount, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"))
    return VK_ERROR_VALIDATION_FAILED;
  return caps::matrix_properties_nv(cooperative_device_facts(physicalDevice), pPropertyCount, pProperties);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceCooperativeMatrixProperties2EXT(
    VkPhysicalDevice physicalDevice, const VkPhysicalDeviceCooperativeMatrixInfo2EXT* pCooperativeMatrixInfo,
    uint32_t* pPropertyCount, VkCooperativeMatrixProperties2EXT* pProperties) {
  if (!count_pointer_ok(pPropertyCount, "vkGetPhysicalDeviceCooperativeMatrixProperties2EXT"))
    return VK_ERROR_VALIDATION_FAILED;
  const char* why = nullptr;
  if (pCooperativeMatrixInfo && pCooperativeMatrixInfo->scope != VK_SCOPE_WORKGROUP_KHR &&
      pCooperativeMatrixInfo->invocations != 0)
    COOPVK_WARN("vkGetPhysicalDeviceCooperativeMatrixProperties2EXT: VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-"
                "invocations-13381: invocations is %u with a scope other than WORKGROUP; ignored",
                pCooperativeMatrixInfo->invocations);
  VkResult r = caps::matrix_properties2_ext(cooperative_device_facts(physicalDevice), pCooperativeMatrixInfo,
                                            pPropertyCount, pProperties, &why);
  if (r == VK_ERROR_VALIDATION_FAILED)
    COOPVK_ERROR("vkGetPhysicalDeviceCooperativeMatrixProperties2EXT: %s", why);
  return r;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV(
    VkPhysicalDevice physicalDevice, uint32_t* pPropertyCount,
    VkCooperativeMatrixFlexibleDimensionsPropertiesNV* pProperties) {
  if (!count_pointer_ok(pPropertyCount, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"))
    return VK_ERROR_VALIDATION_FAILED;
  return caps::flexible_dimensions_properties_nv(cooperative_device_facts(physicalDevice), pPropertyCount,
                                                 pProperties);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPhysicalDeviceCooperativeVectorPropertiesNV(
    VkPhysicalDevice, uint32_t* pPropertyCount, VkCooperativeVectorPropertiesNV* pProperties) {
  if (!count_pointer_ok(pPropertyCount, "vkGetPhysicalDeviceCooperativeVectorPropertiesNV"))
    return VK_ERROR_VALIDATION_FAILED;
  return caps::vector_properties_nv(pPropertyCount, pProperties);
}
