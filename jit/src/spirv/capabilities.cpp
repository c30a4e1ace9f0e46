// The capabilities the lowering implements. THE LOWERING OWNS THIS TABLE: add a
// capability here only together with the code (and tests) that handle every
// instruction, type and decoration it enables. read_spirv() rejects a module that
// declares anything not listed, with a message naming the capability.
#include <spirv/unified1/spirv.hpp11>

#include "coopvk/jit/spirv_reader.h"

namespace coopvk::jit {

namespace {
using C = spv::Capability;
constexpr C kSupported[] = {
    C::Shader,
    C::Matrix,
    C::Int8,
    C::Int16,
    C::Int64,
    C::Float16,
    C::Float64,
    C::StorageBuffer16BitAccess,
    C::UniformAndStorageBuffer16BitAccess,
    C::StoragePushConstant16,
    C::StorageBuffer8BitAccess,
    C::UniformAndStorageBuffer8BitAccess,
    C::StoragePushConstant8,
    C::VulkanMemoryModel,
    C::VulkanMemoryModelDeviceScope,
    C::PhysicalStorageBufferAddresses,
    C::GroupNonUniform,
    C::GroupNonUniformVote,
    C::GroupNonUniformArithmetic,
    C::GroupNonUniformBallot,
    C::GroupNonUniformShuffle,
    C::GroupNonUniformShuffleRelative,
    C::GroupNonUniformClustered,
    C::DotProduct,
    C::DotProductInput4x8Bit,
    C::DotProductInput4x8BitPacked,
    C::DotProductInputAll,
    C::Int64Atomics,
    C::CooperativeMatrixKHR,
    C::CooperativeMatrixNV,  // rewritten into the KHR forms (nv_cooperative_matrix.h)
    C::BFloat16TypeKHR,
    C::BFloat16DotProductKHR,
    C::BFloat16CooperativeMatrixKHR,
    C::Float8EXT,
    C::Float8CooperativeMatrixEXT,
    C::CooperativeMatrixReductionsEXT,
    C::CooperativeMatrixConversionsEXT,
    C::CooperativeMatrixPerElementOperationsEXT,
    C::CooperativeMatrixGetCoordinateEXT,
    // VK_NV_cooperative_matrix2's forms of the same instructions, at subgroup scope
    // (jit/src/coopmat/lower_coopmat_ext.cpp). ReductionsNV and PerElementOperationsNV
    // share the EXT capabilities' values; ConversionsNV also enables TransposeNV.
    C::CooperativeMatrixConversionsNV,
    // Tensor layouts and views, and loads and stores through them (jit/src/coopmat/lower_tensor.cpp).
    C::TensorAddressingNV,
    C::CooperativeMatrixTensorAddressingNV,
    C::CooperativeMatrixBlockLoadsNV,  // decode functions on tensor loads
    C::CooperativeVectorNV,
    C::CooperativeVectorTrainingNV,
    // Composite constants and constructs of one replicated value: glslang's way to write
    // a cooperative vector of one value (SPV_NV_cooperative_vector, "Issues" 1).
    C::ReplicatedCompositesEXT,
};
}  // namespace

bool capability_supported(uint32_t capability) {
  for (C c : kSupported)
    if (static_cast<uint32_t>(c) == capability) return true;
  return false;
}

}  // namespace coopvk::jit
