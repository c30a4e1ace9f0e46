// SPIR-V compute shader -> native code through LLVM ORC (host CPU features).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "coopvk/jit/shader_abi.h"
#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

enum class DescriptorKind : uint8_t { StorageBuffer, UniformBuffer };

// What the pipeline layout says about each binding, in the driver's flat numbering.
struct BindingInfo {
  bool present = false;
  DescriptorKind kind = DescriptorKind::StorageBuffer;
  uint32_t first = 0;  // index of array element 0 in the set's flat descriptor array
  uint32_t count = 0;  // array size
};
struct SetInfo {
  std::vector<BindingInfo> bindings;  // indexed by binding number
};
struct PipelineLayoutInfo {
  SetInfo sets[kMaxDescriptorSets];
  uint32_t push_constant_bytes = 0;
};

struct SpecializationValue {
  uint32_t constant_id;
  std::vector<uint8_t> bytes;  // 1, 2, 4 or 8 bytes as the app gave them
};

// One multiply-add combination a pipeline may use (the driver's advertised
// cooperative-matrix properties): MxNxK and the four component formats, as
// kernels::NumberFormat values with the signedness of the Matrix*SignedComponents
// operands folded in.
//
// With VK_NV_cooperative_matrix2 an entry may also be flexible (m, n, k are then
// granularities: any multiples up to max_dimension are allowed) and of workgroup scope,
// holding for every power-of-two workgroup of min_invocations..max_invocations
// invocations. Entries of the plain KHR query have scope 3 (Subgroup), flexible false.
struct MatrixCombination {
  uint32_t m = 0, n = 0, k = 0;
  uint8_t a = 0, b = 0, c = 0, result = 0;
  bool saturating = false;
  uint8_t scope = 3;          // SPIR-V Scope: 3 Subgroup, 2 Workgroup
  bool flexible = false;      // m, n, k are granularities
  uint32_t max_dimension = 0;  // flexible: the largest M, N or K
  uint32_t min_invocations = 0, max_invocations = 0;  // workgroup scope
};

// One matrix-vector multiply(-add) combination a pipeline may use (the driver's
// advertised VkCooperativeVectorPropertiesNV entries), as kernels::NumberFormat values:
// Input's component type (integers with their signedness), what InputInterpretation
// converts it to (I8 / U8 with input_packed for the packed interpretations), the
// MatrixInterpretation, BiasInterpretation, the result's component type, and whether
// Transpose may be true.
struct VectorCombination {
  uint8_t input = 0, input_interpretation = 0, matrix = 0, bias = 0, result = 0;
  bool input_packed = false;
  bool transpose = false;
};

struct CompileOptions {
  std::string entry_point = "main";
  std::vector<SpecializationValue> specialization;
  uint32_t subgroup_size = 0;  // 0: default_subgroup_size()
  PipelineLayoutInfo layout;
  bool require_full_subgroups = false;
  // robustBufferAccess: loads outside a bound buffer range return zero and stores there
  // are dropped (Vulkan spec, "Robust Buffer Access"). Off: no check is emitted at all.
  bool robust_buffer_access = false;
  // Cooperative matrices (VK_KHR_cooperative_matrix): the combinations the device
  // advertises. A shader using another type, size or scope fails to compile, naming it.
  // Empty: the feature is not enabled, and a cooperative matrix type fails.
  std::vector<MatrixCombination> matrix_combinations;
  // cooperativeMatrixRobustBufferAccess: cooperative matrix loads and stores follow the
  // robust buffer access rules even when robust_buffer_access is off.
  bool robust_matrix_access = false;
  // VK_NV_cooperative_matrix's cooperativeMatrix: the legacy NV types and instructions
  // (SPV_NV_cooperative_matrix, capability CooperativeMatrixNV), on the same combinations'
  // subgroup entries without saturation. Off: a module declaring the capability fails.
  bool nv_matrix = false;
  // VK_EXT_cooperative_matrix_maintenance1's features as the application enabled them;
  // a shader using what a disabled one guards fails to compile, naming the feature.
  bool matrix_reductions = false;      // cooperativeMatrixReductions
  bool matrix_conversions = false;     // cooperativeMatrixConversions
  bool matrix_per_element = false;     // cooperativeMatrixPerElementOperations
  bool matrix_get_coordinate = false;  // cooperativeMatrixGetCoordinate
  // VK_NV_cooperative_matrix2's features as the application enabled them. The NV
  // capabilities (CooperativeMatrixReductionsNV, ...) need these, not the EXT ones, even
  // where they enable the same instructions; a disabled one fails compilation naming it.
  struct MatrixNV2 {
    bool workgroup_scope = false;       // cooperativeMatrixWorkgroupScope
    bool flexible_dimensions = false;   // cooperativeMatrixFlexibleDimensions
    bool reductions = false;            // cooperativeMatrixReductions
    bool conversions = false;           // cooperativeMatrixConversions
    bool per_element = false;           // cooperativeMatrixPerElementOperations
    bool tensor_addressing = false;     // cooperativeMatrixTensorAddressing
    bool block_loads = false;           // cooperativeMatrixBlockLoads
  } nv2;
  // VK_NV_cooperative_vector's features as the application enabled them: a shader
  // declaring CooperativeVectorNV without cooperativeVector, or CooperativeVectorTrainingNV
  // without cooperativeVectorTraining, fails to compile, naming the feature.
  bool cooperative_vector = false;           // cooperativeVector
  bool cooperative_vector_training = false;  // cooperativeVectorTraining
  // What the device advertises for them. A multiply(-add) whose types, interpretations or
  // transpose match no entry, or a cooperative vector type whose component type is no
  // entry's input or result type, fails to compile naming it (Vulkan spec, runtime SPIR-V
  // rules VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10089 and
  // VUID-RuntimeSpirv-OpTypeCooperativeVector-10095). Empty: not checked, only the
  // kernels' own rules apply (the JIT on its own, as its unit tests run it); the driver
  // always passes its table.
  std::vector<VectorCombination> vector_combinations;
  // maxCooperativeVectorComponents: a longer cooperative vector type fails to compile
  // (VUID-RuntimeSpirv-maxCooperativeVectorComponents-10094). 0: the JIT's own bound.
  uint32_t max_vector_components = 0;
};

struct CompiledShader {
  SubgroupFn fn = nullptr;
  WorkgroupRangeFn range_fn = nullptr;  // null when the shader needs per-workgroup setup
  uint32_t local_size[3] = {1, 1, 1};
  uint32_t subgroup_size = 0;
  uint32_t subgroups_per_workgroup = 0;
  uint32_t shared_memory_bytes = 0;
  bool uses_workgroup_barrier = false;
  // Its frames are too large for any thread's stack (cooperative vectors, lowerer.h): the
  // workgroup runner runs its subgroups on its own fiber stacks, barriers or not.
  bool needs_fiber_stack = false;
  // Its loops over cooperative-matrix tiles yield to the next subgroup every iteration
  // (coopvk_jit_subgroup_yield): the runner runs its subgroups as fibers when there are
  // several, and it has no range_fn.
  bool interleaves_subgroups = false;
  // Some of its tile loads go through the dispatch's tile cache (a GEMM's K loop): the runner
  // takes a 2D grid's workgroups in strips of rows (WorkgroupRunner::run_range).
  bool walks_tile_cache = false;
  uint32_t pack_sites = 0;  // records of WorkgroupState::pack_memo its code uses
  std::shared_ptr<void> keep_alive;  // owns the JIT'd code (the ORC resources)
  std::vector<uint8_t> object_code;   // the relocatable object it was linked from
};

struct CompileResult {
  std::unique_ptr<CompiledShader> shader;  // null on failure
  std::string error;                       // what is unsupported or wrong, when null
};

CompileResult compile_compute(const Module& module, const CompileOptions& options);

// VkPipelineCache support: a compiled shader as bytes (native object code plus the
// metadata above) and back, without compiling again. deserialize() validates what it
// reads and fails cleanly on anything malformed or built for another CPU.
std::vector<uint8_t> serialize(const CompiledShader& shader);
CompileResult deserialize(const uint8_t* data, size_t size);

// What compiled code depends on besides its source and CompileOptions: LLVM's version and
// host CPU name and features, the kernels' arch and CPU features (they fix the packed
// operand layouts the code allocates) and the runtime ABI (kRuntimeAbi). serialize()
// records it, deserialize() refuses any other, and the driver's disk cache keys its
// entries by it. Thread-safe; cheap after the first call.
std::string host_code_signature();

// The subgroup width used when a pipeline does not require one (and reported as
// subgroupSize): 32 on AVX-512 hosts, 8 elsewhere, or COOPVK_SUBGROUP_SIZE (compiler.cpp
// says why it avoids 16 and 4).
uint32_t default_subgroup_size();
// Whether COOPVK_SUBGROUP_SIZE is set: every pipeline then runs at that width, including
// the shaders compile_compute() would otherwise run narrower (width/subgroup_width.h).
bool subgroup_size_from_environment();
// Subgroup sizes a pipeline may require (VK_EXT_subgroup_size_control).
constexpr uint32_t kMinSubgroupSize = 4;
constexpr uint32_t kMaxSubgroupSize = 64;
// The most rows or columns a cooperative matrix may have (and
// cooperativeMatrixFlexibleDimensionsMaxDimension): a matrix is one LLVM value of rows x
// <cols x T> (jit/src/coopmat/lower_coopmat.cpp), in the fibers' frames.
constexpr uint32_t kMaxMatrixDimension = 1024;

}  // namespace coopvk::jit
