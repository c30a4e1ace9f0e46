// Entry point, functions, blocks and masked structured control flow (see lowerer.h).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "lowerer.h"
#include "spirv_enums.h"

namespace coopvk::jit {

namespace {

bool is_terminator(uint16_t op) {
  switch (static_cast<spv::Op>(op)) {
    case spv::Op::OpBranch: case spv::Op::OpBranchConditional: case spv::Op::OpSwitch:
    case spv::Op::OpReturn: case spv::Op::OpReturnValue: case spv::Op::OpUnreachable:
    case spv::Op::OpKill: case spv::Op::OpTerminateInvocation:
      return true;
    default:
      return false;
  }
}

std::vector<Id> successors(const Block& b) {
  const Instruction& t = b.body.back();
  const auto& o = t.operands;
  switch (static_cast<spv::Op>(t.opcode)) {
    case spv::Op::OpBranch:
      return {o.at(0)};
    case spv::Op::OpBranchConditional:
      return {o.at(1), o.at(2)};
    case spv::Op::OpSwitch: {
      std::vector<Id> s{o.at(1)};
      // Literal width follows the selector; the caller validated 32-bit selectors below.
      for (size_t i = 2; i + 1 < o.size(); i += 2) s.push_back(o[i + 1]);
      return s;
    }
    default:
      return {};
  }
}

}  // namespace

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
  a->setAlignment(llvm::Align(align));
  return a;
}

llvm::Value* Lowerer::ctx_field(CtxField f) {
  return B.CreateLoad(ctx_type->getElementType(f), B.CreateStructGEP(ctx_type, F.ctx, f));
}

llvm::Value* Lowerer::value(Id id) {
  if (auto it = F.values.find(id); it != F.values.end()) return it->second;
  if (auto it = F.entry_values.find(id); it != F.entry_values.end()) return it->second;
  if (auto it = F.params.find(id); it != F.params.end()) return it->second;
  if (auto it = F.slots.find(id); it != F.slots.end())
    return B.CreateLoad(it->second->getAllocatedType(), it->second);
  if (is_constant(id)) return constant(id);
  if (auto it = global_vars.find(id); it != global_vars.end()) {
    const GlobalVar& g = it->second;
    if (g.storage == uint32_t(spv::StorageClass::Workgroup)) {
      llvm::Value* ws = ctx_field(kCtxWorkgroup);
      llvm::Value* shared = B.CreateLoad(B.getPtrTy(), B.CreateConstGEP1_64(B.getInt8Ty(), ws, 16));
      return splat(B.CreateConstGEP1_64(B.getInt8Ty(), shared, g.offset));
    }
    // Private and Input: lane l's copy is at offset + l * lane_size.
    llvm::Value* base = B.CreateConstGEP1_64(B.getInt8Ty(), ctx_field(kCtxPrivate), g.offset);
    llvm::Value* offs = B.CreateMul(B.CreateZExt(lane_index(), lanes(B.getInt64Ty())),
                                    splat(B.getInt64(g.lane_size)));
    return B.CreateGEP(B.getInt8Ty(), splat(base), offs);
  }
  const Instruction* g = m.global(id);
  if (g && g->opcode == uint16_t(spv::Op::OpVariable)) return buffer_variable_pointer(*g);
  fail("id " + std::to_string(id) + " is used where it is not available");
}

void Lowerer::define(Id id, llvm::Value* v) {
  F.values[id] = v;
  if (F.current_block == 0) F.entry_values[id] = v;
  if (auto it = F.slots.find(id); it != F.slots.end()) {
    llvm::Value* old = B.CreateLoad(it->second->getAllocatedType(), it->second);
    B.CreateStore(select_rep(mask, v, old), it->second);
  }
}

// ---- order --------------------------------------------------------------------------

std::vector<uint32_t> Lowerer::structured_order(const Function& fn) const {
  // Reverse post-order of a DFS that visits a header's merge block (and a loop's continue
  // target) before its other successors: the merge then lands after the whole construct,
  // so every block runs only after all its forward predecessors (lowerer.h).
  std::vector<uint32_t> post;
  std::vector<uint8_t> state(fn.blocks.size(), 0);
  std::function<void(uint32_t)> dfs = [&](uint32_t b) {
    state[b] = 1;
    const Block& blk = fn.blocks[b];
    std::vector<Id> next;
    if (blk.body.size() >= 2) {
      const Instruction& merge = blk.body[blk.body.size() - 2];
      if (merge.opcode == uint16_t(spv::Op::OpSelectionMerge)) next.push_back(merge.operands.at(0));
      if (merge.opcode == uint16_t(spv::Op::OpLoopMerge)) {
        next.push_back(merge.operands.at(0));
        next.push_back(merge.operands.at(1));
      }
    }
    for (Id s : successors(blk)) next.push_back(s);
    for (Id s : next) {
      auto it = F.block_index.find(s);
      if (it == F.block_index.end()) fail("branch to a label that is not a block of this function");
      if (!state[it->second]) dfs(it->second);
    }
    post.push_back(b);
  };
  dfs(0);
  std::reverse(post.begin(), post.end());
  return post;
}

// ---- functions ----------------------------------------------------------------------------

void Lowerer::lower_function(const Function& fn, bool is_entry) {
  F = FunctionState{};
  F.fn = &fn;
  F.llvm_fn = functions.at(fn.def.result);
  llvm::Function* lf = F.llvm_fn;
  F.entry = llvm::BasicBlock::Create(C, "entry", lf);
  auto arg = lf->arg_begin();
  F.ctx = &*arg++;
  llvm::Value* entry_mask = &*arg++;
  for (const Instruction& p : fn.params) {
    F.params[p.result] = &*arg++;
    F.value_types[p.result] = p.result_type;
  }

  for (uint32_t i = 0; i < fn.blocks.size(); ++i) {
    const Block& b = fn.blocks[i];
    if (b.body.empty() || !is_terminator(b.body.back().opcode))
      fail("block %" + std::to_string(b.label) + " does not end with a terminator");
    F.block_index[b.label] = i;
    for (const Instruction& in : b.body)
      if (in.result) {
        F.block_of[in.result] = i;
        if (in.result_type) F.value_types[in.result] = in.result_type;
      }
  }
  // Values read outside their block get a slot (see lowerer.h). Literal operands that
  // happen to equal an id only cost an unused slot.
  B.SetInsertPoint(F.entry);
  for (uint32_t i = 0; i < fn.blocks.size(); ++i)
    for (const Instruction& in : fn.blocks[i].body)
      for (uint32_t w : in.operands) {
        auto it = F.block_of.find(w);
        if (it == F.block_of.end() || it->second == i || it->second == 0 || F.slots.count(w)) continue;
        auto vt = F.value_types.find(w);
        if (vt == F.value_types.end()) continue;  // a label, not a value
        if (static_cast<spv::Op>(type(vt->second).op) == spv::Op::OpTypeVoid) continue;
        llvm::Type* rt = rep_type(vt->second);
        auto* slot = entry_alloca(rt);
        B.CreateStore(llvm::Constant::getNullValue(rt), slot);
        F.slots[w] = slot;
      }
  // Promotable Function variables: every use is a whole-variable load, or a store
  // through it (never the variable as a stored value, an access-chain base, a call
  // argument, ...).
  std::unordered_map<Id, bool> promotable;
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body)
      if (in.opcode == uint16_t(spv::Op::OpVariable)) {
        check_types(in);  // its type is used right below, before the block is lowered
        promotable[in.result] = true;
      }
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body)
      for (size_t k = 0; k < in.operands.size(); ++k) {
        auto it = promotable.find(in.operands[k]);
        if (it == promotable.end() || in.opcode == uint16_t(spv::Op::OpVariable)) continue;
        bool ok = k == 0 && (in.opcode == uint16_t(spv::Op::OpLoad) || in.opcode == uint16_t(spv::Op::OpStore));
        if (!ok) it->second = false;
      }
  // Promoted locals stored exactly once, in the entry block, and never read there before
  // that store, always hold that one value: loads take it directly.
  {
    std::unordered_map<Id, int> stores;
    std::unordered_map<Id, Id> stored;
    std::unordered_map<Id, bool> read_early;
    for (uint32_t bi = 0; bi < fn.blocks.size(); ++bi)
      for (const Instruction& in : fn.blocks[bi].body) {
        if (in.opcode == uint16_t(spv::Op::OpStore) && promotable.count(in.operands.at(0))) {
          Id var = in.operands[0];
          stores[var] += bi == 0 ? 1 : 1000;  // a store outside the entry block disqualifies
          stored[var] = in.operands.at(1);
        }
        if (in.opcode == uint16_t(spv::Op::OpLoad) && bi == 0 && promotable.count(in.operands.at(0)) &&
            !stores.count(in.operands[0]))
          read_early[in.operands[0]] = true;
        if (in.opcode == uint16_t(spv::Op::OpVariable) && in.operands.size() > 1) stores[in.result] += 1000;
      }
    for (auto& [var, n] : stores)
      if (n == 1 && promotable[var] && !read_early[var]) F.forwarded[var] = stored[var];
  }
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body)
      if (in.opcode == uint16_t(spv::Op::OpVariable) && promotable[in.result]) {
        llvm::Type* rt = rep_type(type(in.result_type).elem);
        auto* slot = entry_alloca(rt);
        B.CreateStore(llvm::Constant::getNullValue(rt), slot);
        F.promoted[in.result] = slot;
      }
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body)
      if (in.opcode == uint16_t(spv::Op::OpPhi)) {
        llvm::Type* rt = rep_type(in.result_type);
        auto* slot = entry_alloca(rt);
        B.CreateStore(llvm::Constant::getNullValue(rt), slot);
        F.phi_slots[in.result] = slot;
      }
  llvm::Type* ret_t = lf->getReturnType();
  if (!ret_t->isVoidTy()) {
    F.ret_slot = entry_alloca(ret_t);
    B.CreateStore(llvm::Constant::getNullValue(ret_t), F.ret_slot);
  }

  std::vector<uint32_t> order = structured_order(fn);
  std::vector<uint32_t> position(fn.blocks.size(), UINT32_MAX);
  for (uint32_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  std::vector<llvm::AllocaInst*> masks(fn.blocks.size(), nullptr);
  llvm::Type* mask_t = lanes(B.getInt1Ty());
  for (uint32_t b = 0; b < fn.blocks.size(); ++b) {
    masks[b] = entry_alloca(mask_t);
    B.CreateStore(llvm::Constant::getNullValue(mask_t), masks[b]);
  }
  B.CreateStore(entry_mask, masks[0]);
  (void)is_entry;

  // One "check" block per position, then the exit.
  std::vector<llvm::BasicBlock*> checks;
  for (uint32_t p = 0; p < order.size(); ++p)
    checks.push_back(llvm::BasicBlock::Create(C, "check." + std::to_string(fn.blocks[order[p]].label), lf));
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(C, "exit", lf);
  checks.push_back(exit);
  B.CreateBr(checks[0]);

  for (uint32_t p = 0; p < order.size(); ++p) emit_block(order[p], order, checks, masks, position);

  B.SetInsertPoint(exit);
  if (ret_t->isVoidTy()) B.CreateRetVoid();
  else B.CreateRet(B.CreateLoad(ret_t, F.ret_slot));
}

void Lowerer::emit_block(uint32_t index, const std::vector<uint32_t>& order,
                         std::vector<llvm::BasicBlock*>& checks, std::vector<llvm::AllocaInst*>& masks,
                         std::vector<uint32_t>& position) {
  const Block& blk = F.fn->blocks[index];
  uint32_t pos = position[index];
  llvm::Function* lf = F.llvm_fn;
  B.SetInsertPoint(checks[pos]);
  llvm::Type* mask_t = lanes(B.getInt1Ty());
  llvm::Value* m_in = B.CreateLoad(mask_t, masks[index]);
  auto* body = llvm::BasicBlock::Create(C, "block." + std::to_string(blk.label), lf, checks[pos + 1]);
  // The entry block always has lanes (functions are only called with some active) and
  // must dominate everything after it (see FunctionState::entry_values).
  if (index == 0) B.CreateBr(body);
  else B.CreateCondBr(any(m_in), body, checks[pos + 1]);

  B.SetInsertPoint(body);
  B.CreateStore(llvm::Constant::getNullValue(mask_t), masks[index]);  // consumed
  mask = m_in;
  F.values.clear();
  F.current_block = index;
  for (const Instruction& in : blk.body) {
    if (is_terminator(in.opcode)) break;
    if (in.opcode == uint16_t(spv::Op::OpPhi)) {
      check_types(in);
      define(in.result, B.CreateLoad(rep_type(in.result_type), F.phi_slots.at(in.result)));
      continue;
    }
    emit_instruction(in);
  }
  emit_terminator(blk.body.back(), masks);

  // Back edges: return to the earliest header that now has lanes waiting.
  std::vector<uint32_t> back;
  for (Id s : successors(blk)) {
    uint32_t si = F.block_index.at(s);
    if (position[si] <= pos) back.push_back(position[si]);
  }
  std::sort(back.begin(), back.end());
  back.erase(std::unique(back.begin(), back.end()), back.end());
  for (uint32_t target : back) {
    llvm::Value* waiting = any(B.CreateLoad(mask_t, masks[order[target]]));
    auto* next = llvm::BasicBlock::Create(C, "", lf, checks[pos + 1]);
    B.CreateCondBr(waiting, checks[target], next);
    B.SetInsertPoint(next);
  }
  B.CreateBr(checks[pos + 1]);
}

void Lowerer::store_phi_inputs(Id from_label, Id to_label, llvm::Value* edge_mask) {
  const Block& to = F.fn->blocks[F.block_index.at(to_label)];
  for (const Instruction& in : to.body) {
    if (in.opcode != uint16_t(spv::Op::OpPhi)) continue;
    for (size_t k = 0; k + 1 < in.operands.size(); k += 2) {
      if (in.operands[k + 1] != from_label) continue;
      llvm::AllocaInst* slot = F.phi_slots.at(in.result);
      llvm::Value* old = B.CreateLoad(slot->getAllocatedType(), slot);
      B.CreateStore(select_rep(edge_mask, value(in.operands[k]), old), slot);
    }
  }
}

void Lowerer::emit_terminator(const Instruction& t, std::vector<llvm::AllocaInst*>& masks) {
  check_types(t);
  const Block& blk = F.fn->blocks[F.current_block];
  llvm::Type* mask_t = lanes(B.getInt1Ty());
  auto send = [&](Id label, llvm::Value* lanes_mask) {
    llvm::AllocaInst* slot = masks.at(F.block_index.at(label));
    store_phi_inputs(blk.label, label, lanes_mask);
    B.CreateStore(B.CreateOr(B.CreateLoad(mask_t, slot), lanes_mask), slot);
  };
  const auto& o = t.operands;
  switch (static_cast<spv::Op>(t.opcode)) {
    case spv::Op::OpBranch:
      send(o.at(0), mask);
      break;
    case spv::Op::OpBranchConditional: {
      llvm::Value* c = value(o.at(0));
      if (o.at(1) == o.at(2)) {
        send(o[1], mask);
      } else {
        send(o[1], B.CreateAnd(mask, c));
        send(o[2], B.CreateAnd(mask, B.CreateNot(c)));
      }
      break;
    }
    case spv::Op::OpSwitch: {
      llvm::Value* sel = value(o.at(0));
      auto* vt = llvm::cast<llvm::VectorType>(sel->getType());
      unsigned width = vt->getElementType()->getIntegerBitWidth();
      size_t lit_words = width > 32 ? 2 : 1;
      llvm::Value* remaining = mask;
      std::vector<std::pair<Id, llvm::Value*>> cases;
      for (size_t i = 2; i + lit_words < o.size() + 0 && i + lit_words <= o.size() - 1; i += lit_words + 1) {
        uint64_t lit = o[i];
        if (lit_words == 2) lit |= uint64_t(o[i + 1]) << 32;
        Id label = o[i + lit_words];
        llvm::Value* hit = B.CreateAnd(mask, B.CreateICmpEQ(sel, splat(B.getIntN(width, lit))));
        remaining = B.CreateAnd(remaining, B.CreateNot(hit));
        cases.push_back({label, hit});
      }
      // Several cases may share a target: combine before handing lanes over.
      std::map<Id, llvm::Value*> per_target;
      for (auto& [label, hit] : cases)
        per_target[label] = per_target.count(label) ? B.CreateOr(per_target[label], hit) : hit;
      Id def = o.at(1);
      per_target[def] = per_target.count(def) ? B.CreateOr(per_target[def], remaining) : remaining;
      for (auto& [label, lanes_mask] : per_target) send(label, lanes_mask);
      break;
    }
    case spv::Op::OpReturn:
      break;
    case spv::Op::OpReturnValue: {
      llvm::Value* old = B.CreateLoad(F.ret_slot->getAllocatedType(), F.ret_slot);
      B.CreateStore(select_rep(mask, value(o.at(0)), old), F.ret_slot);
      break;
    }
    case spv::Op::OpUnreachable:
    case spv::Op::OpKill:
    case spv::Op::OpTerminateInvocation:
      break;  // the lanes stop here
    default:
      fail("unexpected terminator", &t);
  }
}

void Lowerer::emit_instruction(const Instruction& in) {
  switch (static_cast<spv::Op>(in.opcode)) {
    case spv::Op::OpSelectionMerge:
    case spv::Op::OpLoopMerge:
    case spv::Op::OpLine:
    case spv::Op::OpNoLine:
    case spv::Op::OpNop:
      return;
    case spv::Op::OpExtInst: {
      // Non-semantic instruction sets (debug info, printf) carry no behaviour.
      auto it = m.ext_inst_imports.find(in.operands.at(0));
      if (it != m.ext_inst_imports.end() && it->second.rfind("NonSemantic.", 0) == 0) return;
      break;
    }
    case spv::Op::OpFunctionCall: {
      llvm::Function* callee = functions.at(in.operands.at(0));
      std::vector<llvm::Value*> args{F.ctx, mask};
      for (size_t i = 1; i < in.operands.size(); ++i) args.push_back(value(in.operands[i]));
      llvm::Value* r = B.CreateCall(callee, args);
      if (!callee->getReturnType()->isVoidTy()) define(in.result, r);
      return;
    }
    case spv::Op::OpUndef:
      define(in.result, zero_rep(in.result_type));
      return;
    default:
      break;
  }
  check_types(in);
  // SPIR-V lets implementations fuse a multiply and an add unless the result is
  // decorated NoContraction (SPIR-V spec, NoContraction decoration).
  bool no_contract = in.result && m.has_decoration(in.result, uint32_t(spv::Decoration::NoContraction));
  if (no_contract) B.clearFastMathFlags();
  struct Restore {
    llvm::IRBuilder<>& b;
    bool on;
    ~Restore() {
      if (on) {
        llvm::FastMathFlags f;
        f.setAllowContract(true);
        b.setFastMathFlags(f);
      }
    }
  } restore{B, no_contract};
  if (lower_memory_op(in) || lower_arith(in) || lower_composite(in) || lower_conversion(in) ||
      lower_glsl(in) || lower_subgroup(in) || lower_atomic(in) || lower_barrier(in) ||
      lower_integer_dot(in))
    return;
  fail("instruction is not supported", &in);
}

// ---- module --------------------------------------------------------------------------------

std::unique_ptr<llvm::Module> Lowerer::lower() {
  const EntryPoint* ep = nullptr;
  for (const EntryPoint& e : m.entry_points)
    if (e.name == opts.entry_point && e.execution_model == uint32_t(spv::ExecutionModel::GLCompute)) ep = &e;
  if (!ep) fail("no GLCompute entry point named '" + opts.entry_point + "'");
  if (m.addressing_model != uint32_t(spv::AddressingModel::Logical) &&
      m.addressing_model != uint32_t(spv::AddressingModel::PhysicalStorageBuffer64))
    fail("addressing model " + std::to_string(m.addressing_model) + " is not supported");

  // Specialization constants by SpecId.
  for (const Instruction& g : m.globals) {
    const Decoration* d = nullptr;
    if (!spv_op_is_constant(g.opcode) || !m.has_decoration(g.result, uint32_t(spv::Decoration::SpecId), &d))
      continue;
    for (const SpecializationValue& sv : opts.specialization)
      if (!d->args.empty() && sv.constant_id == d->args[0]) spec_values_[g.result] = sv.bytes;
  }

  M = std::make_unique<llvm::Module>("coopvk_shader", C);
  ctx_type = llvm::StructType::create(C, {B.getPtrTy(), B.getPtrTy(), B.getInt32Ty(), B.getPtrTy()}, "KernelCtx");
  collect_types();

  // A throwaway function gives constant() (OpSpecConstantOp) an insertion point.
  auto* scratch_fn = llvm::Function::Create(llvm::FunctionType::get(B.getVoidTy(), false),
                                            llvm::GlobalValue::InternalLinkage, "scratch", M.get());
  B.SetInsertPoint(llvm::BasicBlock::Create(C, "", scratch_fn));

  // Workgroup size: LocalSize / LocalSizeId modes, overridden by a WorkgroupSize constant.
  for (const ExecutionMode& em : m.execution_modes) {
    if (em.entry_point != ep->function) continue;
    if (em.mode == uint32_t(spv::ExecutionMode::LocalSize) && em.args.size() >= 3)
      for (int k = 0; k < 3; ++k) local_size[k] = em.args[k];
    if (em.mode == uint32_t(spv::ExecutionMode::LocalSizeId) && em.args.size() >= 3)
      for (int k = 0; k < 3; ++k) local_size[k] = uint32_t(constant_u64(em.args[k]));
  }
  for (const Instruction& g : m.globals) {
    const Decoration* d = nullptr;
    if (spv_op_is_constant(g.opcode) && m.has_decoration(g.result, uint32_t(spv::Decoration::BuiltIn), &d) &&
        !d->args.empty() && d->args[0] == uint32_t(spv::BuiltIn::WorkgroupSize)) {
      if (g.operands.size() < 3) fail("WorkgroupSize constant needs three components", &g);
      for (int k = 0; k < 3; ++k) local_size[k] = uint32_t(constant_u64(g.operands[k]));
    }
  }
  uint64_t invocations = uint64_t(local_size[0]) * local_size[1] * local_size[2];
  if (invocations == 0 || invocations > 1024)
    fail("workgroup size " + std::to_string(local_size[0]) + "x" + std::to_string(local_size[1]) + "x" +
         std::to_string(local_size[2]) + " is outside 1..1024 invocations");
  if (opts.require_full_subgroups && invocations % N != 0)
    fail("full subgroups were required but the workgroup size is not a multiple of " + std::to_string(N));

  plan_globals();

  // Declare every function, then lower them.
  for (const Function& fn : m.functions) {
    const TypeInfo& ft = type(fn.def.operands.at(1));
    std::vector<llvm::Type*> params{B.getPtrTy(), lanes(B.getInt1Ty())};
    for (Id p : ft.members) params.push_back(rep_type(p));
    llvm::Type* ret = rep_type(fn.def.result_type);
    auto* lf = llvm::Function::Create(llvm::FunctionType::get(ret, params, false),
                                      llvm::GlobalValue::InternalLinkage,
                                      "spv_fn_" + std::to_string(fn.def.result), M.get());
    functions[fn.def.result] = lf;
  }
  for (const Function& fn : m.functions) lower_function(fn, fn.def.result == ep->function);
  emit_kernel(ep->function);
  scratch_fn->eraseFromParent();

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*M, &os)) fail("internal error: generated IR does not verify: " + os.str());
  return std::move(M);
}

}  // namespace coopvk::jit
