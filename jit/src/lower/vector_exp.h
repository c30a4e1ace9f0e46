// exp and exp2 of per-lane float vectors, in vector code.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace coopvk::jit {

// e^x (base_e) or 2^x of a vector of float or half, as vector instructions. LLVM lowers
// llvm.exp / llvm.exp2 of a vector to one libm call per lane, which was 5% of ggml's
// attention decode and most of a softmax. Null for other types (scalars keep the intrinsic:
// one call is one call). Within 2 ULP of float for every finite x (Vulkan allows
// 3 + 2|x|); +inf above the range, 0 or a subnormal below it, NaN in NaN out.
llvm::Value* vector_exp(llvm::IRBuilder<>& B, llvm::Value* x, bool base_e);

}  // namespace coopvk::jit
