// Fuses the multiply-add calls of a register block that share A (pair_muladds.cpp).
#pragma once

namespace llvm {
class Module;
}

namespace coopvk::jit {

// Replaces each two calls of one split multiply-add kernel (coopvk_mma_split.mma.*) with the
// same packed A, with nothing but instructions free of memory effects between them, by one
// call of its mma2 part. Run on optimized IR, where the loops over a block's tiles are
// unrolled and the packing checks folded. Returns the number of pairs.
unsigned pair_muladds(llvm::Module& mod);

}  // namespace coopvk::jit
