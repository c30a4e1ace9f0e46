// The capability table (see cooperative_caps.h for what an entry means) and the queries
// that answer from it. Spec references are to the spec pack in spec/: "chapter" is
// vulkan/chapter-shaders-cooperative-matrices-and-vectors.adoc, "limits" is
// vulkan/chapter-limits-cooperative.adoc.
#include "cooperative_caps.h"

#include <algorithm>
#include <vector>

namespace coopvk::caps {

namespace {

constexpr VkScopeKHR S = VK_SCOPE_SUBGROUP_KHR;
constexpr VkScopeKHR W = VK_SCOPE_WORKGROUP_KHR;
constexpr VkComponentTypeKHR F16 = VK_COMPONENT_TYPE_FLOAT16_KHR;
constexpr VkComponentTypeKHR F32 = VK_COMPONENT_TYPE_FLOAT32_KHR;
constexpr VkComponentTypeKHR BF16 = VK_COMPONENT_TYPE_BFLOAT16_KHR;
constexpr VkComponentTypeKHR E4M3 = VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT;
constexpr VkComponentTypeKHR E5M2 = VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT;
constexpr VkComponentTypeKHR S8 = VK_COMPONENT_TYPE_SINT8_KHR;
constexpr VkComponentTypeKHR U8 = VK_COMPONENT_TYPE_UINT8_KHR;
constexpr VkComponentTypeKHR S16 = VK_COMPONENT_TYPE_SINT16_KHR;
constexpr VkComponentTypeKHR U16 = VK_COMPONENT_TYPE_UINT16_KHR;
constexpr VkComponentTypeKHR S32 = VK_COMPONENT_TYPE_SINT32_KHR;
constexpr VkComponentTypeKHR U32 = VK_COMPONENT_TYPE_UINT32_KHR;
constexpr VkComponentTypeKHR S8_PACKED = VK_COMPONENT_TYPE_SINT8_PACKED_NV;
constexpr VkComponentTypeKHR U8_PACKED = VK_COMPONENT_TYPE_UINT8_PACKED_NV;
constexpr VkComponentTypeKHR FP8_E4M3 = VK_COMPONENT_TYPE_FLOAT_E4M3_NV;
constexpr VkComponentTypeKHR FP8_E5M2 = VK_COMPONENT_TYPE_FLOAT_E5M2_NV;
constexpr Needs NONE = Needs::Nothing;
constexpr Needs BF = Needs::BFloat16;
constexpr Needs FP8 = Needs::Float8;

// Largest workgroup of a workgroup-scope matrix (limits: at least 2 x subgroupSize).
// 256 is what NVIDIA reports and what llama.cpp's coopmat2 shaders use at most.
constexpr uint32_t kMaxWorkgroup = 256;

// Listed in order of preference: "If some types are preferred over other types ... they
// should appear earlier in the list" (chapter, VkCooperativeMatrixPropertiesKHR).
// llama.cpp takes its tile size from the first subgroup f16 x f16 entry, and its flash
// attention needs 16x16x16 (DESIGN.md), so f16 16x16x16 comes first.
constexpr MatrixEntry kMatrices[] = {
    // scope  M   N   K   A     B     C    Result sat    invocations needs
    // --- subgroup scope: NVIDIA's shapes (DESIGN.md, "Shaders tuned for NVIDIA GPUs")
    {S, 16, 16, 16, F16, F16, F32, F32, false, 0, NONE},
    {S, 16, 16, 16, F16, F16, F16, F16, false, 0, NONE},
    {S, 16, 8, 16, F16, F16, F32, F32, false, 0, NONE},
    {S, 16, 8, 16, F16, F16, F16, F16, false, 0, NONE},
    {S, 16, 8, 8, F16, F16, F32, F32, false, 0, NONE},
    {S, 16, 8, 8, F16, F16, F16, F16, false, 0, NONE},
    {S, 16, 16, 16, BF16, BF16, F32, F32, false, 0, BF},
    {S, 16, 16, 32, S8, S8, S32, S32, false, 0, NONE},
    {S, 16, 8, 32, S8, S8, S32, S32, false, 0, NONE},
    {S, 16, 16, 32, U8, U8, U32, U32, false, 0, NONE},
    {S, 16, 8, 32, U8, U8, U32, U32, false, 0, NONE},
    // --- subgroup scope: float32 (native on every CPU)
    {S, 16, 16, 16, F32, F32, F32, F32, false, 0, NONE},
    {S, 16, 8, 8, F32, F32, F32, F32, false, 0, NONE},
    // --- subgroup scope: float8 (VK_EXT_shader_float8) into f32 / f16
    {S, 16, 16, 32, E4M3, E4M3, F32, F32, false, 0, FP8},
    {S, 16, 16, 32, E4M3, E4M3, F16, F16, false, 0, FP8},
    {S, 16, 8, 32, E4M3, E4M3, F32, F32, false, 0, FP8},
    {S, 16, 8, 32, E4M3, E4M3, F16, F16, false, 0, FP8},
    {S, 16, 16, 32, E5M2, E5M2, F32, F32, false, 0, FP8},
    {S, 16, 16, 32, E5M2, E5M2, F16, F16, false, 0, FP8},
    {S, 16, 8, 32, E5M2, E5M2, F32, F32, false, 0, FP8},
    {S, 16, 8, 32, E5M2, E5M2, F16, F16, false, 0, FP8},
    // --- subgroup scope: the 8x8x8 shapes portable code asks for (lavapipe has these)
    {S, 8, 8, 8, F16, F16, F32, F32, false, 0, NONE},
    {S, 8, 8, 8, F16, F16, F16, F16, false, 0, NONE},
    {S, 8, 8, 8, F32, F32, F32, F32, false, 0, NONE},
    {S, 8, 8, 32, S8, S8, S32, S32, false, 0, NONE},
    {S, 8, 8, 32, U8, U8, U32, U32, false, 0, NONE},
    // --- subgroup scope: every component type in every use at 16x16 (each T x T + T at
    // 16x16x16), so a matrix of any type can meet one of any other type of the same use
    // and size, as element-wise code and conversions need (the CTS takes the sizes two
    // types share in a use); and every integer accumulator the spec allows.
    {S, 16, 16, 16, BF16, BF16, BF16, BF16, false, 0, BF},
    {S, 16, 16, 16, E4M3, E4M3, E4M3, E4M3, false, 0, FP8},
    {S, 16, 16, 16, E5M2, E5M2, E5M2, E5M2, false, 0, FP8},
    {S, 16, 16, 16, U8, U8, U8, U8, false, 0, NONE},
    {S, 16, 16, 16, S16, S16, S16, S16, false, 0, NONE},
    {S, 16, 16, 16, U16, U16, U16, U16, false, 0, NONE},
    {S, 16, 16, 16, S32, S32, S32, S32, false, 0, NONE},
    {S, 16, 16, 16, U32, U32, U32, U32, false, 0, NONE},
    {S, 16, 16, 32, U8, U8, S32, S32, false, 0, NONE},
    // --- subgroup scope: saturating integer accumulation (SaturatingAccumulationKHR)
    {S, 16, 16, 32, S8, S8, S32, S32, true, 0, NONE},
    {S, 16, 8, 32, S8, S8, S32, S32, true, 0, NONE},
    {S, 16, 16, 32, U8, U8, U32, U32, true, 0, NONE},
    {S, 16, 8, 32, U8, U8, U32, U32, true, 0, NONE},
    {S, 8, 8, 32, S8, S8, S32, S32, true, 0, NONE},
    {S, 8, 8, 32, U8, U8, U32, U32, true, 0, NONE},
    {S, 16, 16, 32, U8, U8, S32, S32, true, 0, NONE},
    // s8 x s8 + s8 only saturating: the Vulkan CTS (vulkan-cts-1.4.6) compares a wrapped
    // signed 8-bit result masked to 8 bits against the stored value sign-extended, so
    // every negative result of a correct wrapping implementation fails there; an app
    // asking for the wrapping form gets a compile error naming the combination.
    {S, 16, 16, 16, S8, S8, S8, S8, true, 0, NONE},
    {S, 16, 16, 16, U8, U8, U8, U8, true, 0, NONE},
    {S, 16, 16, 16, S32, S32, S32, S32, true, 0, NONE},
    {S, 16, 16, 16, U32, U32, U32, U32, true, 0, NONE},
    // --- workgroup scope (VK_NV_cooperative_matrix2): granularities, every power-of-two
    // workgroup up to kMaxWorkgroup. 16x16x16 meets llama.cpp's <= 32x16x16 at 128 and
    // <= 32x32x16 at 256 invocations; the integer rows complete the combinations the EXT
    // query must return at workgroup scope (chapter, Properties2EXT).
    {W, 16, 16, 16, F16, F16, F32, F32, false, kMaxWorkgroup, NONE},
    {W, 16, 16, 16, F16, F16, F16, F16, false, kMaxWorkgroup, NONE},
    {W, 16, 16, 16, BF16, BF16, F32, F32, false, kMaxWorkgroup, BF},
    {W, 16, 16, 32, S8, S8, S32, S32, false, kMaxWorkgroup, NONE},
    {W, 16, 16, 32, U8, U8, U32, U32, false, kMaxWorkgroup, NONE},
};

// Cooperative-vector combinations: exactly what kernels/coopvec_ops accepts and the e2e
// tests run (e2e_cooperative_vector multiplies with every entry in every layout). First
// the six the spec requires (chapter, VkCooperativeVectorPropertiesNV, "The following
// combinations must be supported"); then the unsigned and mixed-sign 8-bit forms
// NVIDIA's driver reports besides (the types the CTS's cooperative_vector.matmul groups
// name; u8 activations times s8 weights is the x86 VPDPBUSD shape) and a 32-bit integer
// input read as int8; then float32 throughout and float16
// products into a float32 result, which a CPU does natively. Transposition of the
// opaque layouts is a matter of index order on a CPU, so every combination offers it
// (row- and column-major matrices are never transposed: SPV_NV_cooperative_vector,
// "Transposing is not supported for the RowMajorNV/ColumnMajorNV layouts").
// Integer results are 32-bit: the kernels accumulate exactly and wrap (or, with
// SaturatingAccumulation, clamp); float results are float16 or float32 with the
// products summed in float32 (kernels/coopvec_ops.h states the rounding).
constexpr VectorEntry kVectors[] = {
    // input     input interp.  matrix interp.  bias interp.  result  transpose
    {F16, F16, F16, F16, F16, true},
    {U32, S8_PACKED, S8, S32, S32, true},
    {S8, S8, S8, S32, S32, true},
    {F32, S8, S8, S32, S32, true},
    {F16, FP8_E4M3, FP8_E4M3, F16, F16, true},
    {F16, FP8_E5M2, FP8_E5M2, F16, F16, true},
    {U32, U8_PACKED, S8, S32, S32, true},
    {U8, U8, S8, S32, S32, true},
    {S8, S8, U8, S32, S32, true},
    {U8, U8, U8, S32, S32, true},
    {U8, U8, U8, U32, U32, true},
    {U32, U8_PACKED, U8, U32, U32, true},
    {S32, S8, S8, S32, S32, true},
    {F32, F32, F32, F32, F32, true},
    {F16, F16, F16, F32, F32, true},
};

constexpr Limits kLimits = {
    // "must not have any bits other than VK_SHADER_STAGE_COMPUTE_BIT" (limits); compute
    // is the only stage coopvk has.
    .matrix_stages = VK_SHADER_STAGE_COMPUTE_BIT,
    .workgroup_scope_max_workgroup_size = kMaxWorkgroup,
    // The required minimum (limits), and what the JIT holds: a matrix is one LLVM value
    // of rows x <cols x T> (jit/src/coopmat/lower_coopmat.cpp), at most 256 either way.
    // llama.cpp's coopmat2 path wants >= 512.
    .flexible_dimensions_max_dimension = 1024,
    // Workgroup-scope matrices live in the JIT's own frames, not in shared memory.
    .workgroup_scope_reserved_shared_memory = 0,
    .vector_stages = VK_SHADER_STAGE_COMPUTE_BIT,
    // OpCooperativeVectorOuterProductAccumulateNV into float16 and float32 matrices and
    // OpCooperativeVectorReduceSumAccumulateNV of float16 and float32 vectors both run
    // (kernels/coopvec_ops: each sum formed in f64 and rounded once); reported only while
    // cooperativeVectorTraining is (cooperative_properties.cpp).
    .vector_training_float16_accumulation = true,
    .vector_training_float32_accumulation = true,
    // Required minimum 128 (limits); 512 is what neural-shading code sizes its layers to.
    // A vector lives in the JIT's frame as [components x subgroup lanes] (jit/src/
    // lowerer.h), bounded to 6 MiB a shader (run on the workgroup runner's 8 MiB fiber
    // stacks past 256 KiB): a glslang multiply of 512-component f16 or f32 vectors fits at
    // every subgroup size (e2e_cooperative_vector runs them). Past the bound, pipeline
    // creation fails naming it.
    .max_cooperative_vector_components = 512,
};

bool is_pow2(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Walks the items a query reports, in order, and writes them with the two-call idiom
// (chapter: "If pProperties is NULL ... Otherwise ... at most pPropertyCount structures
// will be written, and VK_INCOMPLETE will be returned"). `each(emit)` calls
// emit(write) once per item; write(Out&) fills one structure's payload.
template <typename Out, typename Each>
VkResult enumerate(uint32_t* count, Out* out, Each&& each) {
  const uint32_t capacity = out ? *count : 0;
  uint32_t total = 0;
  each([&](auto&& write) {
    if (out && total < capacity) write(out[total]);
    ++total;
  });
  if (!out) {
    *count = total;
    return VK_SUCCESS;
  }
  *count = std::min(total, capacity);
  return total > capacity ? VK_INCOMPLETE : VK_SUCCESS;
}

// Smallest workgroup the flexible-dimensions query lists for workgroup scope: one subgroup
// of the largest size a pipeline may require, so that every listed workgroup is a
// power-of-two multiple of any effective subgroup size, as
// VUID-VkPipelineShaderStageCreateInfo-module-10169 requires (the Vulkan CTS runs each listed
// workgroup size at the largest subgroup size too). The Properties2 query still answers
// for every power of two from VkPhysicalDeviceSubgroupProperties::subgroupSize (chapter,
// vkGetPhysicalDeviceCooperativeMatrixProperties2EXT).
uint32_t smallest_workgroup(const DeviceFacts& f) {
  return std::max({f.subgroup_size, f.max_subgroup_size, 1u});
}

}  // namespace

namespace {
bool same_types(const MatrixEntry& x, const MatrixEntry& y) {
  return x.a == y.a && x.b == y.b && x.c == y.c && x.result == y.result && x.saturating == y.saturating;
}

// kMatrices, then every subgroup entry whose component types (and saturation) no
// workgroup entry has, again at workgroup scope with its shape as the granularity: the
// workgroup-scope code (jit/src/coopmat/lower_coopmat_workgroup.cpp) runs any
// combination the tile kernels do, and a type that only exists at subgroup scope would
// make the CTS skip workgroup cases of that type for no reason.
std::vector<MatrixEntry> build_table() {
  std::vector<MatrixEntry> t(std::begin(kMatrices), std::end(kMatrices));
  for (const MatrixEntry& e : kMatrices) {
    if (e.scope != S) continue;
    bool covered = false;
    for (const MatrixEntry& w : t) covered = covered || (w.scope == W && same_types(w, e));
    if (covered) continue;
    MatrixEntry w = e;
    w.scope = W;
    w.max_invocations = kMaxWorkgroup;
    t.push_back(w);
  }
  return t;
}
}  // namespace

std::span<const MatrixEntry> matrix_table() {
  static const std::vector<MatrixEntry> table = build_table();
  return table;
}
std::span<const VectorEntry> vector_table() { return kVectors; }
const Limits& limits() { return kLimits; }

bool entry_available(const MatrixEntry& e, const DeviceFacts& f) {
  switch (e.needs) {
    case Needs::Nothing: return true;
    case Needs::BFloat16: return f.bfloat16_matrices;
    case Needs::Float8: return f.float8_matrices;
  }
  return false;
}

VkResult matrix_properties_khr(const DeviceFacts& f, uint32_t* count,
                               VkCooperativeMatrixPropertiesKHR* out) {
  // Subgroup scope only: without cooperativeMatrixWorkgroupScope "scope must be
  // VK_SCOPE_SUBGROUP_KHR" (chapter, VkCooperativeMatrixPropertiesKHR), and with it the
  // workgroup entries are reported by the queries that can say for which workgroup size.
  return enumerate(count, out, [&](auto&& emit) {
    // Entries whose M fits the default subgroup come first. llama.cpp takes its tile
    // shape from the first f16 entry and sizes each warp's share of a block from the
    // subgroup size (WM = the subgroup size on narrow subgroups): a 16-row tile on an
    // 8-wide subgroup gives it zero tiles per warp, an array of length 0 in its shader.
    // On an AVX-512 host (subgroup 32) this keeps the table's order; on AVX2 (8) the
    // 8x8x8 entries lead, as lavapipe's do.
    auto fits = [&](const MatrixEntry& e) { return f.subgroup_size == 0 || e.m <= f.subgroup_size; };
    for (int pass = 0; pass < 2; ++pass)
    for (const MatrixEntry& e : matrix_table()) {
      if (e.scope != S || !entry_available(e, f) || fits(e) != (pass == 0)) continue;
      emit([&](VkCooperativeMatrixPropertiesKHR& p) {
        p.MSize = e.m;
        p.NSize = e.n;
        p.KSize = e.k;
        p.AType = e.a;
        p.BType = e.b;
        p.CType = e.c;
        p.ResultType = e.result;
        p.saturatingAccumulation = e.saturating ? VK_TRUE : VK_FALSE;
        p.scope = e.scope;
      });
    }
  });
}

VkResult matrix_properties_nv(const DeviceFacts& f, uint32_t* count, VkCooperativeMatrixPropertiesNV* out) {
  // The KHR list's entries in its order (VkComponentTypeNV shares VkComponentTypeKHR's
  // values), less what the NV structure cannot say (saturation, component types that
  // came after it) and integer entries whose A/B and C/result differ in signedness: NV
  // matrix types carry their signedness and GL_NV_integer_cooperative_matrix cannot
  // write such a multiply, so none of them is tested.
  uint32_t n = 0;
  matrix_properties_khr(f, &n, nullptr);
  std::vector<VkCooperativeMatrixPropertiesKHR> khr(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
  matrix_properties_khr(f, &n, khr.data());
  auto nv_type = [](VkComponentTypeKHR t) { return t <= VK_COMPONENT_TYPE_UINT64_KHR; };
  auto is_signed_int = [](VkComponentTypeKHR t) { return t >= VK_COMPONENT_TYPE_SINT8_KHR && t <= VK_COMPONENT_TYPE_SINT64_KHR; };
  auto is_int = [&](VkComponentTypeKHR t) { return t >= VK_COMPONENT_TYPE_SINT8_KHR && t <= VK_COMPONENT_TYPE_UINT64_KHR; };
  return enumerate(count, out, [&](auto&& emit) {
    for (const VkCooperativeMatrixPropertiesKHR& k : khr) {
      if (k.saturatingAccumulation || !nv_type(k.AType) || !nv_type(k.BType) || !nv_type(k.CType) ||
          !nv_type(k.ResultType) || (is_int(k.AType) && is_signed_int(k.AType) != is_signed_int(k.CType)))
        continue;
      emit([&](VkCooperativeMatrixPropertiesNV& p) {
        p.MSize = k.MSize;
        p.NSize = k.NSize;
        p.KSize = k.KSize;
        p.AType = k.AType;
        p.BType = k.BType;
        p.CType = k.CType;
        p.DType = k.ResultType;
        p.scope = k.scope;
      });
    }
  });
}

const char* check_matrix_info2(const DeviceFacts& f,
                               const VkPhysicalDeviceCooperativeMatrixInfo2EXT* info) {
  if (!info) return "VUID-vkGetPhysicalDeviceCooperativeMatrixProperties2EXT-pCooperativeMatrixInfo-parameter: pCooperativeMatrixInfo is NULL";
  if (info->sType != VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_INFO_2_EXT)
    return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-sType-sType: wrong sType";
  if (info->flags & ~VkCooperativeMatrixFlagsEXT(VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT))
    return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-flags-parameter: unknown flag bits";
  if (info->scope != S && info->scope != W)
    return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-scope-13372: scope must be SUBGROUP or WORKGROUP";
  if (info->scope == W && !f.workgroup_scope)
    return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-cooperativeMatrixWorkgroupScope-13373: "
           "scope is WORKGROUP but cooperativeMatrixWorkgroupScope is not supported";
  if (info->subgroupSize != 0 && !is_pow2(info->subgroupSize))
    return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-subgroupSize-13374: subgroupSize is not a power of two";
  if (info->scope == S) {
    if (f.subgroup_size_control) {
      if (info->subgroupSize != 0 && info->subgroupSize < f.min_subgroup_size)
        return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-scope-13375: subgroupSize is below minSubgroupSize";
      if (info->subgroupSize > f.max_subgroup_size)
        return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-scope-13376: subgroupSize is above maxSubgroupSize";
    } else if (info->subgroupSize != 0 && info->subgroupSize != f.subgroup_size) {
      return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-scope-13377: subgroupSize must be 0 or "
             "VkPhysicalDeviceSubgroupProperties::subgroupSize without subgroupSizeControl";
    }
    // invocations != 0 breaks VUID-...-invocations-13381, but the member's description
    // says it "is ignored unless scope is VK_SCOPE_WORKGROUP_KHR": it is (the entry point
    // logs a warning).
  } else {
    if (!is_pow2(info->invocations))
      return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-invocations-13378: invocations is not a power of two";
    if (info->subgroupSize != 0 && info->invocations % info->subgroupSize != 0)
      return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-subgroupSize-13379: invocations is not a multiple "
             "of subgroupSize";
    if (info->invocations > kLimits.workgroup_scope_max_workgroup_size)
      return "VUID-VkPhysicalDeviceCooperativeMatrixInfo2EXT-scope-13380: invocations exceeds "
             "cooperativeMatrixWorkgroupScopeMaxWorkgroupSize";
  }
  return nullptr;
}

VkResult matrix_properties2_ext(const DeviceFacts& f,
                                const VkPhysicalDeviceCooperativeMatrixInfo2EXT* info,
                                uint32_t* count, VkCooperativeMatrixProperties2EXT* out,
                                const char** why) {
  if (const char* bad = check_matrix_info2(f, info)) {
    if (why) *why = bad;
    *count = 0;
    return VK_ERROR_VALIDATION_FAILED;
  }
  // VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT selects the entries that must
  // use SaturatingAccumulation; without it, those that must not (chapter,
  // VkCooperativeMatrixFlagBitsEXT).
  const bool saturating = info->flags & VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT;
  // Subgroup scope: every subgroup entry holds at every subgroup size, the varying one
  // (subgroupSize 0) included (cooperative_caps.h), so the answer does not depend on
  // subgroupSize. Workgroup scope: the entries whose workgroup range holds `invocations`
  // (invocations is ignored for subgroup scope).
  return enumerate(count, out, [&](auto&& emit) {
    for (const MatrixEntry& e : matrix_table()) {
      if (e.scope != info->scope || e.saturating != saturating || !entry_available(e, f)) continue;
      if (e.scope == W && info->invocations > e.max_invocations) continue;
      emit([&](VkCooperativeMatrixProperties2EXT& p) {
        p.MGranularity = e.m;
        p.NGranularity = e.n;
        p.KGranularity = e.k;
        p.AType = e.a;
        p.BType = e.b;
        p.CType = e.c;
        p.ResultType = e.result;
      });
    }
  });
}

VkResult flexible_dimensions_properties_nv(const DeviceFacts& f, uint32_t* count,
                                           VkCooperativeMatrixFlexibleDimensionsPropertiesNV* out) {
  // "If the cooperativeMatrixFlexibleDimensions feature is not supported, the
  // implementation must advertise zero properties" (chapter,
  // vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV).
  if (!f.flexible_dimensions) return enumerate(count, out, [](auto&&) {});
  return enumerate(count, out, [&](auto&& emit) {
    auto put = [&](const MatrixEntry& e, uint32_t invocations) {
      emit([&](VkCooperativeMatrixFlexibleDimensionsPropertiesNV& p) {
        p.MGranularity = e.m;
        p.NGranularity = e.n;
        p.KGranularity = e.k;
        p.AType = e.a;
        p.BType = e.b;
        p.CType = e.c;
        p.ResultType = e.result;
        p.saturatingAccumulation = e.saturating ? VK_TRUE : VK_FALSE;
        p.scope = e.scope;
        p.workgroupInvocations = invocations;
      });
    };
    // Workgroup scope first (the larger tiles a CPU prefers): one structure per supported
    // workgroup size, since workgroupInvocations is one number (the seed:
    // "if multiple workgroup sizes are supported there may be multiple ... structures").
    // Without the workgroup-scope feature there are none to report.
    if (f.workgroup_scope) {
      for (const MatrixEntry& e : matrix_table()) {
        if (e.scope != W || !entry_available(e, f)) continue;
        for (uint32_t inv = smallest_workgroup(f); inv <= e.max_invocations; inv *= 2) put(e, inv);
      }
    }
    // Subgroup scope: the same shapes as the KHR list, read as granularities; the
    // workgroup size does not matter for them, reported as 0.
    for (const MatrixEntry& e : matrix_table())
      if (e.scope == S && entry_available(e, f)) put(e, 0);
  });
}

VkResult vector_properties_nv(uint32_t* count, VkCooperativeVectorPropertiesNV* out) {
  return enumerate(count, out, [&](auto&& emit) {
    for (const VectorEntry& e : kVectors) {
      emit([&](VkCooperativeVectorPropertiesNV& p) {
        p.inputType = e.input;
        p.inputInterpretation = e.input_interpretation;
        p.matrixInterpretation = e.matrix_interpretation;
        p.biasInterpretation = e.bias_interpretation;
        p.resultType = e.result;
        p.transpose = e.transpose ? VK_TRUE : VK_FALSE;
      });
    }
  });
}

}  // namespace coopvk::caps
