// OpCooperativeVectorLoadNV / OpCooperativeVectorStoreNV (SPV_NV_cooperative_vector, "3.42.8
// Memory Instructions"): each invocation moves its vector's components to or from
// Pointer + Offset bytes, component j at j * sizeof(component) after it ("Any ArrayStride
// decoration on Pointer is ignored"). Component j of all lanes is one gather or scatter
// (one scalar load when every lane reads the same address). With robust buffer access,
// a component outside the bound range reads zero and is not written (Vulkan, "Robust
// Buffer Access"), component by component, as a vector may straddle the end.
//
// Memory operands: the alignment they promise is not needed (components are accessed at
// their natural alignment; VUID-RuntimeSpirv-OpCooperativeVectorLoadNV-10099's 16 bytes
// is the application's promise, not ours to check), and the visibility operands mean
// nothing more than program order on this implementation's coherent memory.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
}

bool Lowerer::lower_coopvec_memory(const Instruction& in) {
  const auto& o = in.operands;
  const bool load = in.opcode == uint16_t(Op::OpCooperativeVectorLoadNV);
  const char* name = load ? "OpCooperativeVectorLoadNV" : "OpCooperativeVectorStoreNV";
  if (o.size() < (load ? 2u : 3u)) fail(std::string(name) + " needs a pointer, an offset" + (load ? "" : " and an object"), &in);
  const Id pointer = o[0], offset = o[1];
  const Id vt = load ? in.result_type : type_of(o[2]);
  if (!is_coopvec(vt)) fail(std::string(name) + (load ? " must produce" : " must store") + " a cooperative vector", &in);
  const TypeInfo& pt = type(type_of(pointer));
  if (pt.op != uint16_t(Op::OpTypePointer)) fail(std::string(name) + ": 'Pointer' is not a pointer", &in);
  switch (static_cast<spv::StorageClass>(pt.storage)) {
    case spv::StorageClass::StorageBuffer: case spv::StorageClass::Workgroup:
    case spv::StorageClass::PhysicalStorageBuffer: case spv::StorageClass::CrossWorkgroup:
      break;
    default:
      fail(std::string(name) + ": 'Pointer' must be in StorageBuffer, Workgroup or PhysicalStorageBuffer storage", &in);
  }
  const TypeInfo& ot = type(type_of(offset));
  if (ot.op != uint16_t(Op::OpTypeInt) || ot.width != 32) fail(std::string(name) + ": 'Offset' must be a 32-bit integer", &in);

  const TypeInfo& t = type(vt);
  llvm::Type* et = scalar_type(t.elem);
  const uint64_t esz = M->getDataLayout().getTypeAllocSize(et);
  llvm::Type* lane_t = llvm::FixedVectorType::get(et, N);
  const llvm::Align align(esz);
  Val p = value_v(pointer), off = value_v(offset);
  CheckingScope scope(*this, pointer);
  const bool bounds = scope.bounds.has_value();
  llvm::Value* buf = load ? coopvec_buffer(in.result, vt) : value_v(o[2]).v;
  // Offsets are byte counts: unsigned.
  if (p.uniform && off.uniform && !bounds) {
    llvm::Value* base = B.CreateGEP(B.getInt8Ty(), p.v, B.CreateZExt(off.v, B.getInt64Ty()));
    for_each_component(t.count, [&](llvm::Value* i) {
      llvm::Value* a = B.CreateGEP(et, base, i);
      if (load) {
        // One address for the subgroup: one load (blocks run only with a lane active).
        coopvec_store_component(vt, buf, i, B.CreateVectorSplat(N, B.CreateAlignedLoad(et, a, align)));
      } else {
        llvm::Value* v = B.CreateLoad(lane_t, coopvec_component(vt, buf, i));
        // Every lane writes the same place; the last active lane's value lands, as a
        // scatter would leave it.
        llvm::Value* bits = B.CreateBitCast(mask, B.getIntNTy(N));
        llvm::Value* last = B.CreateSub(B.getIntN(N, N - 1), B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, bits, B.getTrue()));
        B.CreateAlignedStore(B.CreateExtractElement(v, B.CreateZExtOrTrunc(last, B.getInt32Ty())), a, align);
      }
    });
  } else {
    llvm::Value* ptrs = p.uniform ? B.CreateVectorSplat(N, p.v) : p.v;
    llvm::Value* offs = off.uniform ? B.CreateVectorSplat(N, off.v) : off.v;
    llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), N);
    llvm::Value* base = B.CreateGEP(B.getInt8Ty(), ptrs, B.CreateZExt(offs, i64v));
    llvm::BasicBlock* done = nullptr;
    if (!bounds && N > 1) {
      // The usual case: every lane running, lane l's vector at base + l * d (one after
      // another when d is the vector's size). One transpose of the lanes x components block
      // then replaces a gather or scatter per component; a store needs rows that do not
      // overlap (else the scatter's lane order decides).
      llvm::Value* addrs = B.CreatePtrToInt(base, i64v);
      llvm::Value* a0 = B.CreateExtractElement(addrs, uint64_t(0));
      llvm::Value* d = B.CreateSub(B.CreateExtractElement(addrs, uint64_t(1)), a0);
      llvm::Value* want = B.CreateAdd(B.CreateVectorSplat(N, a0),
                                      B.CreateMul(B.CreateZExt(lane_index(), i64v), B.CreateVectorSplat(N, d)));
      llvm::Value* ok = B.CreateAnd(B.CreateAndReduce(B.CreateICmpEQ(addrs, want)), B.CreateAndReduce(mask));
      if (!load) {
        llvm::Value* row = B.getInt64(int64_t(t.count * esz));
        ok = B.CreateAnd(ok, B.CreateOr(B.CreateICmpSGE(d, row), B.CreateICmpSLE(d, B.CreateNeg(row))));
      }
      llvm::Function* fn = B.GetInsertBlock()->getParent();
      auto* fast = llvm::BasicBlock::Create(C, "cv.transpose", fn);
      auto* slow = llvm::BasicBlock::Create(C, "cv.lanes", fn);
      done = llvm::BasicBlock::Create(C, "cv.moved", fn);
      B.CreateCondBr(ok, fast, slow);
      B.SetInsertPoint(fast);
      llvm::Type* i32 = B.getInt32Ty();
      llvm::Type* i64 = B.getInt64Ty();
      llvm::Type* ptr = B.getPtrTy();
      llvm::FunctionCallee tr = M_get_function(kTransposeSymbol, llvm::FunctionType::get(B.getVoidTy(), {ptr, i64, ptr, i64, i32, i32, i32}, false));
      llvm::Value* mem = B.CreateIntToPtr(a0, ptr);
      llvm::Value* lanes_stride = B.getInt64(int64_t(N * esz));
      if (load) B.CreateCall(tr, {mem, d, buf, lanes_stride, B.getInt32(N), B.getInt32(t.count), B.getInt32(uint32_t(esz))});
      else B.CreateCall(tr, {buf, lanes_stride, mem, d, B.getInt32(t.count), B.getInt32(N), B.getInt32(uint32_t(esz))});
      B.CreateBr(done);
      B.SetInsertPoint(slow);
    }
    for_each_component(t.count, [&](llvm::Value* i) {
      llvm::Value* addrs = B.CreateGEP(et, base, B.CreateVectorSplat(N, B.CreateZExt(i, B.getInt64Ty())));
      llvm::Value* on = bounds ? B.CreateAnd(mask, in_bounds(addrs, esz)) : mask;
      if (load) {
        llvm::Value* v = B.CreateMaskedGather(lane_t, addrs, align, on, llvm::Constant::getNullValue(lane_t));
        coopvec_store_component(vt, buf, i, v);
      } else {
        B.CreateMaskedScatter(B.CreateLoad(lane_t, coopvec_component(vt, buf, i)), addrs, align, on);
      }
    });
    if (done) {
      B.CreateBr(done);
      B.SetInsertPoint(done);
    }
  }
  if (load) define_v(in.result, {buf, true});
  return true;
}

}  // namespace coopvk::jit
