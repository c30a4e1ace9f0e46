// Functions, blocks and structured control flow (the model is in lowerer.h).
//
// Blocks are emitted in the structured order of cfg.h. Each block has a mask slot: the
// lanes waiting to run it. Two kinds of control transfer exist:
//  - A *direct* edge sends every active lane to its target, which runs next: a plain
//    LLVM branch. An edge is direct when its branch is unconditional or uniform and the
//    jump skips no block that could have lanes waiting: a loop's back edge, a branch to
//    the next block in the order, or a target inside the outermost construct around the
//    source that no divergent construct separates from it (safe_range). There, every
//    lane of the construct is at the source block, so nothing between can be pending.
//  - Any other edge hands over a subset of the lanes (send): they are OR-ed into the
//    target's mask slot and the emitted code falls through, in order, to the next block
//    with a "check": the block runs if any lane waits for it, else is skipped. A back
//    edge then returns to its loop header while lanes wait there.
// A block all of whose incoming edges are direct needs no check and no OR: its mask is
// whatever the edge brought (mem2reg turns the slot into a phi). A loop whose exits are
// uniform thus becomes an ordinary LLVM loop that the unroller, LICM and SCEV understand.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>

#include <algorithm>
#include <cstring>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

Lowerer::Lowerer(const Module& mod, const CompileOptions& o, llvm::LLVMContext& ctx)
    : m(mod), opts(o), C(ctx), B(ctx) {
  N = o.subgroup_size ? o.subgroup_size : default_subgroup_size();
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  B.setFastMathFlags(fmf);
}

llvm::AllocaInst* Lowerer::entry_alloca(llvm::Type* t, uint64_t count, uint32_t align) {
  llvm::IRBuilder<> eb(F.entry, F.entry->begin());
  auto* a = eb.CreateAlloca(t, count == 1 ? nullptr : eb.getInt64(count));
  // At least the type's own alignment: loads and stores of it are emitted assuming that
  // (a <8 x float> store says align 32), and a smaller slot faults on aligned moves.
  llvm::Align want = std::max(llvm::Align(align), M->getDataLayout().getPrefTypeAlign(t));
  a->setAlignment(want);
  return a;
}

llvm::Value* Lowerer::ctx_field(CtxField f) {
  if (f == kCtxDispatch && F.dispatch_state) return F.dispatch_state;
  if (f == kCtxWorkgroup && F.workgroup_state) return F.workgroup_state;
  return B.CreateLoad(ctx_type->getElementType(f), B.CreateStructGEP(ctx_type, F.ctx, f));
}

void Lowerer::invariant(llvm::Value* v) {
  if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(v))
    ld->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(C, {}));
}

// ---- edges ----------------------------------------------------------------------------

bool Lowerer::transfers_all_lanes(const Instruction& t) const {
  switch (static_cast<spv::Op>(t.opcode)) {
    case spv::Op::OpBranch:
      return true;
    case spv::Op::OpBranchConditional:
      return t.operands.at(1) == t.operands.at(2) || is_uniform(t.operands.at(0));
    case spv::Op::OpSwitch:
      return is_uniform(t.operands.at(0));
    default:
      return false;
  }
}

std::pair<uint32_t, uint32_t> Lowerer::safe_range(uint32_t b) const {
  const FunctionCfg& g = F.fu->cfg;
  // Up from the innermost construct while constructs are uniform. A header sees its own
  // construct from the outside: no lane is inside it yet.
  int32_t c = g.innermost[b];
  int32_t last = -1;
  bool first = true;
  while (c >= 0) {
    bool own_header = first && g.header_of[b] == c;
    if (F.fu->construct_divergent[c] && !own_header) break;
    last = c;
    c = g.constructs[c].parent;
    first = false;
  }
  if (c < 0) return {0, uint32_t(g.order.size())};  // no divergent construct around b
  if (last < 0) return {1, 0};                       // directly inside a divergent one
  return {g.constructs[last].begin, g.constructs[last].end};
}

bool Lowerer::direct_edge(uint32_t from, uint32_t to) const {
  const FunctionCfg& g = F.fu->cfg;
  if (!transfers_all_lanes(F.fn->blocks[from].body.back())) return false;
  uint32_t pf = g.position[from], pt = g.position[to];
  if (pf == kNoBlock || pt == kNoBlock) return false;
  if (pt <= pf) {
    // A back edge to the header of a loop around `from`: the lanes that took it are all
    // the loop still has in this iteration.
    int32_t c = g.header_of[to];
    return c >= 0 && g.constructs[c].loop && g.in_construct(from, c);
  }
  if (pt == pf + 1) return true;
  auto [lo, hi] = safe_range(from);
  return pt >= lo && pt <= hi;
}

llvm::BasicBlock* Lowerer::next_check(uint32_t p) const {
  for (; p < F.check_bb.size(); ++p)
    if (F.check_bb[p]) return F.check_bb[p];
  return F.exit_bb;
}

void Lowerer::store_phi_inputs(uint32_t to, llvm::Value* edge_mask, bool direct) {
  const Block& from_blk = F.fn->blocks[F.current_block];
  const Block& to_blk = F.fn->blocks[to];
  for (const Instruction& in : to_blk.body) {
    if (in.opcode != uint16_t(spv::Op::OpPhi)) continue;
    for (size_t k = 0; k + 1 < in.operands.size(); k += 2) {
      if (in.operands[k + 1] != from_blk.label) continue;
      llvm::AllocaInst* slot = F.phi_slots.at(in.result);
      if (holds_coopvec(in.result_type)) {
        // The components, not the pointer: the incoming value's buffer is rewritten when
        // its definition runs again (lowerer.h).
        bool all = direct && F.direct_only[to];
        coopvec_copy(in.result_type, slot, value_v(in.operands[k]).v, all ? nullptr : edge_mask);
        continue;
      }
      bool uniform = is_uniform(in.result);
      bool saved = scalar_mode;
      scalar_mode = uniform;
      llvm::Value* v = value(in.operands[k]);
      scalar_mode = saved;
      if (direct && (uniform || F.direct_only[to])) {
        // Every lane that arrives now comes this way (or, uniform, with this value).
        B.CreateStore(v, slot);
      } else {
        llvm::Value* old = B.CreateLoad(slot->getAllocatedType(), slot);
        llvm::Value* cond = uniform ? any(edge_mask) : edge_mask;
        B.CreateStore(merge_rep(in.result_type, cond, v, old), slot);
      }
      if (!uniform) store_induction_form(in, to, v);
    }
  }
}

// A loop header's per-lane phi whose value enters with a lane pattern (Affine) and comes
// round with the same one, as a block-stride loop's counter `for (v = tid; v < n; v += 256)`
// does: besides its slot, the phi keeps the pattern's uniform base and whether this round's
// value had the pattern, so that addresses built from it inside the loop stay lane
// patterns (windows, vector accesses) instead of gathers. Every lane that comes round a
// loop's back edge comes in the same round, and the lanes that left no longer read it,
// so one base serves all lanes that use the value.
void Lowerer::store_induction_form(const Instruction& phi, uint32_t to, llvm::Value* v) {
  const FunctionCfg& g = F.fu->cfg;
  const int32_t c = g.header_of[to];
  if (c < 0 || !g.constructs[c].loop) return;
  // A value read after a divergent loop keeps each lane's own last value (masked_slot); the
  // form, one base for the lanes still running, would not.
  if (F.masked_slot.count(phi.result)) return;
  // Integers and pointers only, as store_affine_base (lower_values.cpp).
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (!vt || !(vt->getElementType()->isIntegerTy() || vt->getElementType()->isPointerTy())) return;
  auto a = affine(v);
  auto it = F.affine_slots.find(phi.result);
  if (it == F.affine_slots.end()) {
    // Decided by the edge that enters the loop, lowered before the header.
    if (!F.induction_candidates.insert(phi.result).second || !a) return;
    FunctionState::AffineSlot s{entry_alloca(a->base->getType()), a->off};
    s.exact = entry_alloca(B.getInt1Ty());  // stored on every edge in, before any read
    s.value = F.phi_slots.at(phi.result);
    it = F.affine_slots.emplace(phi.result, s).first;
  }
  const FunctionState::AffineSlot& s = it->second;
  if (a && a->off == s.off && a->base->getType() == s.base->getAllocatedType()) {
    B.CreateStore(a->base, s.base);
    B.CreateStore(a->exact ? a->exact : B.getTrue(), s.exact);
  } else {
    B.CreateStore(B.getFalse(), s.exact);
  }
}

void Lowerer::take_edge(uint32_t to) {
  store_phi_inputs(to, mask, true);
  llvm::AllocaInst* slot = F.mask_slots[to];
  if (F.direct_only[to]) {
    B.CreateStore(mask, slot);
    B.CreateBr(F.body_bb[to]);
    return;
  }
  B.CreateStore(B.CreateOr(B.CreateLoad(slot->getAllocatedType(), slot), mask), slot);
  B.CreateBr(F.check_bb[F.fu->cfg.position[to]]);
}

void Lowerer::send(uint32_t to, llvm::Value* lanes_mask) {
  store_phi_inputs(to, lanes_mask, false);
  llvm::AllocaInst* slot = F.mask_slots[to];
  B.CreateStore(B.CreateOr(B.CreateLoad(slot->getAllocatedType(), slot), lanes_mask), slot);
}

void Lowerer::finish_block(const std::vector<uint32_t>& sent) {
  const FunctionCfg& g = F.fu->cfg;
  uint32_t pos = g.position[F.current_block];
  // Back edges: return to the earliest header that now has lanes waiting.
  std::vector<uint32_t> back;
  for (uint32_t t : sent)
    if (g.position[t] <= pos) back.push_back(g.position[t]);
  std::sort(back.begin(), back.end());
  back.erase(std::unique(back.begin(), back.end()), back.end());
  for (uint32_t target : back) {
    llvm::AllocaInst* slot = F.mask_slots[g.order[target]];
    llvm::Value* waiting = any(B.CreateLoad(slot->getAllocatedType(), slot));
    auto* next = llvm::BasicBlock::Create(C, "", F.llvm_fn);
    B.CreateCondBr(waiting, F.check_bb[target], next);
    B.SetInsertPoint(next);
  }
  B.CreateBr(next_check(pos + 1));
}

// ---- functions ----------------------------------------------------------------------------

void Lowerer::lower_function(const Function& fn, bool is_entry) {
  (void)is_entry;
  F = FunctionState{};
  F.fn = &fn;
  F.llvm_fn = functions.at(fn.def.result);
  F.fu = &uniformity->functions.at(size_t(&fn - m.functions.data()));
  const FunctionCfg& g = F.fu->cfg;
  llvm::Function* lf = F.llvm_fn;
  F.entry = llvm::BasicBlock::Create(C, "entry", lf);
  auto arg = lf->arg_begin();
  F.ctx = &*arg++;
  llvm::Value* entry_mask = &*arg++;
  for (const Instruction& p : fn.params) {
    F.params[p.result] = &*arg++;
    F.value_types[p.result] = p.result_type;
    if (rep_pointer_type(p.result_type)) F.rep_ptrs.insert(p.result);
  }
  if (holds_coopvec(fn.def.result_type)) F.coopvec_ret = &*arg++;  // the caller's result buffer
  for (uint32_t i = 0; i < fn.blocks.size(); ++i) {
    F.block_index[fn.blocks[i].label] = i;
    for (const Instruction& in : fn.blocks[i].body)
      if (in.result) {
        F.block_of[in.result] = i;
        if (in.result_type) F.value_types[in.result] = in.result_type;
      }
  }
  B.SetInsertPoint(F.entry);
  // The dispatch's and the workgroup's state stay where they are for the whole call: loaded
  // once here, what is read from them can leave loops that call kernels (which LLVM must
  // otherwise assume write the context).
  F.dispatch_state = ctx_field(kCtxDispatch);
  F.workgroup_state = ctx_field(kCtxWorkgroup);
  plan_coopvec_lifetimes();
  // Values read outside their block get a slot of their rep (uniform or per lane).
  for (Id v : F.fu->temporal) F.masked_slot[v] = true;
  for (uint32_t i = 0; i < fn.blocks.size(); ++i)
    for (const Instruction& in : fn.blocks[i].body)
      for (uint16_t k : in.id_operands) {
        Id w = in.operands[k];
        auto it = F.block_of.find(w);
        if (it == F.block_of.end() || it->second == i || it->second == 0 || F.slots.count(w)) continue;
        auto vt = F.value_types.find(w);
        if (vt == F.value_types.end()) continue;  // a label, not a value
        if (static_cast<spv::Op>(type(vt->second).op) == spv::Op::OpTypeVoid) continue;
        llvm::Type* rt = is_uniform(w) ? urep_type(vt->second) : lane_rep_type(vt->second);
        auto* slot = entry_alloca(rt);
        B.CreateStore(llvm::Constant::getNullValue(rt), slot);
        F.slots[w] = slot;
      }
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body)
      if (in.opcode == uint16_t(spv::Op::OpPhi)) {
        check_types(in);
        if (holds_coopvec(in.result_type)) {
          // Where the incoming edges leave the components (emit_block copies them out).
          F.phi_slots[in.result] = entry_alloca(coopvec_buffer_type(in.result_type), 1, 64);
          coopvec_frame_bytes += coopvec_buffer_bytes(in.result_type);
          continue;
        }
        llvm::Type* rt = is_uniform(in.result) ? urep_type(in.result_type) : lane_rep_type(in.result_type);
        auto* slot = entry_alloca(rt);
        B.CreateStore(llvm::Constant::getNullValue(rt), slot);
        F.phi_slots[in.result] = slot;
      }
  llvm::Type* ret_t = lf->getReturnType();
  if (!ret_t->isVoidTy()) {
    F.ret_slot = entry_alloca(ret_t);
    B.CreateStore(llvm::Constant::getNullValue(ret_t), F.ret_slot);
  }

  plan_packed_operands();

  const uint32_t nb = uint32_t(fn.blocks.size());
  llvm::Type* mask_t = llvm::FixedVectorType::get(B.getInt1Ty(), N);
  F.mask_slots.assign(nb, nullptr);
  for (uint32_t b = 0; b < nb; ++b) {
    F.mask_slots[b] = entry_alloca(mask_t);
    B.CreateStore(llvm::Constant::getNullValue(mask_t), F.mask_slots[b]);
  }
  B.CreateStore(entry_mask, F.mask_slots[0]);

  F.direct_only.assign(nb, 0);
  F.direct_only[0] = 1;  // the entry block: SPIR-V forbids branches to it
  for (uint32_t b = 1; b < nb; ++b) {
    if (g.position[b] == kNoBlock) continue;
    bool any_pred = false, all_direct = true;
    for (uint32_t p : g.pred[b]) {
      if (g.position[p] == kNoBlock) continue;  // never emitted, never runs
      any_pred = true;
      all_direct = all_direct && direct_edge(p, b);
    }
    F.direct_only[b] = any_pred && all_direct;
  }
  F.header_mask.assign(g.constructs.size(), nullptr);
  F.merge_of.assign(nb, -1);
  for (size_t c = 0; c < g.constructs.size(); ++c) {
    const Construct& k = g.constructs[c];
    if (k.loop || !F.fu->construct_divergent[c]) continue;
    bool escapes = false;
    for (uint32_t p = k.begin; p < k.end && !escapes; ++p) {
      uint32_t x = g.order[p];
      if (g.succ[x].empty()) escapes = true;  // a return, or the end of the lanes
      for (uint32_t t : g.succ[x])
        if (t != k.merge && !g.in_construct(t, int32_t(c))) escapes = true;
    }
    if (escapes) continue;
    F.header_mask[c] = entry_alloca(mask_t);
    F.merge_of[k.merge] = int32_t(c);
  }
  F.body_bb.assign(nb, nullptr);
  F.check_bb.assign(g.order.size(), nullptr);
  for (uint32_t p = 0; p < g.order.size(); ++p) {
    uint32_t b = g.order[p];
    std::string label = std::to_string(fn.blocks[b].label);
    if (!F.direct_only[b]) F.check_bb[p] = llvm::BasicBlock::Create(C, "check." + label, lf);
    F.body_bb[b] = llvm::BasicBlock::Create(C, "block." + label, lf);
  }
  F.exit_bb = llvm::BasicBlock::Create(C, "exit", lf);
  B.CreateBr(F.body_bb[0]);

  for (uint32_t p = 0; p < g.order.size(); ++p) emit_block(p);

  B.SetInsertPoint(F.exit_bb);
  end_shared_packs();
  if (ret_t->isVoidTy()) B.CreateRetVoid();
  else B.CreateRet(B.CreateLoad(ret_t, F.ret_slot));
}

void Lowerer::emit_block(uint32_t pos) {
  const FunctionCfg& g = F.fu->cfg;
  const uint32_t index = g.order[pos];
  const Block& blk = F.fn->blocks[index];
  llvm::AllocaInst* slot = F.mask_slots[index];
  llvm::Type* mask_t = slot->getAllocatedType();
  if (!F.direct_only[index]) {
    B.SetInsertPoint(F.check_bb[pos]);
    llvm::Value* m_in = B.CreateLoad(mask_t, slot);
    B.CreateCondBr(any(m_in), F.body_bb[index], next_check(pos + 1));
    B.SetInsertPoint(F.body_bb[index]);
    mask = m_in;
    if (int32_t c = F.merge_of[index]; c >= 0) mask = B.CreateLoad(mask_t, F.header_mask[c]);
    B.CreateStore(llvm::Constant::getNullValue(mask_t), slot);  // consumed
  } else {
    B.SetInsertPoint(F.body_bb[index]);
    mask = B.CreateLoad(mask_t, slot);
  }
  if (int32_t c = g.header_of[index]; c >= 0 && F.header_mask[c]) B.CreateStore(mask, F.header_mask[c]);
  F.values.clear();
  F.splats.clear();
  F.current_block = index;
  emit_subgroup_yield(index);
  const std::vector<std::vector<Id>> coopvec_ends = coopvec_block_ends(blk);
  for (size_t j = 0; j < blk.body.size(); ++j) {
    const Instruction& in = blk.body[j];
    if (is_block_terminator(in.opcode)) break;
    if (in.opcode == uint16_t(spv::Op::OpPhi)) {
      llvm::AllocaInst* ps = F.phi_slots.at(in.result);
      if (holds_coopvec(in.result_type)) {
        llvm::Value* buf = coopvec_buffer(in.result, in.result_type);
        coopvec_copy(in.result_type, buf, ps, mask);
        define_v(in.result, {buf, true});
        continue;
      }
      if (auto it = F.affine_slots.find(in.result); it != F.affine_slots.end()) {
        define_v(in.result, {rebuild_affine(it->second), false});  // store_induction_form
        continue;
      }
      define_v(in.result, {B.CreateLoad(ps->getAllocatedType(), ps), is_uniform(in.result)});
      continue;
    }
    emit_instruction(in);
    end_coopvec_lifetimes(coopvec_ends[j]);
  }
  emit_terminator(blk.body.back());
}

void Lowerer::emit_terminator(const Instruction& t) {
  check_types(t);
  const FunctionCfg& g = F.fu->cfg;
  const uint32_t here = F.current_block;
  const auto& o = t.operands;
  auto target = [&](Id label) { return g.block(label); };
  // One way out for all lanes: a direct branch, or a hand-over followed by the order.
  auto all_to = [&](uint32_t to) {
    if (direct_edge(here, to)) {
      take_edge(to);
    } else {
      send(to, mask);
      finish_block({to});
    }
  };
  // A uniform choice among targets: an LLVM branch or switch to one edge block each.
  auto uniform_choice = [&](const std::vector<uint32_t>& targets, auto make_branch) {
    std::vector<llvm::BasicBlock*> edge_bbs;
    for (size_t k = 0; k < targets.size(); ++k) edge_bbs.push_back(llvm::BasicBlock::Create(C, "edge", F.llvm_fn));
    make_branch(edge_bbs);
    for (size_t k = 0; k < targets.size(); ++k) {
      B.SetInsertPoint(edge_bbs[k]);
      all_to(targets[k]);
    }
  };
  switch (static_cast<spv::Op>(t.opcode)) {
    case spv::Op::OpBranch:
      all_to(target(o.at(0)));
      return;
    case spv::Op::OpBranchConditional: {
      uint32_t tt = target(o.at(1)), ff = target(o.at(2));
      if (tt == ff) {
        all_to(tt);
        return;
      }
      if (is_uniform(o[0])) {
        bool saved = scalar_mode;
        scalar_mode = true;
        llvm::Value* c = value(o[0]);
        scalar_mode = saved;
        uniform_choice({tt, ff}, [&](auto& bbs) { B.CreateCondBr(c, bbs[0], bbs[1]); });
        return;
      }
      llvm::Value* c = value(o[0]);
      send(tt, B.CreateAnd(mask, c));
      send(ff, B.CreateAnd(mask, B.CreateNot(c)));
      finish_block({tt, ff});
      return;
    }
    case spv::Op::OpSwitch: {
      // (selector, default, literal, label, ...): labels are the id operands after the
      // default; a literal is one or two words wide, like the selector.
      unsigned width = type(type_of(o.at(0))).width;
      size_t lit_words = width > 32 ? 2 : 1;
      std::vector<std::pair<uint64_t, uint32_t>> cases;
      for (size_t i = 2; i + lit_words < o.size() + 1 && i + lit_words <= o.size() - 1; i += lit_words + 1) {
        uint64_t lit = o[i];
        if (lit_words == 2) lit |= uint64_t(o[i + 1]) << 32;
        cases.push_back({lit, target(o[i + lit_words])});
      }
      uint32_t def = target(o.at(1));
      if (is_uniform(o[0])) {
        bool saved = scalar_mode;
        scalar_mode = true;
        llvm::Value* sel = value(o[0]);
        scalar_mode = saved;
        std::vector<uint32_t> targets{def};
        for (auto& [lit, to] : cases) targets.push_back(to);
        uniform_choice(targets, [&](auto& bbs) {
          auto* sw = B.CreateSwitch(sel, bbs[0], unsigned(cases.size()));
          std::vector<uint64_t> seen;
          for (size_t k = 0; k < cases.size(); ++k) {
            if (std::find(seen.begin(), seen.end(), cases[k].first) != seen.end()) continue;  // first wins
            seen.push_back(cases[k].first);
            sw->addCase(llvm::ConstantInt::get(llvm::cast<llvm::IntegerType>(sel->getType()), cases[k].first), bbs[k + 1]);
          }
        });
        return;
      }
      llvm::Value* sel = value(o[0]);
      llvm::Value* remaining = mask;
      std::map<uint32_t, llvm::Value*> per_target;
      for (auto& [lit, to] : cases) {
        llvm::Value* hit = B.CreateAnd(remaining, B.CreateICmpEQ(sel, splat(B.getIntN(width, lit))));
        remaining = B.CreateAnd(remaining, B.CreateNot(hit));
        per_target[to] = per_target.count(to) ? B.CreateOr(per_target[to], hit) : hit;
      }
      per_target[def] = per_target.count(def) ? B.CreateOr(per_target[def], remaining) : remaining;
      std::vector<uint32_t> sent;
      for (auto& [to, lanes_mask] : per_target) {
        send(to, lanes_mask);
        sent.push_back(to);
      }
      finish_block(sent);
      return;
    }
    case spv::Op::OpReturnValue: {
      if (F.coopvec_ret) {
        coopvec_copy(F.fn->def.result_type, F.coopvec_ret, value_v(o.at(0)).v, mask);
        goto lanes_stop;
      }
      llvm::Value* old = B.CreateLoad(F.ret_slot->getAllocatedType(), F.ret_slot);
      B.CreateStore(merge_rep(F.fn->def.result_type, mask, value(o.at(0)), old), F.ret_slot);
      [[fallthrough]];
    }
    case spv::Op::OpReturn:
    case spv::Op::OpUnreachable:
    case spv::Op::OpKill:
    case spv::Op::OpTerminateInvocation: {
    lanes_stop:
      // The lanes stop here. With no divergent construct around, no other lane waits
      // anywhere: the function is done.
      auto [lo, hi] = safe_range(here);
      if (lo == 0 && hi == g.order.size()) B.CreateBr(F.exit_bb);
      else finish_block({});
      return;
    }
    default:
      fail("unexpected terminator", &t);
  }
}

}  // namespace coopvk::jit
