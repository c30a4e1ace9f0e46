// Function calls inlined on the SPIR-V module, before SSA promotion (what spirv-opt's
// --inline-entry-points-exhaustive and Mesa's nir_inline_functions do; SPIR-V for Vulkan has
// no recursion).
//
// Why here and not in LLVM: glslang passes every argument through a Function variable of the
// caller, and a call is opaque to the passes that follow. ssa_promote cannot promote a
// variable whose pointer escapes into a call, so its per-lane contents stay in memory; the
// uniformity analysis calls every call result divergent; and in the lowered code each
// argument is a vector of per-lane pointers, so every parameter read is a run-time
// contiguity test and a gather. A helper such as vk_cooperative_matrix_perf's
// `coordToOffset(i, j, stride, colMajor)` then turns a uniform shared-memory offset into a
// divergent one, and the cooperative-matrix load behind it into its slow form. Inlined, the
// arguments are the caller's values again: the variables promote, uniform stays uniform.
//
// A call is inlined when its callee has one return instruction, in a reachable block outside
// every construct (so branching from it to the code after the call keeps the control flow
// structured; every callee without early returns qualifies), the argument count matches,
// and the calling block is neither a loop header nor a continue target (whose block the
// split would move). Other calls stay calls and are lowered as before. Callees' variables
// move to the caller's entry block (an initializer becomes a store where the inlined body
// starts), decorations of their results are copied to the clones, and phis that named the
// calling block as a predecessor name the block holding its terminator afterwards. A budget
// of cloned instructions stops malformed (recursive) modules from growing without bound.
#pragma once

#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

// Rewrites `m` in place, every function. Returns the number of calls inlined.
uint32_t inline_calls(Module& m);

}  // namespace coopvk::jit
