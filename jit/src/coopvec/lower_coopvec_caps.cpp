// What the device advertises for cooperative vectors, enforced at compile time: the
// driver's VkCooperativeVectorPropertiesNV entries and maxCooperativeVectorComponents
// (CompileOptions::vector_combinations, max_vector_components). The Vulkan spec makes
// each a rule on the shader (appendix "SPIR-V environment", runtime SPIR-V valid usage);
// a shader breaking one fails pipeline creation with the rule's name instead of running
// something the device never claimed, so the queries and the compiler cannot disagree.
// The kernels' own limits (coopvec_matmul_error) are checked before these.
#include "coopvk/kernels/coopvec_ops.h"
#include "lower/lowerer.h"

namespace coopvk::jit {

namespace {
using kernels::NumberFormat;

std::string name(uint8_t f) { return kernels::format_name(NumberFormat(f)); }
}  // namespace

void Lowerer::check_coopvec_type_advertised(Id elem, uint32_t count, const Instruction& at) {
  // VUID-RuntimeSpirv-maxCooperativeVectorComponents-10094: "Component Count less than or
  // equal to maxCooperativeVectorComponents".
  if (opts.max_vector_components && count > opts.max_vector_components)
    fail("cooperative vector of " + std::to_string(count) + " components exceeds maxCooperativeVectorComponents (" +
             std::to_string(opts.max_vector_components) + ", VUID-RuntimeSpirv-maxCooperativeVectorComponents-10094)",
         &at);
  if (opts.vector_combinations.empty()) return;
  // VUID-RuntimeSpirv-OpTypeCooperativeVector-10095: the Component Type must be "any
  // supported type reported by vkGetPhysicalDeviceCooperativeVectorPropertiesNV". The
  // types of vectors a property names are its inputType and resultType (the
  // interpretations describe matrix and bias memory, or how an input is read); an
  // integer type's signedness is part of it (SINT8 and UINT8 are different types).
  const NumberFormat f = number_format(elem, type(elem).is_signed);
  for (const VectorCombination& c : opts.vector_combinations)
    if (c.input == uint8_t(f) || c.result == uint8_t(f)) return;
  fail(std::string("cooperative vectors of ") + kernels::format_name(f) +
           " components: no VkCooperativeVectorPropertiesNV entry of this device has that inputType or resultType "
           "(VUID-RuntimeSpirv-OpTypeCooperativeVector-10095)",
       &at);
}

void Lowerer::check_coopvec_combination(const kernels::CoopVecMatMulDesc& d, const Instruction& at) {
  if (opts.vector_combinations.empty()) return;
  // VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10089: one entry must match Input's
  // component type, InputInterpretation, MatrixInterpretation, "for
  // OpCooperativeVectorMatrixMulAddNV, the BiasInterpretation", the result's component
  // type, and allow transposition if Transpose is true.
  for (const VectorCombination& c : opts.vector_combinations) {
    if (c.input != d.input_format || c.input_interpretation != d.input_interp || c.input_packed != bool(d.input_packed))
      continue;
    if (c.matrix != d.matrix_format || c.result != d.result_format) continue;
    if (d.has_bias && c.bias != d.bias_format) continue;
    if (d.transpose && !c.transpose) continue;
    return;
  }
  std::string what = "cooperative vector matrix multiply" + std::string(d.has_bias ? "-add" : "") + " of " +
                     name(uint8_t(d.input_format)) + " input interpreted as " + name(uint8_t(d.input_interp)) +
                     (d.input_packed ? " packed" : "") + ", " + name(uint8_t(d.matrix_format)) + " matrix, " +
                     (d.has_bias ? name(uint8_t(d.bias_format)) + " bias, " : "") + name(uint8_t(d.result_format)) +
                     " result" + (d.transpose ? ", transposed," : "") +
                     " is not a combination this device lists in VkCooperativeVectorPropertiesNV "
                     "(VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10089)";
  fail(what, &at);
}

}  // namespace coopvk::jit
