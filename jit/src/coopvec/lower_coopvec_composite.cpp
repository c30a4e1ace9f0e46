// Cooperative vectors as composites and in variables (SPV_NV_cooperative_vector, "2.2
// Terms": a cooperative vector "can be used as a composite for all operations that act on
// composite types ... OpVectorExtractDynamic and OpVectorInsertDynamic, but not
// OpVectorShuffle"), and Function / Private variables holding one ("2.16": they may only
// be allocated there). Buffers and variables share the layout of lowerer.h.
#include <llvm/IR/Constants.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
}

bool Lowerer::lower_coopvec_composite(const Instruction& in) {
  const auto& o = in.operands;
  auto lane_of = [&](Id id) { return value(id); };  // a scalar, per lane
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpCompositeConstruct: {
      // One scalar per component (check_coopvec_types); a long vector is a long instruction.
      llvm::Value* out = coopvec_buffer(in.result, in.result_type);
      for (uint32_t i = 0; i < o.size(); ++i) coopvec_store_component(in.result_type, out, B.getInt32(i), lane_of(o[i]));
      define_v(in.result, {out, true});
      return true;
    }
    case Op::OpCompositeConstructReplicateEXT: {
      llvm::Value* out = coopvec_buffer(in.result, in.result_type);
      llvm::Value* v = lane_of(o.at(0));
      for_each_component(type(in.result_type).count,
                         [&](llvm::Value* i) { coopvec_store_component(in.result_type, out, i, v); });
      define_v(in.result, {out, true});
      return true;
    }
    case Op::OpCompositeExtract: {
      Id vt = type_of(o.at(0));
      llvm::Type* lane_t = coopvec_buffer_type(vt)->getArrayElementType();
      define_v(in.result, {B.CreateLoad(lane_t, coopvec_component(vt, value_v(o[0]).v, B.getInt32(o.at(1)))), false});
      return true;
    }
    case Op::OpCompositeInsert: {
      llvm::Value* out = coopvec_buffer(in.result, in.result_type);
      coopvec_copy(in.result_type, out, value_v(o.at(1)).v, mask);
      coopvec_store_component(in.result_type, out, B.getInt32(o.at(2)), lane_of(o[0]));
      define_v(in.result, {out, true});
      return true;
    }
    case Op::OpVectorExtractDynamic:
    case Op::OpVectorInsertDynamic: {
      // Each lane's own component: lane l of component i is at i * N + l elements.
      bool insert = in.opcode == uint16_t(Op::OpVectorInsertDynamic);
      Id vt = insert ? in.result_type : type_of(o.at(0));
      const TypeInfo& t = type(vt);
      llvm::Type* et = scalar_type(t.elem);
      uint64_t esz = M->getDataLayout().getTypeAllocSize(et);
      llvm::Value* idx = B.CreateZExtOrTrunc(value(o.at(insert ? 2 : 1)), llvm::FixedVectorType::get(B.getInt64Ty(), N));
      // An index past the end is undefined (SPIR-V); it must still not leave the buffer.
      llvm::Value* count = B.CreateVectorSplat(N, B.getInt64(t.count));
      llvm::Value* ok = B.CreateICmpULT(idx, count);
      idx = B.CreateSelect(ok, idx, llvm::Constant::getNullValue(idx->getType()));
      llvm::Type* i64v = idx->getType();
      llvm::Value* elems = B.CreateAdd(B.CreateMul(idx, B.CreateVectorSplat(N, B.getInt64(N))),
                                       B.CreateZExt(lane_index(), i64v));
      llvm::Value* buf = insert ? coopvec_buffer(in.result, in.result_type) : value_v(o[0]).v;
      if (insert) coopvec_copy(vt, buf, value_v(o[0]).v, mask);
      llvm::Value* addrs = B.CreateGEP(B.getInt8Ty(), B.CreateVectorSplat(N, buf),
                                       B.CreateMul(elems, B.CreateVectorSplat(N, B.getInt64(esz))));
      if (insert) {
        B.CreateMaskedScatter(lane_of(o[1]), addrs, llvm::Align(esz), B.CreateAnd(mask, ok));
        define_v(in.result, {buf, true});
      } else {
        llvm::Type* lane_t = llvm::FixedVectorType::get(et, N);
        define_v(in.result, {B.CreateMaskedGather(lane_t, addrs, llvm::Align(esz), mask, llvm::Constant::getNullValue(lane_t)), false});
      }
      return true;
    }
    case Op::OpCopyObject:
    case Op::OpCopyLogical: {
      // A copy, not the same buffer: the source's definition may run again while the copy
      // is still needed (a copy made in a branch of a loop).
      llvm::Value* out = coopvec_buffer(in.result, in.result_type);
      coopvec_copy(in.result_type, out, value_v(o.at(0)).v, mask);
      define_v(in.result, {out, true});
      return true;
    }
    default:
      return false;
  }
}

// ---- variables -----------------------------------------------------------------------------

bool Lowerer::lower_coopvec_variable(const Instruction& in) {
  const auto& o = in.operands;
  auto pointee_of = [&](Id pointer) -> Id {
    const TypeInfo& pt = type(type_of(pointer));
    return pt.op == uint16_t(Op::OpTypePointer) ? pt.elem : 0;
  };
  auto check_storage = [&](Id pointer) {
    uint32_t sc = type(type_of(pointer)).storage;
    if (sc != uint32_t(spv::StorageClass::Function) && sc != uint32_t(spv::StorageClass::Private))
      fail("cooperative vectors can only be held by Function or Private variables", &in);
  };
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpVariable: {
      Id pointee = type(in.result_type).elem;
      if (!holds_coopvec(pointee)) return false;
      check_storage(in.result);
      llvm::Value* buf = coopvec_buffer(in.result, pointee);
      if (o.size() > 1) coopvec_copy(pointee, buf, value_v(o[1]).v, nullptr);
      F.rep_ptrs.insert(in.result);
      define_v(in.result, {buf, true});
      return true;
    }
    case Op::OpAccessChain:
    case Op::OpInBoundsAccessChain:
      return lower_coopvec_access_chain(in);
    case Op::OpLoad: {
      if (!holds_coopvec(in.result_type)) return false;
      if (pointee_of(o.at(0)) != in.result_type) fail("OpLoad of a cooperative vector through a pointer to another type", &in);
      check_storage(o[0]);
      llvm::Value* out = coopvec_buffer(in.result, in.result_type);
      coopvec_copy(in.result_type, out, value_v(o[0]).v, mask);  // per-lane pointers: a gather
      define_v(in.result, {out, true});
      return true;
    }
    case Op::OpStore: {
      Id vt = type_of(o.at(1));
      if (!holds_coopvec(vt)) return false;
      if (pointee_of(o.at(0)) != vt) fail("OpStore of a cooperative vector through a pointer to another type", &in);
      check_storage(o[0]);
      coopvec_copy(vt, value_v(o[0]).v, value_v(o[1]).v, mask);
      return true;
    }
    case Op::OpCopyMemory: {
      Id vt = pointee_of(o.at(0));
      if (!holds_coopvec(vt)) return false;
      if (pointee_of(o.at(1)) != vt) fail("OpCopyMemory of a cooperative vector between pointers to different types", &in);
      check_storage(o[0]);
      check_storage(o[1]);
      coopvec_copy(vt, value_v(o[0]).v, value_v(o[1]).v, mask);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace coopvk::jit
