// Values of the lowering: where an id's rep comes from in the current block, the two
// reps (per lane and uniform) and the conversions between them (see lowerer.h).
#include <llvm/IR/Constants.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

bool Lowerer::is_uniform(Id id) const {
  if (!uniformity) return false;
  return !uniformity->is_divergent(id);
}

llvm::Value* Lowerer::to_lanes(llvm::Value* u) {
  return map_leaves(u, [&](llvm::Value* x) { return B.CreateVectorSplat(N, x); });
}

llvm::Value* Lowerer::to_uniform(llvm::Value* v) {
  // The first active lane holds a defined value even where other lanes were masked off.
  llvm::Value* lane = first_active_lane(mask);
  return map_leaves(v, [&](llvm::Value* x) { return B.CreateExtractElement(x, lane); });
}

Val Lowerer::value_v(Id id) {
  if (auto it = F.values.find(id); it != F.values.end()) return it->second;
  if (auto it = F.entry_values.find(id); it != F.entry_values.end()) return it->second;
  if (auto it = F.params.find(id); it != F.params.end()) return {it->second, is_object(id) || F.rep_ptrs.count(id) > 0};
  if (auto it = F.affine_slots.find(id); it != F.affine_slots.end()) return {rebuild_affine(it->second), false};

  if (auto it = F.slots.find(id); it != F.slots.end())
    return {B.CreateLoad(it->second->getAllocatedType(), it->second), is_uniform(id)};
  if (is_constant(id)) {
    bool saved = scalar_mode;
    scalar_mode = true;
    llvm::Value* c = constant(id);
    scalar_mode = saved;
    return {c, true};
  }
  if (auto it = global_vars.find(id); it != global_vars.end()) {
    const GlobalVar& g = it->second;
    if (g.storage == uint32_t(spv::StorageClass::Workgroup)) {
      llvm::Value* ws = ctx_field(kCtxWorkgroup);
      llvm::Value* shared = B.CreateLoad(B.getPtrTy(), B.CreateConstGEP1_64(B.getInt8Ty(), ws, 16));
      return {B.CreateConstGEP1_64(B.getInt8Ty(), shared, g.offset), true};
    }
    llvm::Value* base = B.CreateConstGEP1_64(B.getInt8Ty(), ctx_field(kCtxPrivate), g.offset);
    if (g.rep_layout) return {base, true};
    // Private and Input in per-lane memory: lane l's copy is at offset + l * lane_size.
    llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), N);
    llvm::Value* offs = B.CreateMul(B.CreateZExt(lane_index(), i64v), B.CreateVectorSplat(N, B.getInt64(g.lane_size)));
    return {B.CreateGEP(B.getInt8Ty(), B.CreateVectorSplat(N, base), offs), false};
  }
  const Instruction* g = m.global(id);
  if (g && g->opcode == uint16_t(spv::Op::OpVariable)) return {buffer_variable_pointer(*g), true};
  fail("id " + std::to_string(id) + " is used where it is not available");
}

llvm::Value* Lowerer::value(Id id) {
  Val v = value_v(id);
  if (is_object(id)) return v.v;  // a matrix: one rep in both modes
  if (scalar_mode) return v.uniform ? v.v : to_uniform(v.v);
  if (!v.uniform) return v.v;
  if (llvm::isa<llvm::Constant>(v.v)) return to_lanes(v.v);  // folds
  auto it = F.splats.find(id);
  if (it != F.splats.end()) return it->second;
  llvm::Value* s = to_lanes(v.v);
  F.splats[id] = s;
  return s;
}

void Lowerer::define(Id id, llvm::Value* v) { define_v(id, {v, scalar_mode}); }

void Lowerer::define_v(Id id, Val v) {
  if (raw_define) {
    F.values[id] = v;
    return;
  }
  const bool want_uniform = is_uniform(id);
  if (is_object(id)) v.uniform = true;  // a matrix (or an aggregate of them) never converts
  else if (v.uniform != want_uniform) v = {want_uniform ? to_uniform(v.v) : to_lanes(v.v), want_uniform};
  F.values[id] = v;
  F.splats.erase(id);
  if (F.current_block == 0) F.entry_values[id] = v;
  if (auto it = F.slots.find(id); it != F.slots.end()) {
    // Only values that lanes can still need after leaving a divergent loop keep the
    // inactive lanes' old contents (lowerer.h); any other reader ran this block with
    // its own lanes.
    if (F.masked_slot.count(id)) {
      llvm::Value* old = B.CreateLoad(it->second->getAllocatedType(), it->second);
      B.CreateStore(merge_rep(type_of(id), mask, v.v, old), it->second);
    } else {
      B.CreateStore(v.v, it->second);
      store_affine_base(id, v);
    }
  }
}

// Only for slots written whole (not masked_slot): the slot then holds exactly the vector
// the affine form describes, in every lane.
void Lowerer::store_affine_base(Id id, const Val& v) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v.v->getType());
  if (v.uniform || !vt || !(vt->getElementType()->isIntegerTy() || vt->getElementType()->isPointerTy())) return;
  auto found = F.affine_slots.find(id);
  if (found == F.affine_slots.end()) {
    // An id has one definition, so one form; decided the first (only) time it is defined.
    auto a = affine(v.v);
    if (!a) return;
    FunctionState::AffineSlot s{entry_alloca(a->base->getType()), a->off};
    if (a->exact) {
      s.exact = entry_alloca(B.getInt1Ty());
      s.value = F.slots.at(id);  // define_v stored the value there
    }
    found = F.affine_slots.emplace(id, s).first;
  }
  auto a = affine(v.v);
  const FunctionState::AffineSlot& s = found->second;
  if (!a || a->off != s.off || bool(a->exact) != bool(s.exact)) fail("internal: lane-affine value changed form");
  B.CreateStore(a->base, s.base);
  if (s.exact) B.CreateStore(a->exact, s.exact);
}

llvm::Value* Lowerer::rebuild_affine(const FunctionState::AffineSlot& s) {
  llvm::Type* t = s.base->getAllocatedType();
  llvm::Value* base = B.CreateVectorSplat(N, B.CreateLoad(t, s.base));
  std::vector<llvm::Constant*> steps;
  llvm::Type* step_t = t->isPointerTy() ? B.getInt64Ty() : t;
  for (uint32_t l = 0; l < N; ++l) steps.push_back(llvm::ConstantInt::get(step_t, uint64_t(s.off[l]), true));
  llvm::Value* offsets = llvm::ConstantVector::get(steps);
  llvm::Value* rebuilt = t->isPointerTy() ? B.CreateGEP(B.getInt8Ty(), base, offsets) : B.CreateAdd(base, offsets);
  if (!s.exact) return rebuilt;
  // The form where its test passed, the value itself where not: always the value, and
  // affine() sees the form with the test (its Select case).
  llvm::Value* exact = B.CreateLoad(B.getInt1Ty(), s.exact);
  llvm::Value* stored = B.CreateLoad(s.value->getAllocatedType(), s.value);
  return B.CreateSelect(B.CreateVectorSplat(N, exact), rebuilt, stored);
}

}  // namespace coopvk::jit
