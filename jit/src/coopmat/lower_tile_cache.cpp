// Packing tile loads through the dispatch's tile cache (coopvk/jit/tile_cache.h).
//
// A tile packed from a buffer is the same in every workgroup that packs it as long as the
// buffer's bytes stay the same, and they do for the whole dispatch where no write of the
// dispatch can reach them. A write can come only through a buffer binding the shader may
// write (one not NonWritable), through a storage image or texel buffer, or through a
// physical-storage-buffer address. So a load from a binding is packed through the cache
// (TileCache::get) when the shader has no image writes or buffer addresses (known at
// compile time) and, for each writable binding, the bound ranges do not overlap (tested at
// run time, once per call of the function). Host writes and other commands' writes during
// the dispatch are races the application must not make (Vulkan's memory model and the
// synchronization chapter), and the cache forgets everything between dispatches.
//
// The tile is then read in place from the cache, through the variable's per-matrix
// pointer (FunctionState::PackedCache::pointers).
#include "coopvk/jit/shader_abi.h"
#include "coopvk/jit/tile_cache.h"
#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"

#include <type_traits>
#include <utility>
#include <vector>

namespace coopvk::jit {

using spv::Op;
using spv::StorageClass;

namespace {

// More elements of one writable descriptor array than this: not tested, no caching.
constexpr uint32_t kMaxTestedDescriptors = 8;

}  // namespace

bool Lowerer::binding_writable(const Instruction& var) const {
  const uint32_t sc = var.operands.at(0);
  Id block = type(var.result_type).elem;
  while (type(block).op == uint16_t(Op::OpTypeArray) || type(block).op == uint16_t(Op::OpTypeRuntimeArray))
    block = type(block).elem;
  if (sc == uint32_t(StorageClass::Uniform) && !m.has_decoration(block, uint32_t(spv::Decoration::BufferBlock)))
    return false;  // a uniform buffer
  if (sc != uint32_t(StorageClass::StorageBuffer) && sc != uint32_t(StorageClass::Uniform)) return false;
  if (m.has_decoration(var.result, uint32_t(spv::Decoration::NonWritable))) return false;
  // Or each member of its block NonWritable (GLSL's `readonly buffer`).
  const TypeInfo& bt = type(block);
  if (bt.op != uint16_t(Op::OpTypeStruct) || bt.members.empty()) return true;
  auto it = m.decorations.find(block);
  if (it == m.decorations.end()) return true;
  for (size_t k = 0; k < bt.members.size(); ++k) {
    bool nonwritable = false;
    for (const auto& d : it->second)
      nonwritable = nonwritable || (d.member == int32_t(k) && d.decoration == uint32_t(spv::Decoration::NonWritable));
    if (!nonwritable) return true;
  }
  return false;
}

void Lowerer::plan_tile_cache() {
  tile_cache_off_ = false;
  writable_buffers_.clear();
  for (const Instruction& g : m.globals) {
    if (g.opcode == uint16_t(Op::OpTypePointer) && g.operands.at(0) == uint32_t(StorageClass::PhysicalStorageBuffer))
      tile_cache_off_ = true;  // addresses reach any buffer
    if (g.opcode == uint16_t(Op::OpTypeImage) && g.operands.size() > 5 && g.operands[5] == 2)
      tile_cache_off_ = true;  // storage images and texel buffers may alias buffer memory
    if (g.opcode != uint16_t(Op::OpVariable) || !binding_writable(g)) continue;
    writable_buffers_.push_back(&g);
    const Decoration *ds_dec = nullptr, *bind_dec = nullptr;
    if (!m.has_decoration(g.result, uint32_t(spv::Decoration::DescriptorSet), &ds_dec) ||
        !m.has_decoration(g.result, uint32_t(spv::Decoration::Binding), &bind_dec) || ds_dec->args.empty() ||
        bind_dec->args.empty() || ds_dec->args[0] >= kMaxDescriptorSets ||
        bind_dec->args[0] >= opts.layout.sets[ds_dec->args[0]].bindings.size()) {
      tile_cache_off_ = true;  // (pipeline creation fails on it anyway)
      continue;
    }
    if (opts.layout.sets[ds_dec->args[0]].bindings[bind_dec->args[0]].count > kMaxTestedDescriptors)
      tile_cache_off_ = true;
  }
}

const Instruction* Lowerer::cacheable_binding(Id pointer) const {
  if (tile_cache_off_) return nullptr;
  const Instruction* in = m.local(pointer);
  while (in && (in->opcode == uint16_t(Op::OpAccessChain) || in->opcode == uint16_t(Op::OpInBoundsAccessChain))) {
    pointer = in->operands.at(0);
    in = m.local(pointer);
  }
  const Instruction* g = m.global(pointer);
  if (!g || g->opcode != uint16_t(Op::OpVariable)) return nullptr;
  const uint32_t sc = g->operands.at(0);
  if (sc != uint32_t(StorageClass::StorageBuffer) && sc != uint32_t(StorageClass::Uniform)) return nullptr;
  const uint16_t pointee = type(type(g->result_type).elem).op;
  if (pointee == uint16_t(Op::OpTypeArray) || pointee == uint16_t(Op::OpTypeRuntimeArray)) return nullptr;
  for (const Instruction* w : writable_buffers_)
    if (w == g) return nullptr;  // written by the shader itself
  return g;
}

llvm::Value* Lowerer::binding_unwritten(const Instruction& var) {
  llvm::Type* i64 = B.getInt64Ty();
  auto span = [&](const Instruction& v, const Val* idx) {
    llvm::Value* lo = B.CreatePtrToInt(descriptor_field(v, idx, false).v, i64);
    return std::pair{lo, B.CreateAdd(lo, descriptor_field(v, idx, true).v)};
  };
  const auto [lo, hi] = span(var, nullptr);
  F.binding_span[&var] = {lo, hi};
  llvm::Value* ok = B.getTrue();
  for (const Instruction* w : writable_buffers_) {
    const uint16_t pointee = type(type(w->result_type).elem).op;
    const bool array = pointee == uint16_t(Op::OpTypeArray) || pointee == uint16_t(Op::OpTypeRuntimeArray);
    const Decoration *ds_dec = nullptr, *bind_dec = nullptr;
    m.has_decoration(w->result, uint32_t(spv::Decoration::DescriptorSet), &ds_dec);
    m.has_decoration(w->result, uint32_t(spv::Decoration::Binding), &bind_dec);
    const uint32_t count = array ? opts.layout.sets[ds_dec->args[0]].bindings[bind_dec->args[0]].count : 1;
    for (uint32_t e = 0; e < count; ++e) {
      const Val idx{B.getInt32(e), true};
      const auto [wlo, whi] = span(*w, array ? &idx : nullptr);
      ok = B.CreateAnd(ok, B.CreateOr(B.CreateICmpULE(hi, wlo), B.CreateICmpULE(whi, lo)));
    }
  }
  return ok;
}

llvm::Value* Lowerer::tile_cache_usable(const Instruction& var) {
  llvm::Value*& usable = F.tile_cache_usable[&var];
  if (usable) return usable;
  // In the entry block (past everything it computes, before its branch to the body), where
  // LLVM could not hoist the test from the loads' conditional blocks itself.
  llvm::IRBuilderBase::InsertPointGuard keep(B);
  B.SetInsertPoint(F.entry->getTerminator());
  if (!F.tile_cache) {
    llvm::LoadInst* cache = B.CreateLoad(
        B.getPtrTy(), B.CreateConstGEP1_64(B.getInt8Ty(), ctx_field(kCtxDispatch), offsetof(DispatchState, tile_cache)));
    invariant(cache);
    F.tile_cache = cache;
  }
  usable = B.CreateAnd(binding_unwritten(var), B.CreateIsNotNull(F.tile_cache));
  return usable;
}

llvm::Value* Lowerer::emit_cached_pack(const FunctionState::PackedCache& c, llvm::Value* slot, llvm::Value* src,
                                       llvm::Value* ld, const Instruction& binding, uint64_t esz) {
  llvm::Type* ptr = B.getPtrTy();
  llvm::Type* i64 = B.getInt64Ty();
  llvm::Value* usable = tile_cache_usable(binding);
  walks_tile_cache = true;
  llvm::Value* own = packed_copy(c, slot);
  const uint32_t bytes = c.role == 0 ? c.parts.a_bytes : c.parts.b_bytes;
  // The site's TileSite, in the frame (each subgroup its own), described once at entry.
  llvm::AllocaInst* site = entry_alloca(B.getInt8Ty(), sizeof(TileSite), 64);
  {
    llvm::IRBuilderBase::InsertPointGuard keep(B);
    B.SetInsertPoint(F.entry->getTerminator());
    B.CreateMemSet(site, B.getInt8(0), sizeof(TileSite), llvm::MaybeAlign(64));
    auto field = [&](size_t at, llvm::Value* v) { B.CreateStore(v, B.CreateConstGEP1_64(B.getInt8Ty(), site, at)); };
    const auto [lo, hi] = F.binding_span.at(&binding);
    const uint32_t rows = c.role == 0 ? c.desc.m : c.desc.k, cols = c.role == 0 ? c.desc.k : c.desc.n;
    field(offsetof(TileSite, pack), packer(c.desc, c.parts, c.role).getCallee());
    field(offsetof(TileSite, lo), B.CreateIntToPtr(lo, ptr));
    field(offsetof(TileSite, hi), B.CreateIntToPtr(hi, ptr));
    field(offsetof(TileSite, bytes), B.getInt32(bytes));
    field(offsetof(TileSite, rows), B.getInt32(rows));
    field(offsetof(TileSite, row_bytes), B.getInt32(uint32_t(cols * esz)));
    field(offsetof(TileSite, esz), B.getInt32(uint32_t(esz)));
  }
  llvm::BasicBlock* cached_bb = llvm::BasicBlock::Create(C, "pack.cached", F.llvm_fn);
  llvm::BasicBlock* plain_bb = llvm::BasicBlock::Create(C, "pack.here", F.llvm_fn);
  llvm::BasicBlock* done_bb = llvm::BasicBlock::Create(C, "pack.done", F.llvm_fn);
  B.CreateCondBr(usable, cached_bb, plain_bb);
  B.SetInsertPoint(cached_bb);
  // A walk's run answers most requests (TileCache::get tests the same first): tested here,
  // as the call's fixed costs were most of the cache's time in a K loop.
  const uint64_t stride = TileCache::run_stride(bytes);
  std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>> answers;
  constexpr uint32_t kWalks = std::extent_v<decltype(TileSite::walk)>;
  for (uint32_t i = 0; i < kWalks; ++i) {
    const size_t w = offsetof(TileSite, walk) + i * sizeof(TileSite::Walk);
    auto at = [&](size_t field) { return B.CreateConstGEP1_64(B.getInt8Ty(), site, w + field); };
    llvm::Value* next_at = at(offsetof(TileSite::Walk, next));
    llvm::Value* left_at = at(offsetof(TileSite::Walk, left));
    llvm::Value* left = B.CreateLoad(i64, left_at);
    llvm::BasicBlock* hit_bb = llvm::BasicBlock::Create(C, "pack.walk", F.llvm_fn);
    llvm::BasicBlock* miss_bb = llvm::BasicBlock::Create(C, "pack.walk.miss", F.llvm_fn);
    B.CreateCondBr(B.CreateAnd(B.CreateICmpEQ(B.CreateLoad(ptr, next_at), src), B.CreateICmpNE(left, B.getInt64(0))),
                   hit_bb, miss_bb);
    B.SetInsertPoint(hit_bb);
    llvm::Value* data_at = at(offsetof(TileSite::Walk, data));
    llvm::Value* data = B.CreateLoad(ptr, data_at);
    llvm::Value* step = B.CreateLoad(i64, at(offsetof(TileSite::Walk, step)));
    B.CreateStore(B.CreateGEP(B.getInt8Ty(), src, step), next_at);
    B.CreateStore(B.CreateConstGEP1_64(B.getInt8Ty(), data, stride), data_at);
    B.CreateStore(B.CreateSub(left, B.getInt64(1)), left_at);
    B.CreateStore(B.getInt32(i), B.CreateConstGEP1_64(B.getInt8Ty(), site, offsetof(TileSite, recent)));
    B.CreateBr(done_bb);
    answers.emplace_back(data, hit_bb);
    B.SetInsertPoint(miss_bb);
  }
  llvm::FunctionCallee get =
      M_get_function(kTileCacheSymbol, llvm::FunctionType::get(ptr, {ptr, ptr, ptr, i64, ptr}, false), {2});
  llvm::Value* looked_up = B.CreateCall(get, {F.tile_cache, site, src, ld, own});
  clear_pack_tag(c, slot);  // own copy may now hold another tile than its tag says
  B.CreateBr(done_bb);
  answers.emplace_back(looked_up, B.GetInsertBlock());
  B.SetInsertPoint(plain_bb);
  emit_pack(c, slot, src, ld);
  B.CreateBr(done_bb);
  answers.emplace_back(own, B.GetInsertBlock());
  B.SetInsertPoint(done_bb);
  llvm::PHINode* at = B.CreatePHI(ptr, unsigned(answers.size()));
  for (auto [v, bb] : answers) at->addIncoming(v, bb);
  return at;
}

}  // namespace coopvk::jit
