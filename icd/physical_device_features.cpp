// Feature queries and the device-creation feature check, both driven by one list of
// supported feature names and the generated table of every feature struct's VkBool32
// members (vk_structs.h), so promoted and extension structs can never disagree.
#include "log.h"
#include "physical_device.h"
#include "vk_entrypoints.h"
#include "vk_structs.h"

#include <cstring>
#include <string_view>

using namespace coopvk;

namespace {

// Every feature coopvk supports, by member name. A name here is true in every struct
// that has it (e.g. timelineSemaphore in VkPhysicalDeviceVulkan12Features and in
// VkPhysicalDeviceTimelineSemaphoreFeatures). Add a name only with the tests that
// exercise it.
constexpr std::string_view kSupported[] = {
    "timelineSemaphore",  // sync.cpp: host wait/signal, queue wait/signal
    "synchronization2",   // vkQueueSubmit2, vkCmdPipelineBarrier2, events2, timestamps2
    "hostQueryReset",     // vkResetQueryPool
    "pipelineCreationCacheControl",  // pipeline_compute.cpp: FAIL_ON_PIPELINE_COMPILE_REQUIRED,
                                     // EARLY_RETURN_ON_FAILURE (e2e_compute_dispatch)
    // Shader side (jit/): each is exercised by e2e_shader_features and unit_jit_compute.
    "shaderInt64",
    "shaderInt16",
    "shaderFloat64",
    "shaderInt8",
    "shaderFloat16",
    "storageBuffer16BitAccess",
    "storageBuffer8BitAccess",
    "bufferDeviceAddress",
    "vulkanMemoryModel",
    "vulkanMemoryModelDeviceScope",
    "scalarBlockLayout",
    "shaderSubgroupExtendedTypes",
    "subgroupSizeControl",
    "computeFullSubgroups",
    "shaderIntegerDotProduct",
    "maintenance4",
    // Workgroup variables with an OpConstantNull initializer: jit/src/runtime/workgroup_runner.cpp
    // zeroes all workgroup memory before every workgroup (e2e_shader_features).
    "shaderZeroInitializeWorkgroupMemory",
    // Uniform blocks in std430 layout: jit/src/lower/lower_types.cpp takes every offset and
    // stride from the Offset / ArrayStride decorations, whatever rules made them
    // (e2e_compute_dispatch).
    "uniformBufferStandardLayout",
    // OpGroupNonUniformBroadcast with a dynamically uniform id (SPIR-V 1.5): the lowering
    // takes the id as a value (jit/src/lower/lower_subgroup.cpp; e2e_shader_features).
    "subgroupBroadcastDynamicId",
    // jit/src/lower/lower_memory.cpp bounds-checks buffer accesses when a device enables it
    // (e2e_robust_buffer_access).
    "robustBufferAccess",
    // Cooperative matrices (jit/src/coopmat/lower_coopmat.cpp, kernels/tile_mma*): the entries of
    // icd/cooperative_caps.cpp; e2e_cooperative_matrix and unit_jit_coopmat.
    // Both VkPhysicalDeviceCooperativeMatrixFeaturesKHR and ...NV (VK_NV_cooperative_matrix:
    // jit/src/spirv/nv_cooperative_matrix.h on the same machinery; e2e_nv_cooperative_matrix).
    "cooperativeMatrix",
    "cooperativeMatrixRobustBufferAccess",
    // VK_EXT_cooperative_matrix_maintenance1: the Properties2 query (icd/cooperative_caps.cpp)
    // and jit/src/coopmat/lower_coopmat_ext.cpp; e2e_matrix_maintenance1.
    // Qualified by struct: VkPhysicalDeviceCooperativeMatrix2FeaturesNV has members of the
    // same names, each enabling only its own extension's capabilities.
    "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixProperties2",
    "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixReductions",
    "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixConversions",
    "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixPerElementOperations",
    "VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT::cooperativeMatrixGetCoordinate",
    // VK_NV_cooperative_matrix2: reductions, per-element operations and conversions (the
    // maintenance1 lowering, plus OpCooperativeMatrixTransposeNV; e2e_matrix_maintenance1's
    // NV2 cases); workgroup scope and flexible dimensions (jit/src/coopmat/
    // lower_coopmat_workgroup.cpp, check_matrix_combination; e2e_workgroup_matrix); tensor
    // addressing and block loads (jit/src/coopmat/lower_tensor.cpp, jit/src/runtime/
    // tensor_addressing.cpp; e2e_tensor_addressing).
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixWorkgroupScope",
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixTensorAddressing",
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixBlockLoads",
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixFlexibleDimensions",
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixReductions",
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixConversions",
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixPerElementOperations",
    // bfloat16 and float8 (SPV_KHR_bfloat16, SPV_EXT_float8): their bits in integers,
    // converted by kernels/number_formats; unit_jit_special_floats.
    "shaderBFloat16Type",
    "shaderBFloat16DotProduct",
    "shaderBFloat16CooperativeMatrix",
    "shaderFloat8",
    "shaderFloat8CooperativeMatrix",
    // VK_NV_cooperative_vector (jit/src/coopvec/lower_coopvec*.cpp, kernels/coopvec_ops): the entries
    // and limits of icd/cooperative_caps.cpp; e2e_cooperative_vector and unit_jit_coopvec.
    "cooperativeVector",
    "cooperativeVectorTraining",
};

// A bare name is supported in every struct that has the member; "Struct::member" in that
// struct only.
bool supported(std::string_view struct_name, std::string_view name) {
  for (std::string_view s : kSupported) {
    if (s == name) return true;
    if (size_t sep = s.find("::"); sep != std::string_view::npos && s.substr(0, sep) == struct_name &&
        s.substr(sep + 2) == name)
      return true;
  }
  return false;
}

void fill_struct(const FeatureStruct& fs, void* base) {
  for (uint32_t i = 0; i < fs.member_count; ++i) {
    VkBool32 v = supported(fs.name, fs.members[i].name) ? VK_TRUE : VK_FALSE;
    std::memcpy(static_cast<char*>(base) + fs.members[i].offset, &v, sizeof(v));
  }
}

// Returns the first member that is VK_TRUE but unsupported, or null.
const char* first_unsupported(const FeatureStruct& fs, const void* base) {
  for (uint32_t i = 0; i < fs.member_count; ++i) {
    VkBool32 v;
    std::memcpy(&v, static_cast<const char*>(base) + fs.members[i].offset, sizeof(v));
    if (v && !supported(fs.name, fs.members[i].name)) return fs.members[i].name;
  }
  return nullptr;
}

}  // namespace

void coopvk::fill_core_features(VkPhysicalDeviceFeatures* f) { fill_struct(core_feature_struct(), f); }

void coopvk::fill_features(void* feature_struct, VkStructureType stype) {
  if (const FeatureStruct* fs = find_feature_struct(stype)) fill_struct(*fs, feature_struct);
}

VkResult coopvk::check_requested_features(const VkDeviceCreateInfo* info) {
  if (info->pEnabledFeatures) {
    if (const char* bad = first_unsupported(core_feature_struct(), info->pEnabledFeatures)) {
      COOPVK_ERROR("vkCreateDevice: feature VkPhysicalDeviceFeatures::%s is not supported", bad);
      return VK_ERROR_FEATURE_NOT_PRESENT;
    }
  }
  for (auto* s = static_cast<const VkBaseInStructure*>(info->pNext); s; s = s->pNext) {
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2) {
      auto* f2 = reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s);
      if (const char* bad = first_unsupported(core_feature_struct(), &f2->features)) {
        COOPVK_ERROR("vkCreateDevice: feature VkPhysicalDeviceFeatures::%s is not supported", bad);
        return VK_ERROR_FEATURE_NOT_PRESENT;
      }
      continue;
    }
    const FeatureStruct* fs = find_feature_struct(s->sType);
    if (!fs) continue;  // not a feature struct (or one of an extension we lack): ignored
    if (const char* bad = first_unsupported(*fs, s)) {
      COOPVK_ERROR("vkCreateDevice: feature %s::%s is not supported", fs->name, bad);
      return VK_ERROR_FEATURE_NOT_PRESENT;
    }
  }
  return VK_SUCCESS;
}

bool coopvk::requested_feature(const VkDeviceCreateInfo* info, std::string_view name) {
  // "Struct::member" looks in that struct only (VkPhysicalDeviceFeatures for the core ones).
  std::string_view only;
  if (size_t sep = name.find("::"); sep != std::string_view::npos) {
    only = name.substr(0, sep);
    name = name.substr(sep + 2);
  }
  auto has = [&](const FeatureStruct& fs, const void* base) {
    if (!only.empty() && only != fs.name) return false;
    for (uint32_t i = 0; i < fs.member_count; ++i) {
      if (fs.members[i].name != name) continue;
      VkBool32 v;
      std::memcpy(&v, static_cast<const char*>(base) + fs.members[i].offset, sizeof(v));
      if (v) return true;
    }
    return false;
  };
  if (info->pEnabledFeatures && has(core_feature_struct(), info->pEnabledFeatures)) return true;
  for (auto* s = static_cast<const VkBaseInStructure*>(info->pNext); s; s = s->pNext) {
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2) {
      if (has(core_feature_struct(), &reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s)->features)) return true;
    } else if (const FeatureStruct* fs = find_feature_struct(s->sType); fs && has(*fs, s)) {
      return true;
    }
  }
  return false;
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceFeatures(VkPhysicalDevice,
                                                            VkPhysicalDeviceFeatures* f) {
  fill_core_features(f);
}

VKAPI_ATTR void VKAPI_CALL coopvk_GetPhysicalDeviceFeatures2(VkPhysicalDevice,
                                                             VkPhysicalDeviceFeatures2* f) {
  fill_core_features(&f->features);
  for (auto* s = static_cast<VkBaseOutStructure*>(f->pNext); s; s = s->pNext)
    fill_features(s, s->sType);
}
