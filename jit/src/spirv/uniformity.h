// Uniformity analysis: which SPIR-V values are the same in every active invocation of a
// subgroup, and which structured constructs can split the subgroup's lanes. Run on the
// specialized module after variables became SSA values (ssa_promote.h). The lowering
// keeps uniform values scalar and turns uniform branches and loops into plain LLVM
// control flow (lower_control_flow.cpp); everything divergent keeps the masked model.
//
// The approach is that of LLVM's UniformityAnalysis and Mesa's nir_divergence_analysis,
// specialised to SPIR-V's structured control flow. A value is *divergent* when
//  - it is an invocation-varying built-in: LocalInvocationIndex,
//    SubgroupLocalInvocationId, the Subgroup*Mask built-ins, the x component of
//    LocalInvocationId / GlobalInvocationId, and their y and z components too unless the
//    workgroup's x size is a multiple of the subgroup size (then a subgroup never spans
//    two rows, which is also how the lowering computes them);
//  - it is a pointer into per-lane memory: an Input variable, or a Function or Private
//    variable that is not kept in rep layout (lowerer.h), or derived from one. A
//    Function or Private variable is in rep layout (and its pointer uniform) when every
//    use of it, and of the access chains made from it, is a whole OpLoad, an OpStore
//    through it, or an access chain whose indices are all uniform;
//  - it is loaded through a divergent pointer, or from per-invocation memory (Function,
//    Private and Input variables that stayed variables); a load at a uniform address from
//    Uniform, StorageBuffer, PushConstant, Workgroup or PhysicalStorageBuffer memory is
//    uniform, since the lowering performs it once for the subgroup;
//  - it is the result of an atomic, of a function call, or a function parameter (the
//    analysis is per function and does not look across calls);
//  - it is a subgroup operation that gives lanes different results: elect, scans,
//    clustered reductions smaller than the subgroup, shuffles, quad operations, inverse
//    ballot (reductions, broadcasts, ballots, votes and all-equal are uniform);
//  - it is an OpPhi reached along an edge that leaves a divergent construct: lanes that
//    took different sides of a divergent branch meet there (the merge of a divergent
//    selection or loop, or the target of a divergent break or continue);
//  - it is defined in a divergent loop and used outside it ("temporal divergence": the
//    lanes left the loop in different iterations, each with its own last value);
//  - any <id> operand it reads is divergent (every other instruction).
// Constants, specialization constants, OpUndef, variables (as pointers), WorkgroupId,
// NumWorkgroups, WorkgroupSize, SubgroupId, NumSubgroups and SubgroupSize are uniform.
//
// A construct is *divergent* when
//  - a selection: its header branches on a divergent condition or switch selector;
//  - a loop: some lanes can leave it while others stay, i.e. one of its exits (a branch
//    out of the loop, to its merge or by returning) is taken on a divergent condition,
//    or from a block nested in a divergent construct inside the loop.
// Both depend on each other (a divergent condition makes a construct divergent, which
// makes phis at its merge divergent, ...), so the analysis iterates to a fixed point;
// every step only turns uniform into divergent, so it terminates.
#pragma once

#include <cstdint>
#include <vector>

#include "spirv/cfg.h"
#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

struct FunctionUniformity {
  FunctionCfg cfg;
  std::vector<uint8_t> construct_divergent;  // per FunctionCfg::constructs entry
  // Divergent values defined in a divergent loop and used outside it: lanes that left
  // the loop earlier must keep their own copy (the lowering stores them under the mask).
  std::vector<Id> temporal;
};

struct Uniformity {
  std::vector<uint8_t> divergent;  // by id; 1 = divergent (ids not defined: 0)
  std::vector<FunctionUniformity> functions;  // parallel to Module::functions

  bool is_divergent(Id id) const { return id < divergent.size() && divergent[id]; }
  // A Function or Private variable is in rep layout exactly when its pointer is uniform.
  bool rep_layout(Id variable) const { return !is_divergent(variable); }
};

struct UniformityOptions {
  uint32_t subgroup_size = 0;
  uint32_t local_size[3] = {1, 1, 1};
};

// Fails (false, message in *error) only where a function's control flow cannot be
// analysed (see build_cfg).
bool analyze_uniformity(const Module& m, const UniformityOptions& options, Uniformity* out,
                        std::string* error);

}  // namespace coopvk::jit
