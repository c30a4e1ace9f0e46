// Arrays and structs holding cooperative vectors (SPV_NV_cooperative_vector, "2.2 Terms":
// a cooperative vector type may be the element of an array and a member of a struct;
// "2.16": such objects live only in Function and Private variables). Their values and
// variables are buffers nesting each vector's buffer in place (lowerer.h), so a pointer
// to an element is a pointer to an ordinary cooperative vector buffer and every
// instruction on vectors reads it as it reads a variable of its own.
#include <llvm/IR/Constants.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
}

Lowerer::CoopVecPlace Lowerer::coopvec_place(Id type_id, llvm::Value* buf, const std::vector<uint32_t>& path,
                                             const Instruction& in) {
  Id cur = type_id;
  llvm::Value* ptr = buf;
  for (size_t k = 0; k < path.size(); ++k) {
    const TypeInfo& t = type(cur);
    const uint32_t i = path[k];
    if (is_coopvec(cur)) {
      if (k + 1 != path.size() || i >= t.count) fail("composite index past a cooperative vector's components", &in);
      return {coopvec_component(cur, ptr, B.getInt32(i)), t.elem, true};
    }
    llvm::Type* bt = holds_coopvec(cur) ? coopvec_buffer_type(cur) : lane_rep_type(cur);
    if (t.op == uint16_t(Op::OpTypeStruct)) {
      if (i >= t.members.size()) fail("composite index past a struct's members", &in);
      ptr = B.CreateStructGEP(bt, ptr, i);
      cur = t.members[i];
    } else if (t.op == uint16_t(Op::OpTypeArray) || t.op == uint16_t(Op::OpTypeVector) ||
               t.op == uint16_t(Op::OpTypeMatrix)) {
      if (i >= t.count) fail("composite index past the end of an array", &in);
      ptr = B.CreateInBoundsGEP(bt, ptr, {B.getInt32(0), B.getInt32(i)});
      cur = t.elem;
    } else {
      fail("composite index into a non-composite", &in);
    }
  }
  return {ptr, cur, false};
}

void Lowerer::coopvec_put(Id t, llvm::Value* dst, Id value_id, bool component) {
  if (!component && holds_coopvec(t)) {
    coopvec_copy(t, dst, value_v(value_id).v, mask);
    return;
  }
  // A component (one lane vector) or a part without vectors, in its lane rep.
  llvm::Type* rt = lane_rep_type(t);
  llvm::Value* old = B.CreateLoad(rt, dst);
  B.CreateStore(merge_rep(t, mask, value(value_id), old), dst);
}

bool Lowerer::lower_coopvec_access_chain(const Instruction& in) {
  const auto& o = in.operands;
  const TypeInfo& bpt = type(type_of(o.at(0)));
  Id cur = bpt.op == uint16_t(Op::OpTypePointer) ? bpt.elem : 0;
  if (!cur || !holds_coopvec(cur)) return false;
  llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), N);
  // One address for all lanes, or one per lane (an index that differs between them).
  llvm::Value* ptr = value_v(o[0]).v;
  auto lanes_of = [&](llvm::Value* p) { return p->getType()->isVectorTy() ? p : B.CreateVectorSplat(N, p); };
  // An index past the end is undefined (SPIR-V); it still stays inside the object.
  auto clamp = [&](llvm::Value* i, uint32_t n) {
    llvm::Value* last = i->getType()->isVectorTy() ? B.CreateVectorSplat(N, B.getInt64(n - 1)) : B.getInt64(n - 1);
    return B.CreateSelect(B.CreateICmpULE(i, last), i, last);
  };
  size_t k = 1;
  for (; k < o.size() && holds_coopvec(cur) && !is_coopvec(cur); ++k) {
    const TypeInfo& t = type(cur);
    llvm::Type* bt = coopvec_buffer_type(cur);
    if (t.op == uint16_t(Op::OpTypeStruct)) {
      uint64_t member = constant_u64(o[k]);
      if (member >= t.members.size()) fail("struct member index out of range", &in);
      uint64_t off = M->getDataLayout().getStructLayout(llvm::cast<llvm::StructType>(bt))->getElementOffset(unsigned(member));
      ptr = B.CreateGEP(B.getInt8Ty(), ptr, B.getInt64(off));
      cur = t.members[member];
      continue;
    }
    // An array (runtime arrays of vectors are refused with their type).
    uint64_t esz = M->getDataLayout().getTypeAllocSize(bt->getArrayElementType());
    Val iv = value_v(o[k]);
    llvm::Value* i = clamp(B.CreateZExtOrTrunc(iv.v, iv.uniform ? static_cast<llvm::Type*>(B.getInt64Ty()) : i64v), t.count);
    if (iv.uniform) ptr = B.CreateGEP(B.getInt8Ty(), ptr, B.CreateMul(i, B.getInt64(esz)));
    else ptr = B.CreateGEP(B.getInt8Ty(), lanes_of(ptr), B.CreateMul(i, B.CreateVectorSplat(N, B.getInt64(esz))));
    cur = t.elem;
  }
  const bool per_lane = ptr->getType()->isVectorTy();
  if (k < o.size() && is_coopvec(cur)) {
    // One component: lane l's is i * N + l elements into the lane's vector (lowerer.h).
    if (k + 1 != o.size()) fail("an access chain into a cooperative vector takes one index past it", &in);
    const TypeInfo& t = type(cur);
    llvm::Value* idx = clamp(B.CreateZExtOrTrunc(value(o[k]), i64v), t.count);
    uint64_t esz = M->getDataLayout().getTypeAllocSize(scalar_type(t.elem));
    llvm::Value* elems = B.CreateAdd(B.CreateMul(idx, B.CreateVectorSplat(N, B.getInt64(N))), B.CreateZExt(lane_index(), i64v));
    define_v(in.result, {B.CreateGEP(B.getInt8Ty(), lanes_of(ptr), B.CreateMul(elems, B.CreateVectorSplat(N, B.getInt64(esz)))),
                         false});
    return true;
  }
  if (holds_coopvec(cur)) {
    define_v(in.result, {ptr, !per_lane});
    if (!per_lane) F.rep_ptrs.insert(in.result);
    return true;
  }
  // A member without vectors inside: its lane rep, reached by uniform indices like any
  // rep-layout variable (lower_memory.cpp).
  if (per_lane)
    fail("an index that differs between invocations, into an aggregate holding cooperative vectors, reaches a "
         "member without them",
         &in);
  std::vector<llvm::Value*> idx{B.getInt32(0)};
  const Id part = cur;
  for (; k < o.size(); ++k) {
    const TypeInfo& t = type(cur);
    if (t.op == uint16_t(Op::OpTypeStruct)) {
      uint64_t member = constant_u64(o[k]);
      if (member >= t.members.size()) fail("struct member index out of range", &in);
      idx.push_back(B.getInt32(uint32_t(member)));
      cur = t.members[member];
      continue;
    }
    if (t.op != uint16_t(Op::OpTypeArray) && t.op != uint16_t(Op::OpTypeVector) && t.op != uint16_t(Op::OpTypeMatrix))
      fail("access chain indexes into a non-composite", &in);
    Val iv = value_v(o[k]);
    if (!iv.uniform)
      fail("an index that differs between invocations, into a member of an aggregate holding cooperative vectors", &in);
    idx.push_back(clamp(B.CreateZExtOrTrunc(iv.v, B.getInt64Ty()), t.count ? t.count : 1));
    cur = t.elem;
  }
  F.rep_ptrs.insert(in.result);
  define_v(in.result, {B.CreateGEP(lane_rep_type(part), ptr, idx), true});
  return true;
}

bool Lowerer::lower_coopvec_aggregate(const Instruction& in) {
  const auto& o = in.operands;
  auto aggregate = [&](Id t) { return t && holds_coopvec(t) && !is_coopvec(t); };
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpCompositeConstruct: {
      const Id rt = in.result_type;
      if (!aggregate(rt)) return false;
      llvm::Value* out = coopvec_buffer(in.result, rt);
      for (uint32_t k = 0; k < o.size(); ++k) {
        CoopVecPlace p = coopvec_place(rt, out, {k}, in);
        coopvec_put(p.type, p.ptr, o[k], false);
      }
      define_v(in.result, {out, true});
      return true;
    }
    case Op::OpCompositeExtract: {
      const Id vt = type_of(o.at(0));
      if (!aggregate(vt)) return false;
      CoopVecPlace p = coopvec_place(vt, value_v(o[0]).v, std::vector<uint32_t>(o.begin() + 1, o.end()), in);
      if (p.type != in.result_type) fail("OpCompositeExtract whose result type is not the type at its indices", &in);
      if (!p.component && holds_coopvec(p.type)) {
        // A copy: the aggregate's buffer is rewritten when its definition runs again.
        llvm::Value* out = coopvec_buffer(in.result, in.result_type);
        coopvec_copy(in.result_type, out, p.ptr, mask);
        define_v(in.result, {out, true});
      } else {
        define_v(in.result, {B.CreateLoad(lane_rep_type(p.type), p.ptr), false});
      }
      return true;
    }
    case Op::OpCompositeInsert: {
      const Id rt = in.result_type;
      if (!aggregate(rt)) return false;
      llvm::Value* out = coopvec_buffer(in.result, rt);
      coopvec_copy(rt, out, value_v(o.at(1)).v, mask);
      CoopVecPlace p = coopvec_place(rt, out, std::vector<uint32_t>(o.begin() + 2, o.end()), in);
      if (p.type != type_of(o[0])) fail("OpCompositeInsert of an object that is not of the type at its indices", &in);
      coopvec_put(p.type, p.ptr, o[0], p.component);
      define_v(in.result, {out, true});
      return true;
    }
    default:
      return false;
  }
}

}  // namespace coopvk::jit
