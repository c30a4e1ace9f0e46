// Interleaved subgroups for cooperative-matrix loops (the why: workgroup_runner.cpp).
//
// A shader without workgroup barriers whose workgroup has several subgroups gets a call of
// coopvk_jit_subgroup_yield() at the continue target of each innermost loop that both
// loads cooperative matrices and multiplies 8-bit ones (a GEMM's K loop), and some of whose
// tile loads the dispatch's tile cache cannot serve (lower_tile_cache.cpp: the others are
// packed once for every workgroup, which interleaving only slows down, by its switches):
// once per iteration, the next subgroup runs its iteration. With barriers the subgroups already switch at each
// barrier, and a yield there would let a fiber past its barrier before the others arrive.
//
// Its tile loads that pack straight from the buffer (store_packed_from_buffer()) then copy
// what another subgroup packed from the same place, where that is still in its packed copy
// and WorkgroupState::pack_epoch has not moved since (emit_pack()); mark_shared_writes()
// emits the bumps.
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>

#include "coopvk/jit/shader_abi.h"
#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

using spv::Op;

void Lowerer::plan_subgroup_interleaving() {
  const uint64_t invocations = uint64_t(local_size[0]) * local_size[1] * local_size[2];
  if (invocations <= N) return;  // one subgroup: nobody to yield to
  if (wg_subgroups > 1) return;  // workgroup-scope matrices: their subgroups meet at barriers
  for (const Function& fn : m.functions)
    for (const Block& b : fn.blocks)
      for (const Instruction& in : b.body)
        if (in.opcode == uint16_t(Op::OpControlBarrier) && !in.operands.empty() &&
            constant_u64(in.operands[0]) == uint64_t(spv::Scope::Workgroup))
          return;
  yield_blocks_.assign(m.functions.size(), {});
  for (size_t f = 0; f < m.functions.size(); ++f) {
    const FunctionCfg& g = uniformity->functions.at(f).cfg;
    const Function& fn = m.functions[f];
    // Loops whose blocks (nested constructs included) load and multiply matrices of 8-bit
    // integers, loading some from where the tile cache may not serve them. Those are what sharing pays for: packing them for vpdpbusd (quads of rows,
    // sign fix-ups) costs several times the copy, where f16 or bf16 tiles widened to f32
    // cost about as much as copying what they become, which measured slower interleaved.
    auto eight_bit = [&](const Instruction& in) {
      if (in.opcode != uint16_t(Op::OpCooperativeMatrixMulAddKHR) || in.operands.size() < 3) return false;
      const Instruction* def = m.local(in.operands[0]);  // (value types are known as lowered)
      const Id a = def ? def->result_type : 0;
      if (!a || !is_matrix(a)) return false;
      const TypeInfo& e = type(type(a).elem);
      return e.op == uint16_t(Op::OpTypeInt) && e.width == 8;
    };
    std::vector<bool> tiled(g.constructs.size(), false);
    for (size_t c = 0; c < g.constructs.size(); ++c) {
      const Construct& k = g.constructs[c];
      if (!k.loop) continue;
      bool loads = false, muladds = false, uncached = false;
      for (uint32_t p = k.begin; p < k.end && p < g.order.size(); ++p)
        for (const Instruction& in : fn.blocks[g.order[p]].body) {
          const bool load = in.opcode == uint16_t(Op::OpCooperativeMatrixLoadKHR);
          loads = loads || load;
          uncached = uncached || (load && !in.operands.empty() && !cacheable_binding(in.operands[0]));
          muladds = muladds || eight_bit(in);
        }
      tiled[c] = loads && muladds && uncached;
    }
    // The innermost of them: a yield per iteration of the loop that walks the tiles, not
    // per tile of the loops inside it.
    std::vector<bool> outer(g.constructs.size(), false);
    for (size_t c = 0; c < g.constructs.size(); ++c)
      if (tiled[c])
        for (int32_t p = g.constructs[c].parent; p >= 0; p = g.constructs[size_t(p)].parent) outer[size_t(p)] = true;
    for (size_t c = 0; c < g.constructs.size(); ++c)
      if (tiled[c] && !outer[c] && g.constructs[c].cont != kNoBlock) {
        yield_blocks_[f].resize(fn.blocks.size(), false);
        yield_blocks_[f][g.constructs[c].cont] = true;
        interleaves_subgroups = true;
      }
  }
}

void Lowerer::emit_subgroup_yield(uint32_t block) {
  const size_t f = size_t(F.fn - m.functions.data());
  if (f >= yield_blocks_.size() || block >= yield_blocks_[f].size() || !yield_blocks_[f][block]) return;
  llvm::FunctionCallee y = M->getOrInsertFunction("coopvk_jit_subgroup_yield", B.getVoidTy(), B.getPtrTy());
  B.CreateCall(y, {ctx_field(kCtxWorkgroup)});
}

namespace {

constexpr llvm::StringLiteral kBookkeeping = "coopvk.pack_bookkeeping";

// The packed copy's tag, in the 64 bytes before it: {src, ld, epoch} of the tile it holds
// (src 0: none).
constexpr int64_t kTagOffset = -32;

}  // namespace

void Lowerer::bookkeeping(llvm::Instruction* store) {
  store->setMetadata(kBookkeeping, llvm::MDNode::get(C, {}));
}

void Lowerer::bump_pack_epoch(llvm::IRBuilder<>& b, llvm::Value* ws) {
  llvm::Value* at = b.CreateConstGEP1_64(b.getInt8Ty(), ws, offsetof(WorkgroupState, pack_epoch));
  bookkeeping(b.CreateStore(b.CreateAdd(b.CreateLoad(b.getInt64Ty(), at), b.getInt64(1)), at));
}

void Lowerer::end_shared_packs() {
  for (const auto& [var, c] : F.packed_caches)
    if (c.shared) return bump_pack_epoch(B, ctx_field(kCtxWorkgroup));
}

void Lowerer::clear_pack_tag(const FunctionState::PackedCache& c, llvm::Value* slot) {
  if (!c.shared) return;
  B.CreateStore(B.getInt64(0), B.CreateConstGEP1_64(B.getInt8Ty(), packed_copy(c, slot), kTagOffset));
}

void Lowerer::emit_pack(const FunctionState::PackedCache& c, llvm::Value* slot, llvm::Value* src, llvm::Value* ld) {
  llvm::FunctionCallee pack = packer(c.desc, c.parts, c.role);
  llvm::Value* out = packed_copy(c, slot);
  if (!c.shared || pack_sites >= kMaxPackSites) {
    B.CreateCall(pack, {src, ld, out});
    clear_pack_tag(c, slot);
    return;
  }
  // This site's record of pack_memo (shader_abi.h): the tiles it packed last, and where.
  // A tile found there is copied from that packed copy if the copy's tag says it still
  // holds it (its owner may have packed another since); otherwise it is packed here and
  // noted. Inline: what the copy saves is not much more than a call would cost.
  const uint32_t site = pack_sites++;
  llvm::Type* i8 = B.getInt8Ty();
  llvm::Type* i32 = B.getInt32Ty();
  llvm::Type* i64 = B.getInt64Ty();
  llvm::Type* ptr = B.getPtrTy();
  llvm::Value* ws = ctx_field(kCtxWorkgroup);
  llvm::Value* epoch = B.CreateLoad(i64, B.CreateConstGEP1_64(i8, ws, offsetof(WorkgroupState, pack_epoch)));
  llvm::Value* memo = B.CreateConstGEP1_64(
      i8, B.CreateLoad(ptr, B.CreateConstGEP1_64(i8, ws, offsetof(WorkgroupState, pack_memo))),
      uint64_t(site) * kPackMemoSiteBytes);
  llvm::Value* src_bits = B.CreatePtrToInt(src, i64);
  auto field = [&](llvm::Value* base, int64_t at, llvm::Type* t) {
    return B.CreateLoad(t, B.CreateConstGEP1_64(i8, base, uint64_t(at)));
  };
  // The first matching entry, without a branch (which entry matches changes from one
  // subgroup to the next, and mispredicted branches cost as much as the copy): the index of
  // the lowest bit of the match mask, 4 when none matches, whose `packed` is always null.
  llvm::Value* matches = B.getInt32(1u << kPackMemoEntries);
  for (uint32_t e = 0; e < kPackMemoEntries; ++e) {
    const int64_t at = int64_t(e) * 32;
    llvm::Value* same = B.CreateAnd(B.CreateAnd(B.CreateICmpEQ(field(memo, at, i64), src_bits),
                                                B.CreateICmpEQ(field(memo, at + 8, i64), ld)),
                                    B.CreateICmpEQ(field(memo, at + 16, i64), epoch));
    matches = B.CreateOr(matches, B.CreateShl(B.CreateZExt(same, i32), e));
  }
  llvm::Value* first = B.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, matches, B.getTrue());
  llvm::Value* from =
      B.CreateLoad(ptr, B.CreateGEP(i8, memo, B.CreateAdd(B.CreateZExt(B.CreateMul(first, B.getInt32(32)), i64),
                                                          B.getInt64(24))));
  llvm::BasicBlock* check_bb = llvm::BasicBlock::Create(C, "shared.check", F.llvm_fn);
  llvm::BasicBlock* copy_bb = llvm::BasicBlock::Create(C, "shared.copy", F.llvm_fn);
  llvm::BasicBlock* pack_bb = llvm::BasicBlock::Create(C, "shared.pack", F.llvm_fn);
  llvm::BasicBlock* done_bb = llvm::BasicBlock::Create(C, "shared.done", F.llvm_fn);
  B.CreateCondBr(B.CreateAnd(B.CreateIsNotNull(from), B.CreateICmpNE(from, out)), check_bb, pack_bb);
  B.SetInsertPoint(check_bb);
  llvm::Value* holds = B.CreateAnd(B.CreateAnd(B.CreateICmpEQ(field(from, kTagOffset, i64), src_bits),
                                               B.CreateICmpEQ(field(from, kTagOffset + 8, i64), ld)),
                                   B.CreateICmpEQ(field(from, kTagOffset + 16, i64), epoch));
  B.CreateCondBr(holds, copy_bb, pack_bb);
  B.SetInsertPoint(copy_bb);
  const uint64_t bytes = c.role == 0 ? c.parts.a_bytes : c.parts.b_bytes;
  for (uint64_t at = 0; at < bytes;) {  // 64-byte vectors, then what is left (a multiple of 4)
    const uint64_t n = std::min<uint64_t>(64, bytes - at);
    llvm::Type* v = llvm::FixedVectorType::get(i32, unsigned(n / 4));
    llvm::Value* x = B.CreateAlignedLoad(v, B.CreateConstGEP1_64(i8, from, at), llvm::Align(64));
    B.CreateAlignedStore(x, B.CreateConstGEP1_64(i8, out, at), llvm::Align(64));
    at += n;
  }
  B.CreateBr(done_bb);
  B.SetInsertPoint(pack_bb);
  B.CreateCall(pack, {src, ld, out});
  llvm::Value* next_at = B.CreateConstGEP1_64(i8, memo, kPackMemoNext);
  llvm::Value* next = B.CreateLoad(i32, next_at);
  llvm::Value* entry = B.CreateGEP(i8, memo, B.CreateZExt(B.CreateMul(next, B.getInt32(32)), i64));
  bookkeeping(B.CreateStore(src, entry));
  bookkeeping(B.CreateStore(ld, B.CreateConstGEP1_64(i8, entry, 8)));
  bookkeeping(B.CreateStore(epoch, B.CreateConstGEP1_64(i8, entry, 16)));
  bookkeeping(B.CreateStore(out, B.CreateConstGEP1_64(i8, entry, 24)));
  bookkeeping(B.CreateStore(B.CreateAnd(B.CreateAdd(next, B.getInt32(1)), B.getInt32(kPackMemoEntries - 1)), next_at));
  B.CreateBr(done_bb);
  B.SetInsertPoint(done_bb);
  llvm::Value* tag = B.CreateConstGEP1_64(i8, out, uint64_t(kTagOffset));
  B.CreateStore(src, tag);
  B.CreateStore(ld, B.CreateConstGEP1_64(i8, tag, 8));
  B.CreateStore(epoch, B.CreateConstGEP1_64(i8, tag, 16));
}

namespace {

// Whether `p` points into the function's own stack: memory no other invocation sees.
bool private_memory(const llvm::Value* p) {
  return llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(p, 0));
}

// Whether what `in` does can change memory another invocation reads (or, an atomic or a
// fence, make another invocation's writes visible here). Calls of the shader's own
// functions are not: their bodies are marked themselves.
bool shared_write(const llvm::Instruction& in) {
  if (in.getMetadata(kBookkeeping)) return false;  // the epoch and the memo themselves
  if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&in)) return st->isAtomic() || !private_memory(st->getPointerOperand());
  if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(&in)) return ld->isAtomic();
  if (llvm::isa<llvm::FenceInst>(in) || llvm::isa<llvm::AtomicRMWInst>(in) || llvm::isa<llvm::AtomicCmpXchgInst>(in))
    return true;
  auto* call = llvm::dyn_cast<llvm::CallBase>(&in);
  if (!call || !call->mayWriteToMemory()) return false;
  if (auto* mi = llvm::dyn_cast<llvm::AnyMemIntrinsic>(&in)) return !private_memory(mi->getRawDest());
  const llvm::Function* callee = call->getCalledFunction();
  if (!callee) return true;
  if (callee->isIntrinsic()) return !callee->onlyAccessesInaccessibleMemory() && !llvm::isa<llvm::DbgInfoIntrinsic>(in) &&
                                    !in.isLifetimeStartOrEnd() && !llvm::isa<llvm::AssumeInst>(in);
  if (!callee->isDeclaration()) return false;
  const llvm::StringRef name = callee->getName();
  if (name == "coopvk_jit_subgroup_yield" || name == kTileCacheSymbol) return false;  // (driver-private memory)
  if (name == "coopvk_jit_workgroup_barrier") return true;
  // The kernels write through their pointer arguments only (runtime_symbols.h).
  for (unsigned k = 0; k < call->arg_size(); ++k) {
    const llvm::Value* a = call->getArgOperand(k);
    if (a->getType()->isPointerTy() && !call->onlyReadsMemory(k) && !private_memory(a)) return true;
  }
  return false;
}

}  // namespace

void Lowerer::mark_shared_writes(llvm::Function& lf) {
  if (!interleaves_subgroups || lf.isDeclaration()) return;
  std::vector<llvm::Instruction*> writes;
  for (llvm::Instruction& in : llvm::instructions(lf))
    if (shared_write(in)) writes.push_back(&in);
  llvm::Value* ctx = lf.getArg(0);  // every lowered function's first parameter
  llvm::IRBuilder<> b(C);
  for (llvm::Instruction* w : writes) {
    b.SetInsertPoint(w->getNextNode());
    bump_pack_epoch(b, b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(ctx_type, ctx, kCtxWorkgroup)));
  }
}

}  // namespace coopvk::jit
