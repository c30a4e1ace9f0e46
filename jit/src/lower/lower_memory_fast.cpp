// Fast paths for memory accesses: recognise addresses that are the same for every lane
// (one scalar access) or consecutive across lanes (one vector access) from the form of
// the IR this lowering built, instead of a gather/scatter per scalar.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
// The conjunction of two exactness conditions (null: true).
llvm::Value* both(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  if (!x) return y;
  if (!y) return x;
  return b.CreateAnd(x, y);
}
}  // namespace

std::optional<Lowerer::Affine> Lowerer::affine(llvm::Value* v, int depth) {
  if (depth > 12) return std::nullopt;
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (!vt) return std::nullopt;
  if (auto* c = llvm::dyn_cast<llvm::Constant>(v)) {
    if (llvm::Constant* s = c->getSplatValue()) return Affine{s, 0};
    if (!vt->getElementType()->isIntegerTy() || vt->getNumElements() < 2) return std::nullopt;
    auto* c0 = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(0u));
    auto* c1 = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(1u));
    if (!c0 || !c1) return std::nullopt;
    int64_t stride = c1->getSExtValue() - c0->getSExtValue();
    for (unsigned i = 2; i < vt->getNumElements(); ++i) {
      auto* ci = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(i));
      if (!ci || ci->getSExtValue() - c0->getSExtValue() != stride * int64_t(i)) return std::nullopt;
    }
    return Affine{c0, stride};
  }
  if (auto* sv = llvm::dyn_cast<llvm::ShuffleVectorInst>(v)) {
    if (sv->isZeroEltSplat())
      if (auto* ie = llvm::dyn_cast<llvm::InsertElementInst>(sv->getOperand(0)))
        if (auto* idx = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2)); idx && idx->isZero())
          return Affine{ie->getOperand(1), 0};
    return std::nullopt;
  }
  auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
  if (!inst) return std::nullopt;
  // Scalar rebuilds go just before the vector instruction: its operands (and so their
  // bases) are defined above it.
  llvm::IRBuilder<> b(inst);
  // Add, Sub, Mul and Shl keep the form exactly in the type's modular arithmetic, so
  // they only pass their operands' conditions on.
  switch (inst->getOpcode()) {
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub: {
      auto x = affine(inst->getOperand(0), depth + 1);
      auto y = x ? affine(inst->getOperand(1), depth + 1) : std::nullopt;
      if (!y) return std::nullopt;
      bool add = inst->getOpcode() == llvm::Instruction::Add;
      llvm::Value* base = add ? b.CreateAdd(x->base, y->base) : b.CreateSub(x->base, y->base);
      return Affine{base, add ? x->stride + y->stride : x->stride - y->stride, both(b, x->exact, y->exact)};
    }
    case llvm::Instruction::Mul: {
      auto x = affine(inst->getOperand(0), depth + 1);
      auto y = x ? affine(inst->getOperand(1), depth + 1) : std::nullopt;
      if (!y) return std::nullopt;
      llvm::Value* exact = both(b, x->exact, y->exact);
      if (x->stride == 0 && y->stride == 0) return Affine{b.CreateMul(x->base, y->base), 0, exact};
      if (x->stride == 0) std::swap(x, y);
      auto* k = llvm::dyn_cast<llvm::ConstantInt>(y->base);  // y uniform; need a constant
      if (y->stride != 0 || !k) return std::nullopt;
      return Affine{b.CreateMul(x->base, k), x->stride * k->getSExtValue(), exact};
    }
    case llvm::Instruction::Shl: {
      auto x = affine(inst->getOperand(0), depth + 1);
      auto y = x ? affine(inst->getOperand(1), depth + 1) : std::nullopt;
      if (!y || y->stride != 0) return std::nullopt;
      llvm::Value* exact = both(b, x->exact, y->exact);
      if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(y->base); k && k->getZExtValue() < 63)
        return Affine{b.CreateShl(x->base, k), x->stride << k->getZExtValue(), exact};
      if (x->stride == 0) return Affine{b.CreateShl(x->base, y->base), 0, exact};
      return std::nullopt;
    }
    case llvm::Instruction::UDiv:
    case llvm::Instruction::LShr: {
      // (base + s*l) / d is base / d + (s/d)*l when d divides s and no lane's dividend
      // wrapped: base + s*(N-1) fits the type. ggml indexes its vec4 and f16vec2 arrays so,
      // (offset + 4*tid) / 4. The condition is tested at run time.
      auto x = affine(inst->getOperand(0), depth + 1);
      auto y = x ? affine(inst->getOperand(1), depth + 1) : std::nullopt;
      if (!y || y->stride != 0) return std::nullopt;
      bool div = inst->getOpcode() == llvm::Instruction::UDiv;
      llvm::Value* exact = both(b, x->exact, y->exact);
      if (x->stride == 0)
        return Affine{div ? b.CreateUDiv(x->base, y->base) : b.CreateLShr(x->base, y->base), 0, exact};
      auto* k = llvm::dyn_cast<llvm::ConstantInt>(y->base);
      unsigned bits = x->base->getType()->getIntegerBitWidth();
      if (!k || x->stride < 0 || bits > 64) return std::nullopt;
      uint64_t d = div ? k->getZExtValue() : (k->getZExtValue() < 63 ? uint64_t(1) << k->getZExtValue() : 0);
      if (d == 0 || uint64_t(x->stride) % d != 0) return std::nullopt;
      const uint64_t span = uint64_t(x->stride) * (N - 1);
      const uint64_t max = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
      if (span > max) return std::nullopt;
      llvm::Value* fits = b.CreateICmpULE(x->base, llvm::ConstantInt::get(x->base->getType(), max - span));
      llvm::Value* base = div ? b.CreateUDiv(x->base, k) : b.CreateLShr(x->base, k);
      return Affine{base, x->stride / int64_t(d), both(b, exact, fits)};
    }
    case llvm::Instruction::SExt:
    case llvm::Instruction::ZExt:
    case llvm::Instruction::Trunc: {
      auto x = affine(inst->getOperand(0), depth + 1);
      if (!x) return std::nullopt;
      llvm::Type* st = vt->getElementType();
      llvm::Value* base = inst->getOpcode() == llvm::Instruction::SExt ? b.CreateSExtOrTrunc(x->base, st)
                          : inst->getOpcode() == llvm::Instruction::ZExt ? b.CreateZExtOrTrunc(x->base, st)
                                                                         : b.CreateTrunc(x->base, st);
      // Extending a lane-varying value is exact unless a lane wrapped in the narrow type,
      // which needs indices near 2^31: beyond maxStorageBufferRange.
      return Affine{base, x->stride, x->exact};
    }
    case llvm::Instruction::ExtractValue: {
      // A component of a composite this lowering just built (a built-in's uvec3, say).
      auto* ev = llvm::cast<llvm::ExtractValueInst>(inst);
      llvm::Value* agg = ev->getAggregateOperand();
      while (auto* iv = llvm::dyn_cast<llvm::InsertValueInst>(agg)) {
        if (iv->getIndices() == ev->getIndices()) return affine(iv->getInsertedValueOperand(), depth + 1);
        agg = iv->getAggregateOperand();
      }
      return std::nullopt;
    }
    case llvm::Instruction::GetElementPtr: {
      auto* gep = llvm::cast<llvm::GetElementPtrInst>(inst);
      if (gep->getNumIndices() != 1 || !gep->getSourceElementType()->isIntegerTy(8)) return std::nullopt;
      auto p = affine(gep->getPointerOperand(), depth + 1);
      if (!p || p->stride != 0) return std::nullopt;
      llvm::Value* off = gep->getOperand(1);
      if (!off->getType()->isVectorTy()) return Affine{b.CreateGEP(b.getInt8Ty(), p->base, off), 0, p->exact};
      auto o = affine(off, depth + 1);
      if (!o) return std::nullopt;
      return Affine{b.CreateGEP(b.getInt8Ty(), p->base, o->base), o->stride, both(b, p->exact, o->exact)};
    }
    default:
      return std::nullopt;
  }
}

llvm::Value* Lowerer::direct_builtin_load(Id pointer, Id result_type) {
  std::vector<uint32_t> indices;
  Id var = pointer;
  if (F.block_of.count(pointer)) {
    // An access chain with constant indices into a built-in variable.
    for (const Instruction& d : F.fn->blocks[F.block_of.at(pointer)].body) {
      if (d.result != pointer) continue;
      if (d.opcode != uint16_t(spv::Op::OpAccessChain) && d.opcode != uint16_t(spv::Op::OpInBoundsAccessChain))
        return nullptr;
      var = d.operands.at(0);
      for (size_t k = 1; k < d.operands.size(); ++k) {
        if (!is_constant(d.operands[k])) return nullptr;
        indices.push_back(uint32_t(constant_u64(d.operands[k])));
      }
    }
  }
  auto it = global_vars.find(var);
  if (it == global_vars.end() || it->second.storage != uint32_t(spv::StorageClass::Input)) return nullptr;
  const Decoration* d = nullptr;
  if (!m.has_decoration(var, uint32_t(spv::Decoration::BuiltIn), &d) || d->args.empty()) return nullptr;
  llvm::Value* v = builtin_value(d->args[0]);
  for (uint32_t i : indices) {
    llvm::Type* t = v->getType();
    unsigned n = t->isArrayTy() ? unsigned(t->getArrayNumElements()) : 0;
    if (i >= n) fail("access chain into built-in " + std::to_string(d->args[0]) + " does not match its type");
    v = B.CreateExtractValue(v, i);
  }
  if (v->getType() != rep_type(result_type))
    fail("built-in " + std::to_string(d->args[0]) + " is declared with the wrong type");
  return v;
}

}  // namespace coopvk::jit

namespace coopvk::jit {

namespace {
// What the run-time address checks need: the first active lane f, its address p0, and
// whether every active lane l sits at p0 + (l - f) * esz (consecutive) or at p0 (uniform).
struct LaneAddresses {
  llvm::Value* first;
  llvm::Value* p0;
  llvm::Value* base;  // p0 - f * esz: where lane 0's element would be
  llvm::Value* consecutive;
  llvm::Value* uniform;
};

LaneAddresses classify(Lowerer& L, llvm::Value* ptrs, llvm::Value* m, uint64_t esz) {
  llvm::IRBuilder<>& B = L.B;
  llvm::Type* i64v = L.lanes(B.getInt64Ty());
  LaneAddresses a;
  a.first = L.first_active_lane(m);
  a.p0 = B.CreateExtractElement(ptrs, a.first);
  llvm::Value* first64 = B.CreateZExt(a.first, B.getInt64Ty());
  llvm::Value* d = B.CreateSub(B.CreatePtrToInt(ptrs, i64v), L.splat(B.CreatePtrToInt(a.p0, B.getInt64Ty())));
  llvm::Value* lane_off = B.CreateMul(B.CreateSub(B.CreateZExt(L.lane_index(), i64v), L.splat(first64)),
                                      L.splat(B.getInt64(esz)));
  llvm::Value* inactive = B.CreateNot(m);
  a.consecutive = B.CreateAndReduce(B.CreateOr(B.CreateICmpEQ(d, lane_off), inactive));
  a.uniform = B.CreateAndReduce(B.CreateOr(B.CreateICmpEQ(d, llvm::Constant::getNullValue(i64v)), inactive));
  a.base = B.CreateGEP(B.getInt8Ty(), a.p0, B.CreateNeg(B.CreateMul(first64, B.getInt64(esz))));
  return a;
}
}  // namespace

// A vector access under a mask that is usually full (a bounds check that fails only at
// the end of the data): plain when every lane is active, masked otherwise. AVX2's
// vmaskmov is several times slower than a plain access, and LLVM folds the test away
// where the mask is a known constant.
llvm::Value* Lowerer::vector_load(llvm::Type* vt, llvm::Value* ptr, llvm::Align align, llvm::Value* m) {
  if (auto* c = llvm::dyn_cast<llvm::Constant>(m); c && c->isAllOnesValue())
    return B.CreateAlignedLoad(vt, ptr, align);
  llvm::Function* f = B.GetInsertBlock()->getParent();
  auto* full_bb = llvm::BasicBlock::Create(C, "vl.full", f);
  auto* part_bb = llvm::BasicBlock::Create(C, "vl.part", f);
  auto* join = llvm::BasicBlock::Create(C, "vl.join", f);
  B.CreateCondBr(B.CreateAndReduce(m), full_bb, part_bb);
  B.SetInsertPoint(full_bb);
  llvm::Value* a = B.CreateAlignedLoad(vt, ptr, align);
  B.CreateBr(join);
  B.SetInsertPoint(part_bb);
  llvm::Value* b = B.CreateMaskedLoad(vt, ptr, align, m, llvm::PoisonValue::get(vt));
  B.CreateBr(join);
  B.SetInsertPoint(join);
  llvm::PHINode* phi = B.CreatePHI(vt, 2);
  phi->addIncoming(a, full_bb);
  phi->addIncoming(b, part_bb);
  return phi;
}

void Lowerer::vector_store(llvm::Value* v, llvm::Value* ptr, llvm::Align align, llvm::Value* m) {
  if (auto* c = llvm::dyn_cast<llvm::Constant>(m); c && c->isAllOnesValue()) {
    B.CreateAlignedStore(v, ptr, align);
    return;
  }
  llvm::Function* f = B.GetInsertBlock()->getParent();
  auto* full_bb = llvm::BasicBlock::Create(C, "vs.full", f);
  auto* part_bb = llvm::BasicBlock::Create(C, "vs.part", f);
  auto* join = llvm::BasicBlock::Create(C, "vs.join", f);
  B.CreateCondBr(B.CreateAndReduce(m), full_bb, part_bb);
  B.SetInsertPoint(full_bb);
  B.CreateAlignedStore(v, ptr, align);
  B.CreateBr(join);
  B.SetInsertPoint(part_bb);
  B.CreateMaskedStore(v, ptr, align, m);
  B.CreateBr(join);
  B.SetInsertPoint(join);
}

llvm::Value* Lowerer::load_lanes(llvm::Type* scalar, llvm::Value* ptrs, llvm::Align align, llvm::Value* m) {
  llvm::Type* vt = lanes(scalar);
  LaneAddresses a = classify(*this, ptrs, m, M->getDataLayout().getTypeStoreSize(scalar));
  llvm::Function* f = B.GetInsertBlock()->getParent();
  auto* uni_bb = llvm::BasicBlock::Create(C, "ld.uniform", f);
  auto* test_bb = llvm::BasicBlock::Create(C, "ld.test", f);
  auto* vec_bb = llvm::BasicBlock::Create(C, "ld.vector", f);
  auto* gat_bb = llvm::BasicBlock::Create(C, "ld.gather", f);
  auto* join = llvm::BasicBlock::Create(C, "ld.join", f);
  B.CreateCondBr(a.uniform, uni_bb, test_bb);
  B.SetInsertPoint(uni_bb);
  llvm::Value* v_uni = splat(B.CreateAlignedLoad(scalar, a.p0, align));
  B.CreateBr(join);
  B.SetInsertPoint(test_bb);
  B.CreateCondBr(a.consecutive, vec_bb, gat_bb);
  B.SetInsertPoint(vec_bb);
  llvm::Value* v_vec = vector_load(vt, a.base, align, m);
  vec_bb = B.GetInsertBlock();
  B.CreateBr(join);
  B.SetInsertPoint(gat_bb);
  llvm::Value* v_gat = B.CreateMaskedGather(vt, ptrs, align, m, llvm::PoisonValue::get(vt));
  B.CreateBr(join);
  B.SetInsertPoint(join);
  llvm::PHINode* phi = B.CreatePHI(vt, 3);
  phi->addIncoming(v_uni, uni_bb);
  phi->addIncoming(v_vec, vec_bb);
  phi->addIncoming(v_gat, gat_bb);
  return phi;
}

void Lowerer::store_lanes(llvm::Value* v, llvm::Value* ptrs, llvm::Align align, llvm::Value* m) {
  llvm::Type* scalar = llvm::cast<llvm::VectorType>(v->getType())->getElementType();
  LaneAddresses a = classify(*this, ptrs, m, M->getDataLayout().getTypeStoreSize(scalar));
  llvm::Function* f = B.GetInsertBlock()->getParent();
  auto* vec_bb = llvm::BasicBlock::Create(C, "st.vector", f);
  auto* sca_bb = llvm::BasicBlock::Create(C, "st.scatter", f);
  auto* join = llvm::BasicBlock::Create(C, "st.join", f);
  B.CreateCondBr(a.consecutive, vec_bb, sca_bb);
  B.SetInsertPoint(vec_bb);
  vector_store(v, a.base, align, m);
  B.CreateBr(join);
  B.SetInsertPoint(sca_bb);
  B.CreateMaskedScatter(v, ptrs, align, m);
  B.CreateBr(join);
  B.SetInsertPoint(join);
}

}  // namespace coopvk::jit

namespace coopvk::jit {

llvm::Value* Lowerer::if_else(llvm::Value* cond, const std::function<llvm::Value*()>& fast,
                              const std::function<llvm::Value*()>& slow) {
  if (!cond) return fast();
  llvm::Function* f = B.GetInsertBlock()->getParent();
  auto* fast_bb = llvm::BasicBlock::Create(C, "aff.exact", f);
  auto* slow_bb = llvm::BasicBlock::Create(C, "aff.wrapped", f);
  auto* join = llvm::BasicBlock::Create(C, "aff.join", f);
  // The slow side is the rare case: a wrapped index (a negative offset made good by the
  // lane's part), the end of a buffer under robust access.
  B.CreateCondBr(cond, fast_bb, slow_bb, llvm::MDBuilder(C).createLikelyBranchWeights());
  B.SetInsertPoint(fast_bb);
  llvm::Value* x = fast();
  fast_bb = B.GetInsertBlock();
  B.CreateBr(join);
  B.SetInsertPoint(slow_bb);
  llvm::Value* y = slow();
  slow_bb = B.GetInsertBlock();
  B.CreateBr(join);
  B.SetInsertPoint(join);
  if (!x) return nullptr;
  llvm::PHINode* phi = B.CreatePHI(x->getType(), 2);
  phi->addIncoming(x, fast_bb);
  phi->addIncoming(y, slow_bb);
  return phi;
}

llvm::Value* Lowerer::load_vector_lanes(Id t, llvm::Value* ptrs, llvm::Value* m, uint32_t align_hint) {
  const TypeInfo& ti = type(t);
  const TypeInfo& et = type(ti.elem);
  if (et.op != uint16_t(spv::Op::OpTypeInt) && et.op != uint16_t(spv::Op::OpTypeFloat)) return nullptr;
  const MemLayout el = layout(ti.elem);
  const uint64_t esz = el.size, c = ti.count;
  auto a = affine(ptrs);
  if (!a || a->stride <= 0 || esz == 0) return nullptr;
  const uint64_t S = uint64_t(a->stride);
  // k elements of the block belong to each lane, the first c of them its vector's. Past
  // 16 per lane (or 4 KiB a block) the wide access reads more than it uses.
  const uint64_t k = S / esz;
  if (S % esz != 0 || k < c || k > 16 || S * N > 4096) return nullptr;
  llvm::Type* st = scalar_type(ti.elem);
  auto* wt = llvm::FixedVectorType::get(st, unsigned(k * N));
  const llvm::Align align(std::min<uint32_t>(el.align, align_hint ? align_hint : el.align));
  // Element j of the block belongs to lane j / k, component j % k.
  std::vector<int> lane_of(k * N);
  for (uint64_t j = 0; j < k * N; ++j) lane_of[j] = int(j / k);
  llvm::Value* lane_mask = B.CreateShuffleVector(m, lane_of);
  auto wide_load = [&]() -> llvm::Value* {
    if (k == c) return vector_load(wt, a->base, align, lane_mask);  // the lanes tile the block
    // The block ends with S - c*esz bytes no lane reads. A plain load of it is safe when
    // every lane is active and those bytes lie in the page of the last byte a lane reads
    // (memory is mapped in whole pages); else a masked load of exactly the lanes' parts.
    std::vector<llvm::Constant*> used(k * N);
    for (uint64_t j = 0; j < k * N; ++j) used[j] = B.getInt1(j % k < c);
    llvm::Value* elem_mask = B.CreateAnd(lane_mask, llvm::ConstantVector::get(used));
    llvm::Value* base = B.CreatePtrToInt(a->base, B.getInt64Ty());
    llvm::Value* last_read = B.CreateAdd(base, B.getInt64((N - 1) * S + c * esz - 1));
    llvm::Value* last_block = B.CreateAdd(base, B.getInt64(N * S - 1));
    llvm::Value* same_page = B.CreateICmpEQ(B.CreateLShr(last_read, 12), B.CreateLShr(last_block, 12));
    llvm::Value* all = B.CreateAndReduce(m);
    if (auto* cm = llvm::dyn_cast<llvm::Constant>(m); cm && cm->isAllOnesValue()) all = B.getTrue();
    llvm::Function* f = B.GetInsertBlock()->getParent();
    auto* plain_bb = llvm::BasicBlock::Create(C, "vll.plain", f);
    auto* masked_bb = llvm::BasicBlock::Create(C, "vll.masked", f);
    auto* join = llvm::BasicBlock::Create(C, "vll.join", f);
    B.CreateCondBr(B.CreateAnd(all, same_page), plain_bb, masked_bb, llvm::MDBuilder(C).createLikelyBranchWeights());
    B.SetInsertPoint(plain_bb);
    llvm::Value* p = B.CreateAlignedLoad(wt, a->base, align);
    B.CreateBr(join);
    B.SetInsertPoint(masked_bb);
    llvm::Value* q = B.CreateMaskedLoad(wt, a->base, align, elem_mask, llvm::PoisonValue::get(wt));
    B.CreateBr(join);
    B.SetInsertPoint(join);
    llvm::PHINode* phi = B.CreatePHI(wt, 2);
    phi->addIncoming(p, plain_bb);
    phi->addIncoming(q, masked_bb);
    return phi;
  };
  // Under robust access, the wide path needs every lane's vector in bounds; a block at the
  // end of the buffer goes component by component.
  llvm::Value* cond = a->exact;
  if (checking) {
    llvm::Value* ok = in_bounds(a->base, (N - 1) * S + c * esz);
    if (ok->getType()->isVectorTy()) ok = B.CreateAndReduce(ok);
    cond = cond ? B.CreateAnd(cond, ok) : ok;
  }
  return if_else(cond, [&] {
    llvm::Value* block = wide_load();
    llvm::Value* out = llvm::PoisonValue::get(lane_rep_type(t));
    std::vector<int> pick(N);
    for (uint64_t i = 0; i < c; ++i) {
      for (uint32_t l = 0; l < N; ++l) pick[l] = int(l * k + i);
      out = B.CreateInsertValue(out, B.CreateShuffleVector(block, pick), unsigned(i));
    }
    return out;
  }, [&] { return load_parts(t, ptrs, m, align_hint); });
}

}  // namespace coopvk::jit
