// Loop-closed SSA on the SPIR-V module (what LLVM's LCSSA pass does): a value defined
// inside a loop and read after it is read through an OpPhi at the loop's merge block,
// with one entry per edge that leaves the loop.
//
// Why: in a loop that lanes leave in different iterations (a trip count that depends on
// the invocation, as ggml's bounds checks make it), a loop counter is the same in every
// lane still running, but after the loop each lane needs the value of its own last
// iteration. Without this pass the uniformity analysis (uniformity.h) has to call the
// counter itself divergent ("temporal divergence"), so inside the loop it becomes a
// vector and every address built from it a gather. With the phi at the merge block the
// counter stays uniform inside; the phi is divergent (its edges leave a divergent loop),
// and the lowering's phi merges each lane's value under the edge's mask as the lane
// leaves (lower_control_flow.cpp), which is exactly the per-lane last value.
//
// Run after promote_variables_to_ssa() and before the uniformity analysis. Structured
// control flow leaves a loop only through its merge block (or by returning), so the
// merge block dominates every read after the loop. Pointers, cooperative matrices and
// cooperative vectors are left as they are (a phi of them needs capabilities or reps the
// lowering keeps elsewhere); the analysis' temporal rule still covers those.
#pragma once

#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

// Rewrites `m` in place. Returns the number of phis added.
uint32_t close_loops(Module& m);

}  // namespace coopvk::jit
