// Property structs of the cooperative-matrix and cooperative-vector extensions in a
// VkPhysicalDeviceProperties2 chain, filled from the capability table's limits
// (cooperative_caps.cpp). Only the members after sType/pNext are written.
#include "cooperative_queries.h"
#include "physical_device.h"

using namespace coopvk;

bool coopvk::fill_cooperative_properties(const PhysicalDevice* pd, VkBaseOutStructure* s) {
  const caps::Limits& l = caps::limits();
  switch (s->sType) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR: {
      auto* p = reinterpret_cast<VkPhysicalDeviceCooperativeMatrixPropertiesKHR*>(s);
      p->cooperativeMatrixSupportedStages = l.matrix_stages;
      return true;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV: {
      auto* p = reinterpret_cast<VkPhysicalDeviceCooperativeMatrixPropertiesNV*>(s);
      p->cooperativeMatrixSupportedStages = l.matrix_stages;
      return true;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV: {
      // These limits apply once cooperativeMatrixWorkgroupScope / FlexibleDimensions are
      // supported ("Required Limit Types", limits); until then they state what will hold.
      auto* p = reinterpret_cast<VkPhysicalDeviceCooperativeMatrix2PropertiesNV*>(s);
      p->cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = l.workgroup_scope_max_workgroup_size;
      p->cooperativeMatrixFlexibleDimensionsMaxDimension = l.flexible_dimensions_max_dimension;
      p->cooperativeMatrixWorkgroupScopeReservedSharedMemory = l.workgroup_scope_reserved_shared_memory;
      return true;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_PROPERTIES_NV: {
      auto* p = reinterpret_cast<VkPhysicalDeviceCooperativeVectorPropertiesNV*>(s);
      // The training accumulation limits say whether training functions work at all
      // with that type, so they are true only while cooperativeVectorTraining is.
      const bool training =
          cooperative_device_facts(to_handle<VkPhysicalDevice>(const_cast<PhysicalDevice*>(pd)))
              .cooperative_vector_training;
      p->cooperativeVectorSupportedStages = l.vector_stages;
      p->cooperativeVectorTrainingFloat16Accumulation =
          training && l.vector_training_float16_accumulation ? VK_TRUE : VK_FALSE;
      p->cooperativeVectorTrainingFloat32Accumulation =
          training && l.vector_training_float32_accumulation ? VK_TRUE : VK_FALSE;
      p->maxCooperativeVectorComponents = l.max_cooperative_vector_components;
      return true;
    }
    default:
      return false;
  }
}
