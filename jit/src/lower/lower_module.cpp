// The module: entry point, specialization, workgroup size, the uniformity analysis, and
// the dispatch of each instruction to the lowering of its family.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

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
      for (size_t i = 1; i < in.operands.size(); ++i) {
        Id a = in.operands[i];
        if (!rep_pointer_type(type_of(a))) {
          args.push_back(value(a));
          continue;
        }
        Val p = value_v(a);
        if (p.v->getType()->isVectorTy())  // the callee takes one object for all lanes
          fail("a pointer to a cooperative vector that differs between invocations is passed to a function", &in);
        args.push_back(p.v);
      }
      if (holds_coopvec(in.result_type)) {
        // The callee writes the returning lanes' components here (lower_function).
        llvm::Value* buf = coopvec_buffer(in.result, in.result_type);
        args.push_back(buf);
        if (args.size() != callee->arg_size()) fail("function call with the wrong number of arguments", &in);
        B.CreateCall(callee, args);
        define_v(in.result, {buf, true});
        return;
      }
      if (args.size() != callee->arg_size()) fail("function call with the wrong number of arguments", &in);
      llvm::Value* r = B.CreateCall(callee, args);
      if (!callee->getReturnType()->isVoidTy()) define(in.result, r);
      return;
    }
    case spv::Op::OpUndef:
      if (holds_coopvec(in.result_type)) {
        llvm::Value* buf = coopvec_buffer(in.result, in.result_type);
        B.CreateMemSet(buf, B.getInt8(0), coopvec_buffer_bytes(in.result_type), llvm::MaybeAlign(64));
        define_v(in.result, {buf, true});
        return;
      }
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
  // A uniform result of uniform operands is computed once, on scalars (lowerer.h).
  // Memory, subgroup and atomic operations take care of their reps themselves.
  bool scalar = in.result && is_uniform(in.result) && scalar_capable(in.opcode);
  for (uint16_t k : in.id_operands) scalar = scalar && is_uniform(in.operands[k]);
  struct Mode {
    bool& flag;
    bool saved;
    ~Mode() { flag = saved; }
  } mode{scalar_mode, scalar_mode};
  scalar_mode = scalar;
  if (lower_coopvec(in) || lower_coopmat(in) || lower_coopmat_ext(in) || lower_tensor(in) || lower_memory_op(in) || lower_arith(in) || lower_composite(in) || lower_conversion(in) ||
      lower_glsl(in) || lower_subgroup(in) || lower_atomic(in) || lower_barrier(in) ||
      lower_integer_dot(in))
    return;
  fail("instruction is not supported", &in);
}

bool Lowerer::scalar_capable(uint16_t opcode) {
  switch (static_cast<spv::Op>(opcode)) {
    case spv::Op::OpVariable: case spv::Op::OpLoad: case spv::Op::OpStore: case spv::Op::OpAccessChain:
    case spv::Op::OpInBoundsAccessChain: case spv::Op::OpPtrAccessChain: case spv::Op::OpInBoundsPtrAccessChain:
    case spv::Op::OpArrayLength: case spv::Op::OpCopyMemory: case spv::Op::OpControlBarrier:
    case spv::Op::OpMemoryBarrier: case spv::Op::OpCooperativeMatrixLoadKHR:
    case spv::Op::OpCooperativeMatrixStoreKHR:
    // Their callbacks take lane vectors (lower_coopmat_ext.cpp), whatever the operands.
    case spv::Op::OpCooperativeMatrixReduceEXT: case spv::Op::OpCooperativeMatrixPerElementOpEXT:
    case spv::Op::OpCooperativeMatrixGetCoordinateEXT:
    case spv::Op::OpCooperativeMatrixLoadTensorNV: case spv::Op::OpCooperativeMatrixStoreTensorNV:
      return false;
    default:
      break;
  }
  if (spv_op_is_atomic(opcode)) return false;
  return opcode < uint16_t(spv::Op::OpGroupNonUniformElect) || opcode > uint16_t(spv::Op::OpGroupNonUniformQuadSwap);
}

// ---- module --------------------------------------------------------------------------------

std::unique_ptr<llvm::Module> Lowerer::lower() {
  const EntryPoint* ep = nullptr;
  for (const EntryPoint& e : m.entry_points)
    if (e.name == opts.entry_point && e.execution_model == uint32_t(spv::ExecutionModel::GLCompute)) ep = &e;
  if (!ep) fail("no GLCompute entry point named '" + opts.entry_point + "'");
  // A capability whose feature the application did not enable (Vulkan spec, SPIR-V
  // environment appendix: each of these needs its feature).
  struct GatedCapability {
    spv::Capability cap;
    const char* name;
    bool enabled;
    const char* extension;
    const char* feature;
  };
  const char* const m1 = "VK_EXT_cooperative_matrix_maintenance1";
  const char* const cv = "VK_NV_cooperative_vector";
  const char* const cm2 = "VK_NV_cooperative_matrix2";
  const char* const either = "VK_EXT_cooperative_matrix_maintenance1 or VK_NV_cooperative_matrix2";
  const GatedCapability gated[] = {
      {spv::Capability::CooperativeMatrixNV, "CooperativeMatrixNV", opts.nv_matrix, "VK_NV_cooperative_matrix",
       "cooperativeMatrix"},
      // CooperativeMatrixReductionsEXT and PerElementOperationsEXT have the values of the NV
      // capabilities (5430, 5432): either extension's feature allows them.
      {spv::Capability::CooperativeMatrixReductionsEXT, "CooperativeMatrixReductionsEXT / NV",
       opts.matrix_reductions || opts.nv2.reductions, either, "cooperativeMatrixReductions"},
      {spv::Capability::CooperativeMatrixConversionsEXT, "CooperativeMatrixConversionsEXT", opts.matrix_conversions, m1,
       "cooperativeMatrixConversions"},
      {spv::Capability::CooperativeMatrixConversionsNV, "CooperativeMatrixConversionsNV", opts.nv2.conversions, cm2,
       "cooperativeMatrixConversions"},
      {spv::Capability::CooperativeMatrixPerElementOperationsEXT, "CooperativeMatrixPerElementOperationsEXT / NV",
       opts.matrix_per_element || opts.nv2.per_element, either, "cooperativeMatrixPerElementOperations"},
      {spv::Capability::CooperativeMatrixGetCoordinateEXT, "CooperativeMatrixGetCoordinateEXT", opts.matrix_get_coordinate,
       m1, "cooperativeMatrixGetCoordinate"},
      {spv::Capability::TensorAddressingNV, "TensorAddressingNV", opts.nv2.tensor_addressing, cm2,
       "cooperativeMatrixTensorAddressing"},
      {spv::Capability::CooperativeMatrixTensorAddressingNV, "CooperativeMatrixTensorAddressingNV",
       opts.nv2.tensor_addressing, cm2, "cooperativeMatrixTensorAddressing"},
      {spv::Capability::CooperativeMatrixBlockLoadsNV, "CooperativeMatrixBlockLoadsNV", opts.nv2.block_loads, cm2,
       "cooperativeMatrixBlockLoads"},
      {spv::Capability::CooperativeVectorNV, "CooperativeVectorNV", opts.cooperative_vector, cv, "cooperativeVector"},
      {spv::Capability::CooperativeVectorTrainingNV, "CooperativeVectorTrainingNV", opts.cooperative_vector_training, cv,
       "cooperativeVectorTraining"},
  };
  for (uint32_t cap : m.capabilities)
    for (const GatedCapability& g : gated)
      if (cap == uint32_t(g.cap) && !g.enabled)
        fail(std::string("capability ") + g.name + " needs " + g.extension + "'s " + g.feature +
             " feature, which the device was not created with");
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
  ctx_type = llvm::StructType::create(
      C, {B.getPtrTy(), B.getPtrTy(), B.getInt32Ty(), B.getPtrTy(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty()},
      "KernelCtx");
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

  plan_workgroup_matrices();

  // Uniformity of every value and construct, for the subgroup width and workgroup size
  // this pipeline has (uniformity.h).
  {
    UniformityOptions uo;
    uo.subgroup_size = N;
    for (int k = 0; k < 3; ++k) uo.local_size[k] = local_size[k];
    std::string err;
    if (!analyze_uniformity(m, uo, &uniformity_data_, &err)) fail(err);
    uniformity = &uniformity_data_;
  }
  plan_globals();
  plan_tile_cache();
  plan_subgroup_interleaving();

  // Declare every function, then lower them.
  for (const Function& fn : m.functions) {
    const TypeInfo& ft = type(fn.def.operands.at(1));
    std::vector<llvm::Type*> params{B.getPtrTy(), lanes(B.getInt1Ty())};
    for (Id p : ft.members) params.push_back(rep_pointer_type(p) ? B.getPtrTy() : rep_type(p));
    llvm::Type* ret = rep_type(fn.def.result_type);
    if (holds_coopvec(fn.def.result_type)) {
      // Returned through a buffer of the caller's (the callee's own is gone on return).
      params.push_back(B.getPtrTy());
      ret = B.getVoidTy();
    }
    auto* lf = llvm::Function::Create(llvm::FunctionType::get(ret, params, false),
                                      llvm::GlobalValue::InternalLinkage,
                                      "spv_fn_" + std::to_string(fn.def.result), M.get());
    functions[fn.def.result] = lf;
  }
  for (const Function& fn : m.functions) lower_function(fn, fn.def.result == ep->function);
  for (auto& [id, lf] : functions) mark_shared_writes(*lf);
  emit_kernel(ep->function);
  scratch_fn->eraseFromParent();

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*M, &os)) fail("internal error: generated IR does not verify: " + os.str());
  return std::move(M);
}

}  // namespace coopvk::jit
