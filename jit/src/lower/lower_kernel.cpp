// The kernel: the one exported function, running one subgroup. It builds the context,
// computes the active lanes, materializes built-in inputs into per-lane memory and
// calls the entry point's lowered function.
#include <llvm/IR/Constants.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
constexpr uint64_t kNumWorkgroupsOffset = offsetof(DispatchState, num_workgroups);
}

llvm::Value* Lowerer::builtin_value(uint32_t builtin) {
  llvm::Type* i32v = lanes(B.getInt32Ty());
  auto uvec3 = [&](llvm::Value* x, llvm::Value* y, llvm::Value* z) {
    llvm::Value* r = llvm::PoisonValue::get(llvm::ArrayType::get(i32v, 3));
    r = B.CreateInsertValue(r, x, 0);
    r = B.CreateInsertValue(r, y, 1);
    return B.CreateInsertValue(r, z, 2);
  };
  llvm::Value* sg = ctx_field(kCtxSubgroup);
  llvm::Value* local_index = B.CreateAdd(splat(B.CreateMul(sg, B.getInt32(N))), lane_index());
  auto local_id = [&](int k) -> llvm::Value* {
    // When a subgroup never straddles a row (local_size.x is a multiple of its width), x
    // is the subgroup's first x plus the lane and y, z are uniform: build them that way
    // so memory accesses indexed by them are recognised as vector or scalar accesses.
    if (local_size[0] % N == 0) {
      llvm::Value* first = B.CreateMul(sg, B.getInt32(N));
      if (k == 0) return B.CreateAdd(splat(B.CreateURem(first, B.getInt32(local_size[0]))), lane_index());
      if (k == 1) return splat(B.CreateURem(B.CreateUDiv(first, B.getInt32(local_size[0])), B.getInt32(local_size[1])));
      return splat(B.CreateUDiv(first, B.getInt32(local_size[0] * local_size[1])));
    }
    if (k == 0) return B.CreateURem(local_index, splat(B.getInt32(local_size[0])));
    if (k == 1) return B.CreateURem(B.CreateUDiv(local_index, splat(B.getInt32(local_size[0]))), splat(B.getInt32(local_size[1])));
    return B.CreateUDiv(local_index, splat(B.getInt32(local_size[0] * local_size[1])));
  };
  auto wg_id = [&](int k) { return splat(ctx_field(CtxField(kCtxWorkgroupX + k))); };
  auto num_wg = [&](int k) {
    llvm::Value* ds = ctx_field(kCtxDispatch);
    llvm::Value* n = B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_64(B.getInt8Ty(), ds, kNumWorkgroupsOffset + 4 * k));
    invariant(n);
    return splat(n);
  };
  // Lane masks for SubgroupEq/Ge/Gt/Le/LtMask: a 64-bit mask per lane, split into uvec4.
  auto lane_mask = [&](auto make) {
    llvm::Type* i64v = lanes(B.getInt64Ty());
    llvm::Value* lane64 = B.CreateZExt(lane_index(), i64v);
    llvm::Value* valid = splat(B.getInt64(N >= 64 ? ~0ull : ((1ull << N) - 1)));
    llvm::Value* m64 = B.CreateAnd(make(lane64, i64v), valid);
    llvm::Value* lo = B.CreateTrunc(m64, i32v);
    llvm::Value* hi = B.CreateTrunc(B.CreateLShr(m64, splat(B.getInt64(32))), i32v);
    llvm::Value* zero = llvm::Constant::getNullValue(i32v);
    llvm::Value* r = llvm::PoisonValue::get(llvm::ArrayType::get(i32v, 4));
    r = B.CreateInsertValue(r, lo, 0);
    r = B.CreateInsertValue(r, hi, 1);
    r = B.CreateInsertValue(r, zero, 2);
    return B.CreateInsertValue(r, zero, 3);
  };
  llvm::Value* one64 = splat(B.getInt64(1));
  switch (static_cast<spv::BuiltIn>(builtin)) {
    case spv::BuiltIn::LocalInvocationIndex: return local_index;
    case spv::BuiltIn::LocalInvocationId: return uvec3(local_id(0), local_id(1), local_id(2));
    case spv::BuiltIn::WorkgroupId: return uvec3(wg_id(0), wg_id(1), wg_id(2));
    case spv::BuiltIn::NumWorkgroups: return uvec3(num_wg(0), num_wg(1), num_wg(2));
    case spv::BuiltIn::WorkgroupSize:
      return uvec3(splat(B.getInt32(local_size[0])), splat(B.getInt32(local_size[1])), splat(B.getInt32(local_size[2])));
    case spv::BuiltIn::GlobalInvocationId: {
      llvm::Value* g[3];
      for (int k = 0; k < 3; ++k) g[k] = B.CreateAdd(B.CreateMul(wg_id(k), splat(B.getInt32(local_size[k]))), local_id(k));
      return uvec3(g[0], g[1], g[2]);
    }
    case spv::BuiltIn::SubgroupId: return splat(sg);
    case spv::BuiltIn::NumSubgroups: {
      uint32_t inv = local_size[0] * local_size[1] * local_size[2];
      return splat(B.getInt32((inv + N - 1) / N));
    }
    case spv::BuiltIn::SubgroupSize: return splat(B.getInt32(N));
    case spv::BuiltIn::SubgroupLocalInvocationId: return lane_index();
    case spv::BuiltIn::SubgroupEqMask:
      return lane_mask([&](llvm::Value* l, llvm::Type*) { return B.CreateShl(one64, l); });
    case spv::BuiltIn::SubgroupGeMask:
      return lane_mask([&](llvm::Value* l, llvm::Type*) { return B.CreateShl(splat(B.getInt64(~0ull)), l); });
    case spv::BuiltIn::SubgroupGtMask:
      return lane_mask([&](llvm::Value* l, llvm::Type*) {
        return B.CreateShl(B.CreateShl(splat(B.getInt64(~0ull)), l), one64);
      });
    case spv::BuiltIn::SubgroupLeMask:
      return lane_mask([&](llvm::Value* l, llvm::Type*) {
        return B.CreateSub(B.CreateShl(B.CreateShl(one64, l), one64), one64);
      });
    case spv::BuiltIn::SubgroupLtMask:
      return lane_mask([&](llvm::Value* l, llvm::Type*) { return B.CreateSub(B.CreateShl(one64, l), one64); });
    default:
      fail("built-in " + std::to_string(builtin) + " is not supported in compute shaders");
  }
}

bool Lowerer::builtin_needs_memory(Id var) const {
  // Direct loads (possibly through an access chain with constant indices) are computed
  // on the spot by direct_builtin_load; anything else needs the value in memory.
  std::vector<Id> chains;
  for (const Function& fn : m.functions)
    for (const Block& b : fn.blocks)
      for (const Instruction& in : b.body)
        for (size_t k = 0; k < in.operands.size(); ++k) {
          if (in.operands[k] != var) continue;
          if (k == 0 && in.opcode == uint16_t(spv::Op::OpLoad)) continue;
          bool chain = k == 0 && (in.opcode == uint16_t(spv::Op::OpAccessChain) ||
                                  in.opcode == uint16_t(spv::Op::OpInBoundsAccessChain));
          if (!chain) return true;
          for (size_t i = 1; i < in.operands.size(); ++i)
            if (!is_constant(in.operands[i])) return true;
          chains.push_back(in.result);
        }
  for (Id c : chains)
    for (const Function& fn : m.functions)
      for (const Block& b : fn.blocks)
        for (const Instruction& in : b.body)
          for (size_t k = 0; k < in.operands.size(); ++k)
            if (in.operands[k] == c && !(k == 0 && in.opcode == uint16_t(spv::Op::OpLoad))) return true;
  return false;
}

llvm::Function* Lowerer::emit_subgroup_body(Id entry_fn) {
  // (dispatch, workgroup state, subgroup index, workgroup id x, y, z): the one subgroup
  // the entry points below run; always inlined into them.
  auto* fty = llvm::FunctionType::get(
      B.getVoidTy(), {B.getPtrTy(), B.getPtrTy(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty()}, false);
  auto* kf = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, "coopvk_subgroup_body", M.get());
  kf->addFnAttr(llvm::Attribute::AlwaysInline);
  F = FunctionState{};
  F.llvm_fn = kf;
  F.entry = llvm::BasicBlock::Create(C, "entry", kf);
  B.SetInsertPoint(F.entry);
  auto a = kf->arg_begin();
  llvm::Value* ds = &*a++;
  llvm::Value* ws = &*a++;
  llvm::Value* sg = &*a++;
  llvm::AllocaInst* ctx = entry_alloca(ctx_type, 1, 16);
  llvm::AllocaInst* priv = entry_alloca(B.getInt8Ty(), std::max<uint64_t>(private_block_bytes, 16), 64);
  B.CreateStore(ds, B.CreateStructGEP(ctx_type, ctx, kCtxDispatch));
  B.CreateStore(ws, B.CreateStructGEP(ctx_type, ctx, kCtxWorkgroup));
  B.CreateStore(sg, B.CreateStructGEP(ctx_type, ctx, kCtxSubgroup));
  B.CreateStore(priv, B.CreateStructGEP(ctx_type, ctx, kCtxPrivate));
  for (int k = 0; k < 3; ++k) B.CreateStore(&*a++, B.CreateStructGEP(ctx_type, ctx, kCtxWorkgroupX + k));
  F.ctx = ctx;

  // Lanes past the end of the workgroup (a partial last subgroup) stay inactive.
  uint32_t invocations = local_size[0] * local_size[1] * local_size[2];
  llvm::Value* local_index = B.CreateAdd(splat(B.CreateMul(sg, B.getInt32(N))), lane_index());
  // When every subgroup is full the mask is a constant, and LLVM folds what depends on it.
  mask = invocations % N == 0 ? llvm::ConstantInt::getTrue(lanes(B.getInt1Ty()))
                              : B.CreateICmpULT(local_index, splat(B.getInt32(invocations)));

  // Built-ins and Private initializers go to the per-lane private block.
  for (const Instruction& g : m.globals) {
    if (g.opcode != uint16_t(spv::Op::OpVariable)) continue;
    auto it = global_vars.find(g.result);
    if (it == global_vars.end()) continue;
    Id pointee = type(g.result_type).elem;
    if (it->second.storage == uint32_t(spv::StorageClass::Input)) {
      if (!builtin_needs_memory(g.result)) continue;  // every use is a direct load
      const Decoration* d = nullptr;
      if (!m.has_decoration(g.result, uint32_t(spv::Decoration::BuiltIn), &d) || d->args.empty())
        fail("Input variable without a BuiltIn decoration", &g);
      llvm::Value* v = builtin_value(d->args[0]);
      if (v->getType() != rep_type(pointee))
        fail("built-in " + std::to_string(d->args[0]) + " is declared with the wrong type", &g);
      store_rep(pointee, value_v(g.result).v, v, mask, 0);
    } else if (it->second.storage == uint32_t(spv::StorageClass::Private) && g.operands.size() > 1) {
      if (holds_coopvec(pointee)) coopvec_copy(pointee, value_v(g.result).v, value_v(g.operands[1]).v, nullptr);
      else if (it->second.rep_layout) B.CreateStore(value(g.operands[1]), value_v(g.result).v);
      else store_rep(pointee, value(g.result), value(g.operands[1]), mask, 0);
    }
  }
  B.CreateCall(functions.at(entry_fn), {ctx, mask});
  B.CreateRetVoid();
  return kf;
}

void Lowerer::emit_kernel(Id entry_fn) {
  llvm::Function* body = emit_subgroup_body(entry_fn);
  llvm::Type* i32 = B.getInt32Ty();
  llvm::Type* i64 = B.getInt64Ty();
  {
    // One subgroup of the workgroup in WorkgroupState::workgroup_id.
    auto* fty = llvm::FunctionType::get(B.getVoidTy(), {B.getPtrTy(), B.getPtrTy(), i32}, false);
    auto* kf = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, kKernelName, M.get());
    B.SetInsertPoint(llvm::BasicBlock::Create(C, "entry", kf));
    auto a = kf->arg_begin();
    llvm::Value* ds = &*a++;
    llvm::Value* ws = &*a++;
    llvm::Value* sg = &*a++;
    std::vector<llvm::Value*> args{ds, ws, sg};
    for (int k = 0; k < 3; ++k) args.push_back(B.CreateLoad(i32, B.CreateConstGEP1_64(B.getInt8Ty(), ws, 4 * k)));
    B.CreateCall(body, args);
    B.CreateRetVoid();
  }
  if (uses_barrier || shared_memory_bytes || interleaves_subgroups) return;
  // Workgroups [first, first + count), every subgroup of each (shader_abi.h).
  auto* fty = llvm::FunctionType::get(B.getVoidTy(), {B.getPtrTy(), B.getPtrTy(), i64, i64}, false);
  auto* rf = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, kRangeName, M.get());
  auto a = rf->arg_begin();
  llvm::Value* ds = &*a++;
  llvm::Value* ws = &*a++;
  llvm::Value* first = &*a++;
  llvm::Value* count = &*a++;
  auto* entry = llvm::BasicBlock::Create(C, "entry", rf);
  auto* wg_loop = llvm::BasicBlock::Create(C, "workgroup", rf);
  auto* sg_loop = llvm::BasicBlock::Create(C, "subgroup", rf);
  auto* wg_next = llvm::BasicBlock::Create(C, "workgroup.next", rf);
  auto* done = llvm::BasicBlock::Create(C, "done", rf);
  B.SetInsertPoint(entry);
  llvm::Value* dims[3];
  llvm::Value* base[3];
  for (int k = 0; k < 3; ++k) {
    dims[k] = B.CreateZExt(B.CreateLoad(i32, B.CreateConstGEP1_64(B.getInt8Ty(), ds, kNumWorkgroupsOffset + 4 * k)), i64);
    base[k] = B.CreateLoad(i32, B.CreateConstGEP1_64(B.getInt8Ty(), ds, offsetof(DispatchState, base_workgroup) + 4 * k));
  }
  llvm::Value* end = B.CreateAdd(first, count);
  B.CreateCondBr(B.CreateICmpULT(first, end), wg_loop, done);
  B.SetInsertPoint(wg_loop);
  llvm::PHINode* i = B.CreatePHI(i64, 2);
  i->addIncoming(first, entry);
  llvm::Value* nxy = B.CreateMul(dims[0], dims[1]);
  llvm::Value* id[3] = {B.CreateURem(i, dims[0]), B.CreateURem(B.CreateUDiv(i, dims[0]), dims[1]), B.CreateUDiv(i, nxy)};
  for (int k = 0; k < 3; ++k) id[k] = B.CreateAdd(B.CreateTrunc(id[k], i32), base[k]);
  B.CreateBr(sg_loop);
  B.SetInsertPoint(sg_loop);
  llvm::PHINode* s = B.CreatePHI(i32, 2);
  s->addIncoming(B.getInt32(0), wg_loop);
  B.CreateCall(body, {ds, ws, s, id[0], id[1], id[2]});
  uint32_t invocations = local_size[0] * local_size[1] * local_size[2];
  llvm::Value* s_next = B.CreateAdd(s, B.getInt32(1));
  s->addIncoming(s_next, sg_loop);
  B.CreateCondBr(B.CreateICmpULT(s_next, B.getInt32((invocations + N - 1) / N)), sg_loop, wg_next);
  B.SetInsertPoint(wg_next);
  llvm::Value* i_next = B.CreateAdd(i, llvm::ConstantInt::get(i64, 1));
  i->addIncoming(i_next, wg_next);
  B.CreateCondBr(B.CreateICmpULT(i_next, end), wg_loop, done);
  B.SetInsertPoint(done);
  B.CreateRetVoid();
}

}  // namespace coopvk::jit
