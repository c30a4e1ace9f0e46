// Vector division by a uniform divisor, without per-lane division.
#pragma once

namespace llvm {
class Module;
}

namespace coopvk::jit {

// Rewrites every udiv and urem of 32-bit lanes by a splat of a non-constant scalar (a uniform
// divisor: ggml's element-wise shaders split flat indices by tensor dimensions from push
// constants) as multiplications. x86 has no vector integer division, and LLVM divides lane by
// lane with `div` unless the divisor is a constant. Runs after lowering, which keeps the
// divisions whole so that address patterns can see through them (lower_memory_fast.cpp).
// Returns how many it rewrote.
unsigned expand_uniform_divisions(llvm::Module& module);

}  // namespace coopvk::jit
