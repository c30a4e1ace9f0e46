// The capability table: every cooperative-matrix and cooperative-vector type combination,
// size, granularity, scope and limit coopvk intends to support, as data in one place
// (cooperative_caps.cpp), and the pure functions that answer the four property queries
// from it. The entry points (cooperative_queries.cpp) and the VkPhysicalDeviceProperties2
// structs (cooperative_properties.cpp) only gather the device's facts and call these.
//
// This file needs nothing but the Vulkan headers, so tests can compile it on its own and
// run the queries under other DeviceFacts (e.g. with the NV2 features on) than the
// driver reports today.
//
// What a subgroup-scope entry means here. coopvk runs one subgroup per JIT function and
// keeps a subgroup-scope matrix as one whole tile in that function's frame (DESIGN.md,
// "The JIT", 3 and 5); the lane count only decides how the tile's elements are spread
// over invocations (OpCooperativeMatrixLengthKHR), never which sizes or types work. So
// every subgroup-scope entry holds for every subgroup size the device can run:
//  - vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR has no subgroup size; its
//    entries must hold for whatever the effective subgroup size of a shader is
//    (VUID-RuntimeSpirv-OpTypeCooperativeMatrixKHR-10163), which they do.
//  - vkGetPhysicalDeviceCooperativeMatrixProperties2EXT with subgroupSize 0 must hold
//    for a varying subgroup size, and with a nonzero size for that size
//    (VkPhysicalDeviceCooperativeMatrixInfo2EXT; proposal
//    VK_EXT_cooperative_matrix_maintenance1, "Querying properties"): both answer the
//    same subgroup entries, a superset (here: equal) of the KHR list.
// NVIDIA's entries are defined at its subgroup size 32; they appear here at every size
// because nothing in this implementation ties a tile shape to the lane count. Whether a
// shader may *require* subgroup size 32 is subgroup-size control's business
// (physical_device_properties.cpp), not this table's.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>

namespace coopvk::caps {

// What the queries depend on, as the device reports it (features and subgroup
// properties). The driver builds it from its own feature and property queries.
struct DeviceFacts {
  uint32_t subgroup_size = 0;      // VkPhysicalDeviceSubgroupProperties::subgroupSize
  uint32_t min_subgroup_size = 0;  // VkPhysicalDeviceSubgroupSizeControlProperties
  uint32_t max_subgroup_size = 0;
  bool subgroup_size_control = false;   // subgroupSizeControl
  bool workgroup_scope = false;         // cooperativeMatrixWorkgroupScope (NV2)
  bool flexible_dimensions = false;     // cooperativeMatrixFlexibleDimensions (NV2)
  bool bfloat16_matrices = false;       // shaderBFloat16CooperativeMatrix
  bool float8_matrices = false;         // shaderFloat8CooperativeMatrix
  bool cooperative_vector_training = false;  // cooperativeVectorTraining
};

// A component type an entry uses that only exists with another extension's feature.
enum class Needs : uint8_t { Nothing, BFloat16, Float8 };

// One cooperative-matrix combination. For subgroup scope, m/n/k are exact sizes (KHR)
// or, with flexible dimensions, granularities (EXT and NV2 queries). For workgroup scope
// they are granularities and the entry holds for every power-of-two workgroup size up to
// max_invocations.
struct MatrixEntry {
  VkScopeKHR scope;
  uint32_t m, n, k;
  VkComponentTypeKHR a, b, c, result;
  bool saturating;           // SaturatingAccumulation operand must (not) be present
  uint32_t max_invocations;  // workgroup scope only; 0 for subgroup scope
  Needs needs;
};

// One cooperative-vector matrix-vector multiply(-add) combination.
struct VectorEntry {
  VkComponentTypeKHR input, input_interpretation, matrix_interpretation,
      bias_interpretation, result;
  bool transpose;
};

// Limits reported in the VkPhysicalDeviceProperties2 chain.
struct Limits {
  VkShaderStageFlags matrix_stages;
  uint32_t workgroup_scope_max_workgroup_size;
  uint32_t flexible_dimensions_max_dimension;
  uint32_t workgroup_scope_reserved_shared_memory;
  VkShaderStageFlags vector_stages;
  bool vector_training_float16_accumulation;  // reported only with cooperativeVectorTraining
  bool vector_training_float32_accumulation;
  uint32_t max_cooperative_vector_components;
};

std::span<const MatrixEntry> matrix_table();
std::span<const VectorEntry> vector_table();
const Limits& limits();

// Whether the device's features make an entry's component types usable.
bool entry_available(const MatrixEntry& e, const DeviceFacts& f);

// The four queries, with the two-call idiom: with a null array the count, else up to
// *count structures written (sType and pNext of each left as the application set them)
// and VK_INCOMPLETE when some did not fit.
VkResult matrix_properties_khr(const DeviceFacts& f, uint32_t* count,
                               VkCooperativeMatrixPropertiesKHR* out);
// VK_NV_cooperative_matrix's list: the subgroup entries without saturation whose component
// types the NV enumeration has (no bfloat16 or float8), in the KHR list's order.
VkResult matrix_properties_nv(const DeviceFacts& f, uint32_t* count, VkCooperativeMatrixPropertiesNV* out);
// Returns VK_ERROR_VALIDATION_FAILED (and *count = 0) when `info` breaks one of its valid
// usage rules; *why then names the rule.
VkResult matrix_properties2_ext(const DeviceFacts& f,
                                const VkPhysicalDeviceCooperativeMatrixInfo2EXT* info,
                                uint32_t* count, VkCooperativeMatrixProperties2EXT* out,
                                const char** why);
VkResult flexible_dimensions_properties_nv(const DeviceFacts& f, uint32_t* count,
                                           VkCooperativeMatrixFlexibleDimensionsPropertiesNV* out);
VkResult vector_properties_nv(uint32_t* count, VkCooperativeVectorPropertiesNV* out);

// Null if `info` is valid for this device, else the valid-usage rule it breaks.
const char* check_matrix_info2(const DeviceFacts& f,
                               const VkPhysicalDeviceCooperativeMatrixInfo2EXT* info);

}  // namespace coopvk::caps
