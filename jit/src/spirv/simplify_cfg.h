// Control flow made as simple as the specialized module allows, after inlining and SSA
// promotion (arguments are then the constants themselves, not loads of temporaries): a
// selection on a constant (a literal, or a specialization constant with the pipeline's
// value) becomes a branch to the side it takes, and a chain of blocks joined by plain
// branches becomes one block.
//
// Why: inline_calls() splits the calling block, and a helper such as
// vk_cooperative_matrix_perf's `colMajor ? stride * j + i : stride * i + j`, called with a
// specialization constant, is an if / else of its own. Values the lowering carries from one
// block to another go through per-lane slots, which keep lane patterns only for some forms;
// in one block the lowering sees the whole address (an affine lane pattern, a window) and
// emits one wide access where it would otherwise emit a gather.
//
// Folding removes the branch's OpSelectionMerge (GLSL cannot break out of an if, so nothing
// inside the taken side branches to that merge block early), drops phi entries of edges
// that no longer exist, replaces phis left with one entry by their value, and removes the
// blocks no branch reaches unless a merge instruction names them. Merging joins A and B
// where A ends in OpBranch B without a merge instruction, B has no other predecessor, and
// no merge instruction names B.
#pragma once

#include <vector>

#include "coopvk/jit/compiler.h"
#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

// Rewrites every function of `m` in place. Returns the number of branches folded plus
// blocks merged.
uint32_t simplify_cfg(Module& m, const std::vector<SpecializationValue>& specialization);

}  // namespace coopvk::jit
