#include "lower/expand_divisions.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <vector>

namespace coopvk::jit {

namespace {

// a / d or a % d for 32-bit lanes and a scalar d. With M = floor((2^64 - 1) / d) + 1, computed
// once on scalars, a / d == (M * a) >> 64 for every 32-bit a and every d >= 2 (Lemire, Kaser, Kurz, "Faster
// remainder by direct computation", 2019); d == 1 (M wraps to 0) takes a itself. The 96-bit
// product is two 32 x 32 -> 64-bit multiplies: M * a = (M_hi * a) * 2^32 + M_lo * a, and
// (M * a) >> 64 == ((M_hi * a) + ((M_lo * a) >> 32)) >> 32 without overflow.
llvm::Value* divide(llvm::IRBuilder<>& B, llvm::Value* a, llvm::Value* ds, bool rem) {
  auto* vt = llvm::cast<llvm::FixedVectorType>(a->getType());
  const unsigned n = vt->getNumElements();
  // The lowering never divides by 0 (it divides by 1 instead); the scalar division below
  // must not trap even so.
  ds = B.CreateSelect(B.CreateICmpEQ(ds, B.getInt32(0)), B.getInt32(1), ds);
  llvm::Value* m = B.CreateAdd(B.CreateUDiv(B.getInt64(~uint64_t(0)), B.CreateZExt(ds, B.getInt64Ty())), B.getInt64(1));
  auto* v64 = llvm::FixedVectorType::get(B.getInt64Ty(), n);
  llvm::Value* a64 = B.CreateZExt(a, v64);
  llvm::Value* hi = B.CreateMul(a64, B.CreateVectorSplat(n, B.CreateLShr(m, 32)));
  llvm::Value* lo = B.CreateMul(a64, B.CreateVectorSplat(n, B.CreateAnd(m, B.getInt64(0xffffffffu))));
  llvm::Value* q = B.CreateTrunc(B.CreateLShr(B.CreateAdd(hi, B.CreateLShr(lo, 32)), 32), vt);
  q = B.CreateSelect(B.CreateVectorSplat(n, B.CreateICmpEQ(ds, B.getInt32(1))), a, q);
  return rem ? B.CreateSub(a, B.CreateMul(q, B.CreateVectorSplat(n, ds))) : q;
}

}  // namespace

unsigned expand_uniform_divisions(llvm::Module& module) {
  std::vector<llvm::BinaryOperator*> found;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& in : bb) {
        auto* bo = llvm::dyn_cast<llvm::BinaryOperator>(&in);
        if (!bo || (bo->getOpcode() != llvm::Instruction::UDiv && bo->getOpcode() != llvm::Instruction::URem)) continue;
        auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(bo->getType());
        if (!vt || !vt->getElementType()->isIntegerTy(32)) continue;
        llvm::Value* ds = llvm::getSplatValue(bo->getOperand(1));
        if (!ds || llvm::isa<llvm::Constant>(ds)) continue;  // constants: LLVM's own magic numbers
        found.push_back(bo);
      }
  for (llvm::BinaryOperator* bo : found) {
    llvm::IRBuilder<> B(bo);
    llvm::Value* ds = llvm::getSplatValue(bo->getOperand(1));
    llvm::Value* r = divide(B, bo->getOperand(0), ds, bo->getOpcode() == llvm::Instruction::URem);
    bo->replaceAllUsesWith(r);
    bo->eraseFromParent();
  }
  return unsigned(found.size());
}

}  // namespace coopvk::jit
