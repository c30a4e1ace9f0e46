// Variables to SSA values, on the SPIR-V module itself (what spirv-opt's mem2reg does):
// a Function variable (or a Private variable touched only by the entry point) whose
// every use is a whole-value OpLoad or OpStore becomes SSA values and OpPhi.
//
// Why here and not in LLVM: the uniformity analysis (uniformity.h) works on SSA values.
// glslang without -O keeps every local in a variable, so a loop counter would otherwise
// be "a load from per-invocation memory" and every loop divergent.
//
// Every use of a load reads the reaching stored value instead (Instruction::id_operands
// says which words to rewrite); loads, stores and the variables disappear, and OpPhi
// instructions are added at the iterated dominance frontier of the stores (Cytron et
// al.). A load that no store reaches reads OpUndef of the type, as the variable's
// contents are undefined then. Values used directly keep what the lowering knows about
// them (an entry-block value, a lane-affine index) in every block.
#pragma once

#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

// Rewrites `m` in place; `entry_function` is the OpFunction id of the entry point being
// compiled. Returns the number of variables promoted. Leaves the module unchanged (and
// returns 0) for any function whose control flow it cannot analyse; the lowering then
// reports the problem.
uint32_t promote_variables_to_ssa(Module& m, Id entry_function);

// Recomputes Module::defs for globals, functions, parameters, labels and instructions
// after a pass has added or removed any of them (and grows it to Module::bound).
void rebuild_defs(Module& m);

}  // namespace coopvk::jit
