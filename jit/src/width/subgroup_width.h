// Which width a pipeline's subgroups run at when the application leaves it to the driver.
//
// The Vulkan subgroup size is visible to a shader only through subgroup operations and
// built-ins (SubgroupSize, SubgroupLocalInvocationId, NumSubgroups, SubgroupId) and through
// cooperative matrices and vectors, whose elements are spread over a subgroup. A shader that
// declares none of the capabilities behind them cannot tell how many invocations run side by
// side, so the compiler may pick the width that suits its code (Vulkan spec, "Subgroup size
// control": only a shader that can observe the size is bound to the reported one).
//
// The reported width is 32 on AVX-512 hosts (compiler.cpp says why), two registers per
// 32-bit value. A register-blocked shader (a GEMM accumulating a 4x4 block per invocation)
// then carries 32 registers round its loops, the whole register file, and spills; at the
// host's natural width it carries 16. compile_compute() lowers such shaders once at the
// reported width, measures what their innermost loops carry (loop_carried_vector_registers), and
// lowers again at the natural width when that is more than half the vector registers and the
// natural width's share fits in them.
#pragma once

#include <cstdint>

namespace llvm {
class Module;
}

namespace coopvk::jit {

struct Module;

// Whether a shader can observe its subgroup width: it declares a capability for subgroup
// operations or built-ins, cooperative matrices or cooperative vectors.
bool subgroup_width_observable(const Module& module);

// The host's natural width: 32-bit lanes in one vector register (16 with AVX-512, 8 with
// AVX2, 4 otherwise).
uint32_t natural_subgroup_width();

// Vector registers of `register_bits` each that the values carried round one innermost loop
// of the module take at the loop header (its vector phis), for the loop that carries most.
uint32_t loop_carried_vector_registers(const llvm::Module& module, uint32_t register_bits);

// The width to lower at again after a first lowering at `width` carried `carried` registers
// round one loop, or 0 to keep `width`.
uint32_t narrower_subgroup_width(uint32_t width, uint32_t carried);

}  // namespace coopvk::jit
