// Fast paths for memory accesses: recognise addresses that are the same for every lane
// (one scalar access) or consecutive across lanes (one vector access) from the form of
// the IR this lowering built, instead of a gather/scatter per scalar.
#include <algorithm>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/TargetParser/Host.h>

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
// No lane's value base + o wrapped: base <= the type's maximum - max o.
llvm::Value* no_wrap(llvm::IRBuilder<>& b, llvm::Value* base, uint64_t max_off) {
  const uint64_t umax = llvm::APInt::getMaxValue(base->getType()->getIntegerBitWidth()).getZExtValue();
  return b.CreateICmpULE(base, llvm::ConstantInt::get(base->getType(), umax - max_off));
}
}  // namespace

Lowerer::Affine Lowerer::make_affine(llvm::Value* base, std::vector<int64_t> off, llvm::Value* exact) const {
  Affine a{base, 0, exact, std::move(off)};
  const int64_t s = a.off.size() > 1 ? a.off[1] : 0;
  for (size_t l = 0; l < a.off.size() && a.stride != Affine::kIrregular; ++l)
    if (a.off[l] != s * int64_t(l)) a.stride = Affine::kIrregular;
  if (a.stride != Affine::kIrregular) a.stride = s;
  return a;
}

std::optional<Lowerer::Affine> Lowerer::affine(llvm::Value* v, int depth) {
  auto a = affine_scaled(v, depth);
  if (a && a->scale) return std::nullopt;
  return a;
}

namespace {
// x + sign * y of two forms' run-time terms: false where they scale different values.
bool add_scaled(const Lowerer::Affine& x, const Lowerer::Affine& y, int64_t sign, uint32_t N, Lowerer::Affine* out) {
  if (x.scale && y.scale && x.scale != y.scale) return false;
  out->scale = x.scale ? x.scale : y.scale;
  if (!out->scale) return true;
  out->coef.assign(N, 0);
  for (uint32_t l = 0; l < N; ++l)
    out->coef[l] = (x.scale ? x.coef[l] : 0) + sign * (y.scale ? y.coef[l] : 0);
  out->stride = Lowerer::Affine::kIrregular;
  return true;
}
Lowerer::Affine with_scale(Lowerer::Affine a, llvm::Value* scale, std::vector<int64_t> coef) {
  a.scale = scale;
  a.coef = std::move(coef);
  if (scale) a.stride = Lowerer::Affine::kIrregular;
  return a;
}
}  // namespace

// (base + o) / d and (base + o) % d for a divisor d known only at run time (a uniform:
// ggml's element-wise shaders split a flat index into a tensor's coordinates by its
// dimensions, from push constants). With r = base % d the lanes' values stay in one multiple
// of d when r + max o < d: the quotient is base / d in every lane and the remainder r + o.
// Both that and d != 0 are tested at run time (Affine::exact); a zero d divides by one there.
std::optional<Lowerer::Affine> Lowerer::divide_by_uniform(llvm::IRBuilder<>& b, unsigned op, const Affine& x,
                                                          const Affine& y) {
  if (op != llvm::Instruction::UDiv && op != llvm::Instruction::URem) return std::nullopt;
  if (x.scale || y.scale || y.stride != 0) return std::nullopt;
  llvm::Type* t = x.base->getType();
  if (!t->isIntegerTy() || t->getIntegerBitWidth() > 32 || y.base->getType() != t) return std::nullopt;
  int64_t max_off = 0;
  for (int64_t o : x.off) {
    if (o < 0) return std::nullopt;
    max_off = std::max(max_off, o);
  }
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* nonzero = b.CreateICmpNE(y.base, zero);
  llvm::Value* d = b.CreateSelect(nonzero, y.base, llvm::ConstantInt::get(t, 1));
  llvm::Value* r = b.CreateURem(x.base, d);
  // r + max o < d, in 64 bits (no wrap), and x's own values did not wrap (base + max o fits).
  llvm::Value* r64 = b.CreateZExt(r, b.getInt64Ty()), *d64 = b.CreateZExt(d, b.getInt64Ty());
  llvm::Value* within = b.CreateICmpULT(b.CreateAdd(r64, b.getInt64(uint64_t(max_off))), d64);
  llvm::Value* exact = b.CreateAnd(b.CreateAnd(nonzero, within), no_wrap(b, x.base, uint64_t(max_off)));
  if (x.exact) exact = b.CreateAnd(exact, x.exact);
  if (y.exact) exact = b.CreateAnd(exact, y.exact);
  if (op == llvm::Instruction::UDiv) return make_affine(b.CreateUDiv(x.base, d), std::vector<int64_t>(N, 0), exact);
  return make_affine(r, x.off, exact);
}

std::optional<Lowerer::Affine> Lowerer::affine_scaled(llvm::Value* v, int depth) {
  if (depth > 12) return std::nullopt;
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (!vt || vt->getNumElements() != N) return std::nullopt;
  const std::vector<int64_t> zero(N, 0);
  if (auto* c = llvm::dyn_cast<llvm::Constant>(v)) {
    if (llvm::Constant* s = c->getSplatValue()) return make_affine(s, zero);
    if (!vt->getElementType()->isIntegerTy()) return std::nullopt;
    auto* c0 = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(0u));
    if (!c0) return std::nullopt;
    std::vector<int64_t> off(N);
    for (unsigned i = 0; i < N; ++i) {
      auto* ci = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(i));
      if (!ci) return std::nullopt;
      off[i] = ci->getSExtValue() - c0->getSExtValue();
    }
    return make_affine(c0, off);
  }
  if (auto* sv = llvm::dyn_cast<llvm::ShuffleVectorInst>(v)) {
    if (sv->isZeroEltSplat())
      if (auto* ie = llvm::dyn_cast<llvm::InsertElementInst>(sv->getOperand(0)))
        if (auto* idx = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2)); idx && idx->isZero())
          return make_affine(ie->getOperand(1), zero);
    return std::nullopt;
  }
  auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
  if (!inst) return std::nullopt;
  // Scalar rebuilds go just before the vector instruction: its operands (and so their
  // bases) are defined above it.
  llvm::IRBuilder<> b(inst);
  auto operands = [&]() -> std::optional<std::pair<Affine, Affine>> {
    auto x = affine_scaled(inst->getOperand(0), depth + 1);
    auto y = x ? affine_scaled(inst->getOperand(1), depth + 1) : std::nullopt;
    if (!y) return std::nullopt;
    return std::make_pair(std::move(*x), std::move(*y));
  };
  auto uniform_constant = [](const Affine& a) -> llvm::ConstantInt* {
    return a.stride == 0 ? llvm::dyn_cast<llvm::ConstantInt>(a.base) : nullptr;
  };
  // Add, Sub, Mul and Shl keep the form exactly in the type's modular arithmetic, so
  // they only pass their operands' conditions on.
  switch (inst->getOpcode()) {
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub: {
      auto xy = operands();
      if (!xy) return std::nullopt;
      auto& [x, y] = *xy;
      bool add = inst->getOpcode() == llvm::Instruction::Add;
      std::vector<int64_t> off(N);
      for (uint32_t l = 0; l < N; ++l) off[l] = add ? x.off[l] + y.off[l] : x.off[l] - y.off[l];
      llvm::Value* base = add ? b.CreateAdd(x.base, y.base) : b.CreateSub(x.base, y.base);
      Affine r = make_affine(base, off, both(b, x.exact, y.exact));
      if (!add_scaled(x, y, add ? 1 : -1, N, &r)) return std::nullopt;
      return r;
    }
    case llvm::Instruction::Mul: {
      auto xy = operands();
      if (!xy) return std::nullopt;
      auto& [x, y] = *xy;
      llvm::Value* exact = both(b, x.exact, y.exact);
      if (x.stride == 0 && y.stride == 0) return make_affine(b.CreateMul(x.base, y.base), zero, exact);
      if (x.stride == 0) std::swap(x, y);
      if (y.stride != 0) return std::nullopt;  // both vary across lanes
      llvm::ConstantInt* k = uniform_constant(y);
      if (!k) {
        // Times a run-time uniform: the lane offsets become the run-time term's coefficients
        // ((b + o) s == b s + o s in modular arithmetic).
        if (x.scale) return std::nullopt;
        return with_scale(make_affine(b.CreateMul(x.base, y.base), zero, exact), y.base, x.off);
      }
      std::vector<int64_t> off(N), coef;
      for (uint32_t l = 0; l < N; ++l) off[l] = x.off[l] * k->getSExtValue();
      if (x.scale)
        for (uint32_t l = 0; l < N; ++l) coef.push_back(x.coef[l] * k->getSExtValue());
      return with_scale(make_affine(b.CreateMul(x.base, k), off, exact), x.scale, coef);
    }
    case llvm::Instruction::Shl: {
      auto xy = operands();
      if (!xy || xy->second.stride != 0) return std::nullopt;
      auto& [x, y] = *xy;
      llvm::Value* exact = both(b, x.exact, y.exact);
      if (auto* k = uniform_constant(y); k && k->getZExtValue() < 63) {
        std::vector<int64_t> off(N), coef;
        for (uint32_t l = 0; l < N; ++l) off[l] = x.off[l] << k->getZExtValue();
        if (x.scale)
          for (uint32_t l = 0; l < N; ++l) coef.push_back(x.coef[l] << k->getZExtValue());
        return with_scale(make_affine(b.CreateShl(x.base, k), off, exact), x.scale, coef);
      }
      if (x.stride == 0) return make_affine(b.CreateShl(x.base, y.base), zero, exact);
      return std::nullopt;
    }
    case llvm::Instruction::UDiv:
    case llvm::Instruction::LShr:
    case llvm::Instruction::URem:
    case llvm::Instruction::And: {
      // With lane offsets o >= 0, a divisor d (a power of two for shifts and masks) and
      // r = base % d: (base + o) / d == base / d + o / d and (base + o) % d == r + o % d
      // when no lane's value wrapped (base + max o fits the type) and no lane carries into
      // the next multiple of d (r + max(o % d) < d; always so when d divides every o).
      // ggml indexes its vec4 and f16vec2 arrays as (offset + 4*tid) / 4, and its quantized
      // blocks as col / 32 and col % 32; a 16x16 workgroup run as subgroups of 32 has
      // gl_LocalInvocationID.y == (32 * subgroup + lane) / 16 % 16, whose r is 2 * subgroup
      // % 16, never 0 mod 16 past the first subgroup. The conditions are tested at run time
      // (Affine::exact).
      auto xy = operands();
      if (!xy || xy->second.stride != 0) return std::nullopt;
      auto& [x, y] = *xy;
      const unsigned op = inst->getOpcode();
      llvm::Value* exact = both(b, x.exact, y.exact);
      if (x.stride == 0) {
        llvm::Value* r = op == llvm::Instruction::UDiv   ? b.CreateUDiv(x.base, y.base)
                         : op == llvm::Instruction::LShr ? b.CreateLShr(x.base, y.base)
                         : op == llvm::Instruction::URem ? b.CreateURem(x.base, y.base)
                                                         : b.CreateAnd(x.base, y.base);
        return make_affine(r, zero, exact);
      }
      llvm::ConstantInt* k = uniform_constant(y);
      unsigned bits = x.base->getType()->isIntegerTy() ? x.base->getType()->getIntegerBitWidth() : 0;
      if (bits == 0 || bits > 64) return std::nullopt;
      if (!k) return divide_by_uniform(b, op, x, y);
      // A run-time term: its scale must be a multiple of d (tested at run time), its
      // coefficients >= 0, and the whole value must not wrap (tested in 64 bits).
      if (x.scale && bits > 32) return std::nullopt;
      const uint64_t kv = k->getZExtValue();
      const uint64_t umax = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
      // The operation as division (q) or remainder (r) by d, or keeping the high bits of And.
      uint64_t d = 0;
      enum { Quotient, Remainder, RoundDown } kind = Quotient;
      if (op == llvm::Instruction::UDiv) d = kv;
      else if (op == llvm::Instruction::LShr) d = kv < 63 ? uint64_t(1) << kv : 0;
      else if (op == llvm::Instruction::URem) d = kv, kind = Remainder;
      else if (kv != 0 && ((kv + 1) & kv) == 0) d = kv + 1, kind = Remainder;  // x & (2^n - 1)
      else if (uint64_t low = ~kv & umax; ((low + 1) & low) == 0) d = low + 1, kind = RoundDown;  // x & ~(2^n - 1)
      if (d == 0 || d > umax) return std::nullopt;
      int64_t max_off = 0;
      uint64_t max_rem = 0;  // max(o % d): r must stay below d - max_rem
      for (int64_t o : x.off) {
        if (o < 0) return std::nullopt;
        max_off = std::max(max_off, o);
        max_rem = std::max(max_rem, uint64_t(o) % d);
      }
      if (uint64_t(max_off) > umax) return std::nullopt;
      int64_t max_coef = 0;
      if (x.scale) {
        if (kind == RoundDown) return std::nullopt;
        for (int64_t c : x.coef) {
          if (c < 0 || c > (int64_t(1) << 20)) return std::nullopt;
          max_coef = std::max(max_coef, c);
        }
      }
      llvm::Value* fits = no_wrap(b, x.base, uint64_t(max_off));
      if (x.scale) {
        llvm::Value* total = b.CreateAdd(b.CreateAdd(b.CreateZExt(x.base, b.getInt64Ty()), b.getInt64(uint64_t(max_off))),
                                         b.CreateMul(b.CreateZExt(x.scale, b.getInt64Ty()), b.getInt64(uint64_t(max_coef))));
        fits = b.CreateICmpULE(total, b.getInt64(umax));
        llvm::Value* dv0 = llvm::ConstantInt::get(x.scale->getType(), d);
        fits = b.CreateAnd(fits, b.CreateICmpEQ(b.CreateURem(x.scale, dv0), llvm::ConstantInt::get(x.scale->getType(), 0)));
      }
      exact = both(b, exact, fits);
      llvm::Value* dv = llvm::ConstantInt::get(x.base->getType(), d);
      if (max_rem != 0)
        exact = both(b, exact, b.CreateICmpULT(b.CreateURem(x.base, dv),
                                               llvm::ConstantInt::get(x.base->getType(), d - max_rem)));
      std::vector<int64_t> off(N);
      switch (kind) {
        case Quotient:
          for (uint32_t l = 0; l < N; ++l) off[l] = int64_t(uint64_t(x.off[l]) / d);
          return with_scale(make_affine(b.CreateUDiv(x.base, dv), off, exact),
                            x.scale ? b.CreateUDiv(x.scale, llvm::ConstantInt::get(x.scale->getType(), d)) : nullptr,
                            x.coef);
        case Remainder:
          for (uint32_t l = 0; l < N; ++l) off[l] = int64_t(uint64_t(x.off[l]) % d);
          return make_affine(b.CreateURem(x.base, dv), off, exact);
        case RoundDown:
          for (uint32_t l = 0; l < N; ++l) off[l] = x.off[l] - int64_t(uint64_t(x.off[l]) % d);
          return make_affine(b.CreateSub(x.base, b.CreateURem(x.base, dv)), off, exact);
      }
      return std::nullopt;
    }
    case llvm::Instruction::SExt:
    case llvm::Instruction::ZExt:
    case llvm::Instruction::Trunc: {
      auto x = affine_scaled(inst->getOperand(0), depth + 1);
      if (!x) return std::nullopt;
      llvm::Type* st = vt->getElementType();
      llvm::Value* base = inst->getOpcode() == llvm::Instruction::SExt ? b.CreateSExtOrTrunc(x->base, st)
                          : inst->getOpcode() == llvm::Instruction::ZExt ? b.CreateZExtOrTrunc(x->base, st)
                                                                         : b.CreateTrunc(x->base, st);
      // Extending a lane-varying value is exact unless a lane wrapped in the narrow type,
      // which needs indices near 2^31: beyond maxStorageBufferRange.
      llvm::Value* scale = nullptr;
      if (x->scale) {
        if (inst->getOpcode() == llvm::Instruction::Trunc) return std::nullopt;
        scale = inst->getOpcode() == llvm::Instruction::SExt ? b.CreateSExtOrTrunc(x->scale, st) : b.CreateZExtOrTrunc(x->scale, st);
      }
      return with_scale(make_affine(base, x->off, x->exact), scale, x->coef);
    }
    case llvm::Instruction::Select: {
      // select(splat(e), form, value): a slotted form with its run-time test
      // (rebuild_affine); the form holds where e does.
      auto* sel = llvm::cast<llvm::SelectInst>(inst);
      auto cond = affine(sel->getCondition(), depth + 1);
      if (!cond || cond->stride != 0) return std::nullopt;
      auto x = affine_scaled(sel->getTrueValue(), depth + 1);
      if (!x) return std::nullopt;
      return with_scale(make_affine(x->base, x->off, both(b, x->exact, cond->base)), x->scale, x->coef);
    }
    case llvm::Instruction::ExtractValue: {
      // A component of a composite this lowering just built (a built-in's uvec3, say).
      auto* ev = llvm::cast<llvm::ExtractValueInst>(inst);
      llvm::Value* agg = ev->getAggregateOperand();
      while (auto* iv = llvm::dyn_cast<llvm::InsertValueInst>(agg)) {
        if (iv->getIndices() == ev->getIndices()) return affine_scaled(iv->getInsertedValueOperand(), depth + 1);
        agg = iv->getAggregateOperand();
      }
      return std::nullopt;
    }
    case llvm::Instruction::GetElementPtr: {
      auto* gep = llvm::cast<llvm::GetElementPtrInst>(inst);
      if (gep->getNumIndices() != 1 || !gep->getSourceElementType()->isIntegerTy(8)) return std::nullopt;
      // A byte offset (scalar or per lane) from a pointer (uniform or per lane): the patterns add.
      llvm::Value* ptr = gep->getPointerOperand();
      std::optional<Affine> p = ptr->getType()->isVectorTy() ? affine_scaled(ptr, depth + 1) : make_affine(ptr, zero);
      if (!p) return std::nullopt;
      llvm::Value* off = gep->getOperand(1);
      if (!off->getType()->isVectorTy())
        return with_scale(make_affine(b.CreateGEP(b.getInt8Ty(), p->base, off), p->off, p->exact), p->scale, p->coef);
      auto o = affine_scaled(off, depth + 1);
      if (!o) return std::nullopt;
      std::vector<int64_t> sum(N);
      for (uint32_t l = 0; l < N; ++l) sum[l] = p->off[l] + o->off[l];
      Affine r = make_affine(b.CreateGEP(b.getInt8Ty(), p->base, o->base), sum, both(b, p->exact, o->exact));
      if (!add_scaled(*p, *o, 1, N, &r)) return std::nullopt;
      return r;
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
void Lowerer::prefetch_ahead(llvm::Value* p, uint64_t bytes) {
  if (!streaming) return;
  llvm::Function* pf = llvm::Intrinsic::getDeclaration(M.get(), llvm::Intrinsic::prefetch, {p->getType()});
  // One per 64-byte line: read, keep in all cache levels, data.
  for (uint64_t at = 0; at < std::max<uint64_t>(bytes, 1); at += 64)
    B.CreateCall(pf, {B.CreateConstGEP1_64(B.getInt8Ty(), p, kPrefetchAhead + int64_t(at)), B.getInt32(0),
                      B.getInt32(3), B.getInt32(1)});
}

llvm::Value* Lowerer::vector_load(llvm::Type* vt, llvm::Value* ptr, llvm::Align align, llvm::Value* m) {
  prefetch_ahead(ptr, M->getDataLayout().getTypeStoreSize(vt));
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

namespace {
// The AVX-512 two-register permute for elements of `esz` bytes where the host has it
// (vpermi2w needs AVX512BW, vpermi2b AVX512VBMI), else null.
llvm::Intrinsic::ID two_register_permute(uint64_t esz) {
  static const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char* f) { auto it = host.find(f); return it != host.end() && it->second; };
  if (!has("avx512f")) return llvm::Intrinsic::not_intrinsic;
  switch (esz) {
    case 8: return llvm::Intrinsic::x86_avx512_vpermi2var_q_512;
    case 4: return llvm::Intrinsic::x86_avx512_vpermi2var_d_512;
    case 2: return has("avx512bw") ? llvm::Intrinsic::x86_avx512_vpermi2var_hi_512 : llvm::Intrinsic::not_intrinsic;
    case 1: return has("avx512vbmi") ? llvm::Intrinsic::x86_avx512_vpermi2var_qi_512 : llvm::Intrinsic::not_intrinsic;
    default: return llvm::Intrinsic::not_intrinsic;
  }
}
}  // namespace

// Lane l gets element pick[l] of the registers `regs` (64 bytes each, in order). LLVM
// lowers one shufflevector over many registers badly (16-bit elements one by one through
// the stack) and folds smaller shuffles of them back into one; so on AVX-512 a group of
// lanes whose elements lie in at most four registers looks them up with vpermi2{b,w,d,q},
// two registers a pass, each pass keeping the lanes whose element lies in its pair.
// Otherwise (more registers, or no AVX-512) one shufflevector over their concatenation.
llvm::Value* Lowerer::pick_lanes(const std::vector<llvm::Value*>& regs, const std::vector<int>& pick, uint64_t esz) {
  auto* rt = llvm::cast<llvm::FixedVectorType>(regs[0]->getType());
  const int R = int(rt->getNumElements());
  const int n = int(pick.size());
  const llvm::Intrinsic::ID permute = two_register_permute(esz);
  auto concat = [&](std::vector<llvm::Value*> parts) {
    while (parts.size() & (parts.size() - 1)) parts.push_back(llvm::PoisonValue::get(parts[0]->getType()));
    while (parts.size() > 1) {
      std::vector<llvm::Value*> next;
      for (size_t k = 0; k < parts.size(); k += 2) {
        int m = int(llvm::cast<llvm::FixedVectorType>(parts[k]->getType())->getNumElements());
        std::vector<int> cat(2 * m);
        for (int e = 0; e < 2 * m; ++e) cat[e] = e;
        next.push_back(B.CreateShuffleVector(parts[k], parts[k + 1], cat));
      }
      parts = std::move(next);
    }
    return parts[0];
  };
  // Registers each group of R lanes reads.
  int span = 0;
  for (int c0 = 0; c0 < n; c0 += R) {
    int lo = INT32_MAX, hi = 0;
    for (int l = c0; l < std::min(n, c0 + R); ++l) lo = std::min(lo, pick[l]), hi = std::max(hi, pick[l]);
    span = std::max(span, hi / R - lo / R + 1);
  }
  if (regs.size() == 1) return B.CreateShuffleVector(regs[0], pick);
  if (permute == llvm::Intrinsic::not_intrinsic || span > 4) return B.CreateShuffleVector(concat(regs), pick);
  llvm::Type* it = B.getIntNTy(unsigned(8 * esz));
  auto* irt = llvm::FixedVectorType::get(it, unsigned(R));
  std::vector<llvm::Value*> ints;
  for (llvm::Value* r : regs) ints.push_back(B.CreateBitCast(r, irt));
  llvm::Function* perm = llvm::Intrinsic::getDeclaration(M.get(), permute);
  // The indices pass through an empty asm: with them constant, InstCombine turns the
  // permute back into a shufflevector and merges it with the others.
  auto* opaque = llvm::InlineAsm::get(llvm::FunctionType::get(irt, {irt}, false), "", "=v,0", false);
  std::vector<llvm::Value*> chunks;
  for (int c0 = 0; c0 < n; c0 += R) {
    const int lanes = std::min(R, n - c0);
    int lo = INT32_MAX, hi = 0;
    for (int l = 0; l < lanes; ++l) lo = std::min(lo, pick[c0 + l]), hi = std::max(hi, pick[c0 + l]);
    llvm::Value* out = llvm::PoisonValue::get(irt);
    for (int r = lo / R; r <= hi / R; r += 2) {
      std::vector<llvm::Constant*> idx(R), keep(R);
      for (int l = 0; l < R; ++l) {
        int e = l < lanes ? pick[c0 + l] : -1;
        bool here = e >= r * R && e < (r + 2) * R;
        idx[l] = llvm::ConstantInt::get(it, here ? uint64_t(e - r * R) : 0);
        keep[l] = B.getInt1(here);
      }
      llvm::Value* second = r + 1 < int(ints.size()) ? ints[r + 1] : llvm::PoisonValue::get(irt);
      llvm::Value* indices = B.CreateCall(opaque, {llvm::ConstantVector::get(idx)});
      llvm::Value* got = B.CreateCall(perm, {ints[r], indices, second});
      out = r == lo / R ? got : B.CreateSelect(llvm::ConstantVector::get(keep), got, out);
    }
    if (lanes < R) {
      std::vector<int> first(lanes);
      for (int l = 0; l < lanes; ++l) first[l] = l;
      out = B.CreateShuffleVector(out, first);
    }
    chunks.push_back(out);
  }
  return B.CreateBitCast(concat(chunks), llvm::FixedVectorType::get(rt->getElementType(), unsigned(n)));
}

}  // namespace coopvk::jit
