// Subgroup operations, atomics and barriers. A subgroup is one LLVM vector, so subgroup
// operations are vector reductions and lane permutations over the active lanes.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;

}  // namespace

// Runs body(lane) for every active lane, in lane order, as an LLVM loop.
void Lowerer::for_active_lanes(llvm::Value* lanes_mask, const std::function<void(llvm::Value*)>& body) {
  llvm::Function* f = B.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = B.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(C, "lanes", f);
  auto* active = llvm::BasicBlock::Create(C, "lane.active", f);
  auto* next = llvm::BasicBlock::Create(C, "lane.next", f);
  auto* done = llvm::BasicBlock::Create(C, "lanes.done", f);
  B.CreateBr(loop);
  B.SetInsertPoint(loop);
  llvm::PHINode* lane = B.CreatePHI(B.getInt32Ty(), 2);
  lane->addIncoming(B.getInt32(0), pre);
  B.CreateCondBr(B.CreateExtractElement(lanes_mask, lane), active, next);
  B.SetInsertPoint(active);
  body(lane);
  B.CreateBr(next);
  B.SetInsertPoint(next);
  llvm::Value* inc = B.CreateAdd(lane, B.getInt32(1));
  lane->addIncoming(inc, next);
  B.CreateCondBr(B.CreateICmpULT(inc, B.getInt32(N)), loop, done);
  B.SetInsertPoint(done);
}

// Memory ordering. The Vulkan memory model does not support sequentially consistent
// atomics and barriers: SequentiallyConsistent is treated as AcquireRelease (Vulkan spec,
// "Memory Model" appendix, "Memory Semantics"), so barriers and atomics use LLVM's
// acquire / release orderings. On x86 (TSO) an acq_rel fence emits no instruction, only an ordering point for
// the compiler; a seq_cst one is an MFENCE, which drains the store buffer at every barrier
// (a third of a shared-memory reduction's time). The subgroups of a workgroup are fibers of
// one OS thread, so a workgroup barrier needs no hardware fence between them either.
void Lowerer::emit_workgroup_barrier() {
  constexpr auto order = llvm::AtomicOrdering::AcquireRelease;
  B.CreateFence(order);
  llvm::FunctionCallee f = M->getOrInsertFunction("coopvk_jit_workgroup_barrier", B.getVoidTy(), B.getPtrTy());
  B.CreateCall(f, {ctx_field(kCtxWorkgroup)});
  B.CreateFence(order);
}

bool Lowerer::lower_barrier(const Instruction& in) {
  const auto& o = in.operands;
  constexpr auto order = llvm::AtomicOrdering::AcquireRelease;
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpControlBarrier: {
      uint64_t exec = constant_u64(o.at(0));
      if (exec == uint64_t(spv::Scope::Workgroup)) {
        uses_barrier = true;
        emit_workgroup_barrier();
      } else if (exec != uint64_t(spv::Scope::Subgroup) && exec != uint64_t(spv::Scope::Invocation)) {
        fail("control barrier with execution scope " + std::to_string(exec) + " is not supported", &in);
      } else {
        B.CreateFence(order);
      }
      return true;  // a subgroup's lanes run in lockstep already
    }
    case Op::OpMemoryBarrier:
      B.CreateFence(order);
      return true;
    default:
      return false;
  }
}

bool Lowerer::lower_atomic(const Instruction& in) {
  const auto& o = in.operands;
  auto op = static_cast<Op>(in.opcode);
  std::optional<llvm::AtomicRMWInst::BinOp> rmw;
  switch (op) {
    case Op::OpAtomicExchange: rmw = llvm::AtomicRMWInst::Xchg; break;
    case Op::OpAtomicIAdd: case Op::OpAtomicIIncrement: rmw = llvm::AtomicRMWInst::Add; break;
    case Op::OpAtomicISub: case Op::OpAtomicIDecrement: rmw = llvm::AtomicRMWInst::Sub; break;
    case Op::OpAtomicSMin: rmw = llvm::AtomicRMWInst::Min; break;
    case Op::OpAtomicUMin: rmw = llvm::AtomicRMWInst::UMin; break;
    case Op::OpAtomicSMax: rmw = llvm::AtomicRMWInst::Max; break;
    case Op::OpAtomicUMax: rmw = llvm::AtomicRMWInst::UMax; break;
    case Op::OpAtomicAnd: rmw = llvm::AtomicRMWInst::And; break;
    case Op::OpAtomicOr: rmw = llvm::AtomicRMWInst::Or; break;
    case Op::OpAtomicXor: rmw = llvm::AtomicRMWInst::Xor; break;
    case Op::OpAtomicFAddEXT: rmw = llvm::AtomicRMWInst::FAdd; break;
    case Op::OpAtomicFMinEXT: rmw = llvm::AtomicRMWInst::FMin; break;
    case Op::OpAtomicFMaxEXT: rmw = llvm::AtomicRMWInst::FMax; break;
    case Op::OpAtomicLoad: case Op::OpAtomicStore: case Op::OpAtomicCompareExchange:
      break;
    default:
      return false;
  }
  // Every lane's operation is one host atomic, in lane order: correct under any
  // contention, and what the spec's per-invocation atomics mean.
  llvm::Value* ptrs = value(o.at(0));
  llvm::Type* elem = nullptr;
  llvm::Value* operand = nullptr;
  llvm::Value* comparator = nullptr;
  if (op == Op::OpAtomicStore) {
    operand = value(o.at(3));
  } else if (op == Op::OpAtomicCompareExchange) {
    operand = value(o.at(5));
    comparator = value(o.at(6));
  } else if (op == Op::OpAtomicIIncrement || op == Op::OpAtomicIDecrement) {
    operand = llvm::ConstantInt::get(rep_type(in.result_type), 1);
  } else if (op != Op::OpAtomicLoad) {
    operand = value(o.at(3));
  }
  elem = (operand ? operand->getType() : rep_type(in.result_type));
  elem = llvm::cast<llvm::VectorType>(elem)->getElementType();
  llvm::AllocaInst* result = in.result ? entry_alloca(lanes(elem)) : nullptr;
  if (result) B.CreateStore(llvm::Constant::getNullValue(lanes(elem)), result);
  // The strongest ordering each kind of access can have (see lower_barrier on why not seq_cst).
  const auto order = op == Op::OpAtomicLoad    ? llvm::AtomicOrdering::Acquire
                     : op == Op::OpAtomicStore ? llvm::AtomicOrdering::Release
                                               : llvm::AtomicOrdering::AcquireRelease;
  llvm::Align align(elem->getPrimitiveSizeInBits() / 8);
  for_active_lanes(mask, [&](llvm::Value* lane) {
    llvm::Value* p = B.CreateExtractElement(ptrs, lane);
    llvm::Value* r = nullptr;
    if (op == Op::OpAtomicLoad) {
      auto* ld = B.CreateAlignedLoad(elem, p, align);
      ld->setAtomic(order);
      r = ld;
    } else if (op == Op::OpAtomicStore) {
      auto* st = B.CreateAlignedStore(B.CreateExtractElement(operand, lane), p, align);
      st->setAtomic(order);
    } else if (op == Op::OpAtomicCompareExchange) {
      auto* cx = B.CreateAtomicCmpXchg(p, B.CreateExtractElement(comparator, lane), B.CreateExtractElement(operand, lane),
                                       align, order, llvm::AtomicOrdering::Acquire);
      r = B.CreateExtractValue(cx, 0);
    } else {
      r = B.CreateAtomicRMW(*rmw, p, B.CreateExtractElement(operand, lane), align, order);
    }
    if (r) {
      llvm::Value* cur = B.CreateLoad(lanes(elem), result);
      B.CreateStore(B.CreateInsertElement(cur, r, lane), result);
    }
  });
  if (in.result) define(in.result, B.CreateLoad(lanes(elem), result));
  return true;
}

bool Lowerer::lower_subgroup(const Instruction& in) {
  auto op = static_cast<Op>(in.opcode);
  if (in.opcode < uint16_t(Op::OpGroupNonUniformElect) || in.opcode > uint16_t(Op::OpGroupNonUniformQuadSwap))
    return false;
  const auto& o = in.operands;
  if (constant_u64(o.at(0)) != uint64_t(spv::Scope::Subgroup))
    fail("group operations are supported at Subgroup scope only", &in);
  llvm::Type* bits_t = B.getIntNTy(N);
  llvm::Value* first_lane = first_active_lane(mask);
  auto broadcast_lane = [&](llvm::Value* v, llvm::Value* lane) {
    return map_leaves(v, [&](llvm::Value* x) { return splat(B.CreateExtractElement(x, lane)); });
  };
  // Per-lane gather from other lanes: r[l] = v[idx[l]] (idx wrapped into the subgroup).
  auto permute = [&](llvm::Value* v, llvm::Value* idx) {
    idx = B.CreateAnd(idx, splat(B.getInt32(N - 1)));
    return map_leaves(v, [&](llvm::Value* x) {
      llvm::Value* r = llvm::PoisonValue::get(x->getType());
      for (uint32_t l = 0; l < N; ++l)
        r = B.CreateInsertElement(r, B.CreateExtractElement(x, B.CreateExtractElement(idx, l)), l);
      return r;
    });
  };
  auto ballot_vec = [&](llvm::Value* pred) {
    llvm::Value* b = B.CreateZExt(B.CreateBitCast(B.CreateAnd(pred, mask), bits_t), B.getInt128Ty());
    llvm::Type* i32v = lanes(B.getInt32Ty());
    llvm::Value* r = llvm::PoisonValue::get(llvm::ArrayType::get(i32v, 4));
    for (unsigned k = 0; k < 4; ++k)
      r = B.CreateInsertValue(r, splat(B.CreateTrunc(B.CreateLShr(b, llvm::ConstantInt::get(B.getInt128Ty(), 32 * k)), B.getInt32Ty())), k);
    return r;
  };
  // The ballot operand (uvec4) as one N-bit integer (read from the first active lane).
  auto ballot_bits = [&](llvm::Value* v) {
    llvm::Value* acc = llvm::ConstantInt::get(B.getInt128Ty(), 0);
    for (unsigned k = 0; k < 4; ++k) {
      llvm::Value* w = B.CreateZExt(B.CreateExtractElement(B.CreateExtractValue(v, k), first_lane), B.getInt128Ty());
      acc = B.CreateOr(acc, B.CreateShl(w, llvm::ConstantInt::get(B.getInt128Ty(), 32 * k)));
    }
    return B.CreateTrunc(acc, bits_t);
  };
  switch (op) {
    case Op::OpGroupNonUniformElect:
      define(in.result, B.CreateICmpEQ(lane_index(), splat(first_lane)));
      return true;
    case Op::OpGroupNonUniformAll:
      define(in.result, splat(B.CreateAndReduce(B.CreateOr(value(o.at(1)), B.CreateNot(mask)))));
      return true;
    case Op::OpGroupNonUniformAny:
      define(in.result, splat(B.CreateOrReduce(B.CreateAnd(value(o.at(1)), mask))));
      return true;
    case Op::OpGroupNonUniformAllEqual: {
      llvm::Value* v = value(o.at(1));
      llvm::Value* first = broadcast_lane(v, first_lane);
      llvm::Value* eq = nullptr;
      map_leaves2(v, first, [&](llvm::Value* a, llvm::Value* b) {
        llvm::Value* e = a->getType()->isFPOrFPVectorTy() ? B.CreateFCmpOEQ(a, b) : B.CreateICmpEQ(a, b);
        eq = eq ? B.CreateAnd(eq, e) : e;
        return a;
      });
      define(in.result, splat(B.CreateAndReduce(B.CreateOr(eq, B.CreateNot(mask)))));
      return true;
    }
    case Op::OpGroupNonUniformBroadcast:
      define(in.result, broadcast_lane(value(o.at(1)), B.CreateAnd(B.CreateExtractElement(
                                                             B.CreateZExtOrTrunc(value(o.at(2)), lanes(B.getInt32Ty())), first_lane),
                                                         B.getInt32(N - 1))));
      return true;
    case Op::OpGroupNonUniformBroadcastFirst:
      define(in.result, broadcast_lane(value(o.at(1)), first_lane));
      return true;
    case Op::OpGroupNonUniformBallot:
      define(in.result, ballot_vec(value(o.at(1))));
      return true;
    case Op::OpGroupNonUniformInverseBallot: {
      llvm::Value* bits = ballot_bits(value(o.at(1)));
      llvm::Value* lane_bits = B.CreateShl(splat(llvm::ConstantInt::get(bits_t, 1)), B.CreateZExtOrTrunc(lane_index(), lanes(bits_t)));
      define(in.result, B.CreateICmpNE(B.CreateAnd(splat(bits), lane_bits), llvm::Constant::getNullValue(lanes(bits_t))));
      return true;
    }
    case Op::OpGroupNonUniformBallotBitExtract: {
      llvm::Value* bits = ballot_bits(value(o.at(1)));
      llvm::Value* idx = B.CreateZExtOrTrunc(value(o.at(2)), lanes(bits_t));
      llvm::Value* bit = B.CreateLShr(splat(bits), idx);
      define(in.result, B.CreateTrunc(bit, lanes(B.getInt1Ty())));
      return true;
    }
    case Op::OpGroupNonUniformBallotBitCount: {
      uint32_t gop = o.at(1);
      llvm::Value* bits = splat(ballot_bits(value(o.at(2))));
      llvm::Value* lane = B.CreateZExtOrTrunc(lane_index(), lanes(bits_t));
      llvm::Value* one = splat(llvm::ConstantInt::get(bits_t, 1));
      if (gop == uint32_t(spv::GroupOperation::InclusiveScan))
        bits = B.CreateAnd(bits, B.CreateSub(B.CreateShl(B.CreateShl(one, lane), one), one));
      else if (gop == uint32_t(spv::GroupOperation::ExclusiveScan))
        bits = B.CreateAnd(bits, B.CreateSub(B.CreateShl(one, lane), one));
      else if (gop != uint32_t(spv::GroupOperation::Reduce))
        fail("ballot bit count with this group operation is not supported", &in);
      define(in.result, B.CreateZExtOrTrunc(B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, bits), lanes(B.getInt32Ty())));
      return true;
    }
    case Op::OpGroupNonUniformBallotFindLSB:
    case Op::OpGroupNonUniformBallotFindMSB: {
      llvm::Value* bits = ballot_bits(value(o.at(1)));
      llvm::Value* r;
      if (op == Op::OpGroupNonUniformBallotFindLSB)
        r = B.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, bits, B.getFalse());
      else
        r = B.CreateSub(llvm::ConstantInt::get(bits_t, N - 1), B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, bits, B.getFalse()));
      define(in.result, splat(B.CreateZExtOrTrunc(r, B.getInt32Ty())));
      return true;
    }
    case Op::OpGroupNonUniformShuffle:
      define(in.result, permute(value(o.at(1)), B.CreateZExtOrTrunc(value(o.at(2)), lanes(B.getInt32Ty()))));
      return true;
    case Op::OpGroupNonUniformShuffleXor:
      define(in.result, permute(value(o.at(1)), B.CreateXor(lane_index(), B.CreateZExtOrTrunc(value(o.at(2)), lanes(B.getInt32Ty())))));
      return true;
    case Op::OpGroupNonUniformShuffleUp:
      define(in.result, permute(value(o.at(1)), B.CreateSub(lane_index(), B.CreateZExtOrTrunc(value(o.at(2)), lanes(B.getInt32Ty())))));
      return true;
    case Op::OpGroupNonUniformShuffleDown:
      define(in.result, permute(value(o.at(1)), B.CreateAdd(lane_index(), B.CreateZExtOrTrunc(value(o.at(2)), lanes(B.getInt32Ty())))));
      return true;
    default:
      break;
  }

  // Arithmetic: (scope, group operation, value[, cluster size]), component by component.
  uint32_t gop = o.at(1);
  auto per_leaf = [&](llvm::Value* v) -> llvm::Value* {
  auto* vt = llvm::cast<llvm::VectorType>(v->getType());
  llvm::Type* et = vt->getElementType();
  llvm::Value* identity = nullptr;
  std::function<llvm::Value*(llvm::Value*, llvm::Value*)> combine;
  switch (op) {
    case Op::OpGroupNonUniformIAdd: identity = llvm::ConstantInt::get(et, 0); combine = [&](auto a, auto b) { return B.CreateAdd(a, b); }; break;
    case Op::OpGroupNonUniformIMul: identity = llvm::ConstantInt::get(et, 1); combine = [&](auto a, auto b) { return B.CreateMul(a, b); }; break;
    case Op::OpGroupNonUniformFAdd: identity = llvm::ConstantFP::get(et, 0.0); combine = [&](auto a, auto b) { return B.CreateFAdd(a, b); }; break;
    case Op::OpGroupNonUniformFMul: identity = llvm::ConstantFP::get(et, 1.0); combine = [&](auto a, auto b) { return B.CreateFMul(a, b); }; break;
    case Op::OpGroupNonUniformSMin: identity = llvm::ConstantInt::get(et, llvm::APInt::getSignedMaxValue(et->getIntegerBitWidth())); combine = [&](auto a, auto b) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b); }; break;
    case Op::OpGroupNonUniformUMin: identity = llvm::ConstantInt::get(et, llvm::APInt::getMaxValue(et->getIntegerBitWidth())); combine = [&](auto a, auto b) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, a, b); }; break;
    case Op::OpGroupNonUniformSMax: identity = llvm::ConstantInt::get(et, llvm::APInt::getSignedMinValue(et->getIntegerBitWidth())); combine = [&](auto a, auto b) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b); }; break;
    case Op::OpGroupNonUniformUMax: identity = llvm::ConstantInt::get(et, 0); combine = [&](auto a, auto b) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, a, b); }; break;
    case Op::OpGroupNonUniformFMin: identity = llvm::ConstantFP::getInfinity(et, false); combine = [&](auto a, auto b) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b); }; break;
    case Op::OpGroupNonUniformFMax: identity = llvm::ConstantFP::getInfinity(et, true); combine = [&](auto a, auto b) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b); }; break;
    case Op::OpGroupNonUniformBitwiseAnd: case Op::OpGroupNonUniformLogicalAnd:
      identity = llvm::Constant::getAllOnesValue(et); combine = [&](auto a, auto b) { return B.CreateAnd(a, b); }; break;
    case Op::OpGroupNonUniformBitwiseOr: case Op::OpGroupNonUniformLogicalOr:
      identity = llvm::ConstantInt::get(et, 0); combine = [&](auto a, auto b) { return B.CreateOr(a, b); }; break;
    case Op::OpGroupNonUniformBitwiseXor: case Op::OpGroupNonUniformLogicalXor:
      identity = llvm::ConstantInt::get(et, 0); combine = [&](auto a, auto b) { return B.CreateXor(a, b); }; break;
    default:
      fail("subgroup instruction is not supported", &in);
  }
  llvm::Value* id_vec = splat(identity);
  llvm::Value* x = B.CreateSelect(mask, v, id_vec);  // inactive lanes contribute nothing
  // Lane l receives lane l - d (or identity when l < d).
  auto shift_up = [&](llvm::Value* a, uint32_t d) {
    std::vector<int> idx;
    for (uint32_t l = 0; l < N; ++l) idx.push_back(l >= d ? int(l - d) : int(N + l));  // N+l -> identity vector
    return B.CreateShuffleVector(a, id_vec, idx);
  };
  auto xor_shuffle = [&](llvm::Value* a, uint32_t d) {
    std::vector<int> idx;
    for (uint32_t l = 0; l < N; ++l) idx.push_back(int(l ^ d));
    return B.CreateShuffleVector(a, a, idx);
  };
  llvm::Value* r;
  if (gop == uint32_t(spv::GroupOperation::Reduce) || gop == uint32_t(spv::GroupOperation::ClusteredReduce)) {
    uint32_t cluster = N;
    if (gop == uint32_t(spv::GroupOperation::ClusteredReduce)) {
      cluster = uint32_t(constant_u64(o.at(3)));
      if (cluster == 0 || (cluster & (cluster - 1))) fail("cluster size must be a power of two", &in);
      cluster = std::min(cluster, N);
    }
    r = x;
    for (uint32_t d = 1; d < cluster; d <<= 1) r = combine(r, xor_shuffle(r, d));
  } else if (gop == uint32_t(spv::GroupOperation::InclusiveScan) || gop == uint32_t(spv::GroupOperation::ExclusiveScan)) {
    r = x;
    for (uint32_t d = 1; d < N; d <<= 1) r = combine(r, shift_up(r, d));
    if (gop == uint32_t(spv::GroupOperation::ExclusiveScan)) r = shift_up(r, 1);
  } else {
    fail("group operation " + std::to_string(gop) + " is not supported", &in);
  }
  return r;
  };
  define(in.result, map_leaves(value(o.at(2)), per_leaf));
  return true;
}

}  // namespace coopvk::jit
