// add_cooperative_options: see cooperative_options.h.
#include "cooperative_options.h"

#include <algorithm>

#include "cooperative_caps.h"
#include "cooperative_queries.h"

#include "coopvk/kernels/number_formats.h"

using namespace coopvk;

namespace {

// VkComponentTypeKHR -> the kernels' format (the Vulkan chapter's table "Cooperative
// matrix component types" maps each to its SPIR-V type; FLOAT_E4M3_NV and FLOAT_E5M2_NV
// are the float8 EXT values). -1: not a matrix or vector component.
int format_of(VkComponentTypeKHR t) {
  using NF = kernels::NumberFormat;
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: return int(NF::F16);
    case VK_COMPONENT_TYPE_FLOAT32_KHR: return int(NF::F32);
    case VK_COMPONENT_TYPE_FLOAT64_KHR: return int(NF::F64);
    case VK_COMPONENT_TYPE_SINT8_KHR: return int(NF::I8);
    case VK_COMPONENT_TYPE_SINT16_KHR: return int(NF::I16);
    case VK_COMPONENT_TYPE_SINT32_KHR: return int(NF::I32);
    case VK_COMPONENT_TYPE_SINT64_KHR: return int(NF::I64);
    case VK_COMPONENT_TYPE_UINT8_KHR: return int(NF::U8);
    case VK_COMPONENT_TYPE_UINT16_KHR: return int(NF::U16);
    case VK_COMPONENT_TYPE_UINT32_KHR: return int(NF::U32);
    case VK_COMPONENT_TYPE_UINT64_KHR: return int(NF::U64);
    case VK_COMPONENT_TYPE_BFLOAT16_KHR: return int(NF::BF16);
    case VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT: return int(NF::E4M3);
    case VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT: return int(NF::E5M2);
    default: return -1;
  }
}

// A VkCooperativeVectorPropertiesNV entry as the JIT's combination. The packed
// interpretations read 8-bit integers four to a 32-bit input component; every other type
// is a format of the table above.
bool vector_combination(const caps::VectorEntry& e, jit::VectorCombination* out) {
  int interp = format_of(e.input_interpretation);
  out->input_packed = false;
  if (e.input_interpretation == VK_COMPONENT_TYPE_SINT8_PACKED_NV ||
      e.input_interpretation == VK_COMPONENT_TYPE_UINT8_PACKED_NV) {
    out->input_packed = true;
    interp = int(e.input_interpretation == VK_COMPONENT_TYPE_SINT8_PACKED_NV ? kernels::NumberFormat::I8
                                                                              : kernels::NumberFormat::U8);
  }
  const int in = format_of(e.input), mat = format_of(e.matrix_interpretation);
  const int bias = format_of(e.bias_interpretation), res = format_of(e.result);
  if (in < 0 || interp < 0 || mat < 0 || bias < 0 || res < 0) return false;
  out->input = uint8_t(in);
  out->input_interpretation = uint8_t(interp);
  out->matrix = uint8_t(mat);
  out->bias = uint8_t(bias);
  out->result = uint8_t(res);
  out->transpose = e.transpose;
  return true;
}

// VK_NV_cooperative_vector: the features as enabled, and the property entries and the
// component limit the shaders are held to (jit/compiler.h). An entry the JIT could not
// be told about would fail every multiply with it, which e2e_cooperative_vector (every
// advertised entry in every layout) would report.
void add_vector_options(const Device& dev, jit::CompileOptions* opts) {
  opts->cooperative_vector = dev.cooperative_vector;
  opts->cooperative_vector_training = dev.cooperative_vector_training;
  if (!dev.cooperative_vector) return;
  for (const caps::VectorEntry& e : caps::vector_table()) {
    jit::VectorCombination c;
    if (vector_combination(e, &c)) opts->vector_combinations.push_back(c);
  }
  opts->max_vector_components = caps::limits().max_cooperative_vector_components;
}

}  // namespace

void coopvk::add_cooperative_options(const Device& dev, jit::CompileOptions* opts) {
  add_vector_options(dev, opts);
  if (!dev.cooperative_matrix && !dev.nv_cooperative_matrix) return;
  caps::DeviceFacts facts = cooperative_device_facts(to_handle<VkPhysicalDevice>(dev.physical));
  // What the application enabled, not what the device could do.
  facts.bfloat16_matrices = dev.bfloat16_matrices;
  facts.float8_matrices = dev.float8_matrices;
  // Subgroup entries are exact shapes, or granularities with cooperativeMatrixFlexibleDimensions;
  // workgroup entries (cooperativeMatrixWorkgroupScope) are always granularities: the queries
  // that report them (Properties2 EXT, flexible dimensions NV) say so.
  const bool flexible = dev.nv2_flexible_dimensions;
  // The JIT's bound, which the limit reports (cooperative_caps.cpp).
  const uint32_t max_dim = std::min(caps::limits().flexible_dimensions_max_dimension, jit::kMaxMatrixDimension);
  for (const caps::MatrixEntry& e : caps::matrix_table()) {
    const bool wg = e.scope == VK_SCOPE_WORKGROUP_KHR;
    if ((wg && !dev.nv2_workgroup_scope) || !caps::entry_available(e, facts)) continue;
    int a = format_of(e.a), b = format_of(e.b), c = format_of(e.c), r = format_of(e.result);
    if (a < 0 || b < 0 || c < 0 || r < 0) continue;
    jit::MatrixCombination mc{e.m, e.n, e.k, uint8_t(a), uint8_t(b), uint8_t(c), uint8_t(r), e.saturating};
    mc.scope = wg ? 2 : 3;
    mc.flexible = wg || flexible;
    mc.max_dimension = mc.flexible ? max_dim : 0;
    if (wg) {
      mc.min_invocations = 1;
      mc.max_invocations = e.max_invocations;
    }
    opts->matrix_combinations.push_back(mc);
  }
  opts->nv_matrix = dev.nv_cooperative_matrix;
  opts->robust_matrix_access = dev.cooperative_matrix_robust;
  opts->matrix_reductions = dev.matrix_reductions;
  opts->matrix_conversions = dev.matrix_conversions;
  opts->matrix_per_element = dev.matrix_per_element;
  opts->matrix_get_coordinate = dev.matrix_get_coordinate;
  opts->nv2.reductions = dev.nv2_reductions;
  opts->nv2.conversions = dev.nv2_conversions;
  opts->nv2.per_element = dev.nv2_per_element;
  opts->nv2.workgroup_scope = dev.nv2_workgroup_scope;
  opts->nv2.flexible_dimensions = dev.nv2_flexible_dimensions;
  opts->nv2.tensor_addressing = dev.nv2_tensor_addressing;
  opts->nv2.block_loads = dev.nv2_block_loads;
}
