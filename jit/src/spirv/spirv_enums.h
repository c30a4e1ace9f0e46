// SPIR-V enums for the lowering (the registry's spirv.hpp11) and opcode classes.
#pragma once

#include <spirv/unified1/spirv.hpp11>

#include <cstdint>

#include "coopvk/jit/spirv_reader.h"

namespace coopvk::jit {

inline const char* spv_op_name(uint32_t op) {
  const char* n = opcode_name(op);
  return n ? n : "unknown opcode";
}

inline bool spv_op_is_type(uint32_t op) {
  switch (static_cast<spv::Op>(op)) {
    case spv::Op::OpTypeVoid: case spv::Op::OpTypeBool: case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat: case spv::Op::OpTypeVector: case spv::Op::OpTypeMatrix:
    case spv::Op::OpTypeImage: case spv::Op::OpTypeSampler: case spv::Op::OpTypeSampledImage:
    case spv::Op::OpTypeArray: case spv::Op::OpTypeRuntimeArray: case spv::Op::OpTypeStruct:
    case spv::Op::OpTypeOpaque: case spv::Op::OpTypePointer: case spv::Op::OpTypeFunction:
    case spv::Op::OpTypeEvent: case spv::Op::OpTypeForwardPointer:
    case spv::Op::OpTypeCooperativeMatrixKHR: case spv::Op::OpTypeCooperativeMatrixNV:
    case spv::Op::OpTypeCooperativeVectorNV: case spv::Op::OpTypeTensorLayoutNV:
    case spv::Op::OpTypeTensorViewNV: case spv::Op::OpTypeAccelerationStructureKHR:
    case spv::Op::OpTypeRayQueryKHR: case spv::Op::OpTypeUntypedPointerKHR:
      return true;
    default:
      return false;
  }
}

inline bool spv_op_is_constant(uint32_t op) {
  switch (static_cast<spv::Op>(op)) {
    case spv::Op::OpConstantTrue: case spv::Op::OpConstantFalse: case spv::Op::OpConstant:
    case spv::Op::OpConstantComposite: case spv::Op::OpConstantNull:
    case spv::Op::OpSpecConstantTrue: case spv::Op::OpSpecConstantFalse:
    case spv::Op::OpSpecConstant: case spv::Op::OpSpecConstantComposite:
    case spv::Op::OpSpecConstantOp: case spv::Op::OpUndef:
    case spv::Op::OpConstantCompositeReplicateEXT: case spv::Op::OpSpecConstantCompositeReplicateEXT:
      return true;
    default:
      return false;
  }
}

inline bool spv_op_is_atomic(uint32_t op) {
  switch (static_cast<spv::Op>(op)) {
    case spv::Op::OpAtomicLoad: case spv::Op::OpAtomicStore: case spv::Op::OpAtomicExchange:
    case spv::Op::OpAtomicCompareExchange: case spv::Op::OpAtomicCompareExchangeWeak:
    case spv::Op::OpAtomicIIncrement: case spv::Op::OpAtomicIDecrement: case spv::Op::OpAtomicIAdd:
    case spv::Op::OpAtomicISub: case spv::Op::OpAtomicSMin: case spv::Op::OpAtomicUMin:
    case spv::Op::OpAtomicSMax: case spv::Op::OpAtomicUMax: case spv::Op::OpAtomicAnd:
    case spv::Op::OpAtomicOr: case spv::Op::OpAtomicXor: case spv::Op::OpAtomicFlagTestAndSet:
    case spv::Op::OpAtomicFlagClear: case spv::Op::OpAtomicFAddEXT: case spv::Op::OpAtomicFMinEXT:
    case spv::Op::OpAtomicFMaxEXT:
      return true;
    default:
      return false;
  }
}

}  // namespace coopvk::jit
