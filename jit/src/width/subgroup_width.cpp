#include "width/subgroup_width.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <spirv/unified1/spirv.hpp11>

#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

bool subgroup_width_observable(const Module& module) {
  using C = spv::Capability;
  for (uint32_t cap : module.capabilities) {
    switch (C(cap)) {
      // Every capability read_spirv() accepts (spirv/capabilities.cpp) that exposes a
      // subgroup: a capability added there must be considered here.
      case C::GroupNonUniform:
      case C::GroupNonUniformVote:
      case C::GroupNonUniformArithmetic:
      case C::GroupNonUniformBallot:
      case C::GroupNonUniformShuffle:
      case C::GroupNonUniformShuffleRelative:
      case C::GroupNonUniformClustered:
      case C::GroupNonUniformQuad:
      case C::SubgroupBallotKHR:
      case C::SubgroupVoteKHR:
      case C::Groups:
      case C::CooperativeMatrixKHR:
      case C::CooperativeMatrixNV:
      case C::BFloat16CooperativeMatrixKHR:
      case C::Float8CooperativeMatrixEXT:
      case C::CooperativeMatrixReductionsEXT:
      case C::CooperativeMatrixConversionsEXT:
      case C::CooperativeMatrixPerElementOperationsEXT:
      case C::CooperativeMatrixGetCoordinateEXT:
      case C::CooperativeMatrixConversionsNV:  // ReductionsNV, PerElementOperationsNV: the EXT values
      case C::CooperativeVectorNV:
      case C::CooperativeVectorTrainingNV:
        return true;
      default:
        break;
    }
  }
  return false;
}

uint32_t natural_subgroup_width() {
  static const uint32_t width = [] {
    auto f = llvm::sys::getHostCPUFeatures();
    if (f.lookup("avx512f")) return 16u;
    if (f.lookup("avx2") || f.lookup("avx")) return 8u;
    return 4u;
  }();
  return width;
}

uint32_t loop_carried_vector_registers(const llvm::Module& module, uint32_t register_bits) {
  uint32_t most = 0;
  for (const llvm::Function& cf : module) {
    if (cf.isDeclaration()) continue;
    // The analyses take a mutable function; they only read it.
    auto& f = const_cast<llvm::Function&>(cf);
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    for (const llvm::Loop* loop : li.getLoopsInPreorder()) {
      // Innermost loops, where the time goes: an outer loop's carried values wait in
      // memory while the inner loop runs, at no cost per round of it.
      if (!loop->getSubLoops().empty()) continue;
      uint32_t regs = 0;
      for (const llvm::PHINode& phi : loop->getHeader()->phis()) {
        auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(phi.getType());
        if (!vt || vt->getElementType()->isIntegerTy(1)) continue;  // masks live in k registers
        uint64_t bits = uint64_t(vt->getNumElements()) * vt->getScalarSizeInBits();
        regs += uint32_t((bits + register_bits - 1) / register_bits);
      }
      most = std::max(most, regs);
    }
  }
  return most;
}

uint32_t narrower_subgroup_width(uint32_t width, uint32_t carried) {
  const uint32_t natural = natural_subgroup_width();
  if (width <= natural) return 0;
  // 32 vector registers with AVX-512: what the loops carry may take half, the rest is for
  // the values each round loads and computes. Narrower only where that then fits: a loop
  // that spills at both widths (an 8x8 block of accumulators per invocation) runs faster
  // wide, each spilled value serving twice the lanes (bench_gemm gemm_blocked8: 70 GFLOP/s
  // at 32, 59-65 at 16).
  const uint32_t registers = natural >= 16 ? 32 : 16;
  const uint32_t carried_narrow = uint32_t(uint64_t(carried) * natural / width);
  return carried > registers / 2 && carried_narrow <= registers ? natural : 0;
}

}  // namespace coopvk::jit
