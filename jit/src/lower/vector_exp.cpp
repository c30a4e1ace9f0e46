#include "lower/vector_exp.h"

#include <llvm/IR/Intrinsics.h>

namespace coopvk::jit {

llvm::Value* vector_exp(llvm::IRBuilder<>& B, llvm::Value* x, bool base_e) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vt) return nullptr;
  llvm::Type* et = vt->getElementType();
  if (et->isHalfTy()) {
    // Halves: in float, rounded once at the end.
    auto* ft = llvm::FixedVectorType::get(B.getFloatTy(), vt->getNumElements());
    return B.CreateFPTrunc(vector_exp(B, B.CreateFPExt(x, ft), base_e), vt);
  }
  if (!et->isFloatTy()) return nullptr;
  const unsigned n = vt->getNumElements();
  auto c = [&](double v) { return llvm::ConstantFP::get(vt, v); };
  auto fma = [&](llvm::Value* a, llvm::Value* b, llvm::Value* d) {
    return B.CreateIntrinsic(llvm::Intrinsic::fma, {vt}, {a, b, d});
  };
  // Clamped so that the integer part fits (NaN becomes a bound here; restored at the end).
  // Past +-160 (e) or +-230 (2) the result is inf or 0 either way.
  const double bound = base_e ? 160.0 : 230.0;
  llvm::Value* xc = B.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, B.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, c(bound)), c(-bound));
  // x = k + r / ln 2 with an integer k and |r| <= ln2 / 2. For e^x, r = x - k ln2 in two
  // steps (Cody and Waite): ln2_hi has its low bits zero, so k * ln2_hi is exact.
  llvm::Value* k;
  llvm::Value* r;
  if (base_e) {
    k = B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, B.CreateFMul(xc, c(1.4426950408889634)));
    r = fma(k, c(-0.693145751953125), xc);           // ln2_hi = 0x3f317200
    r = fma(k, c(-1.428606765330187e-06), r);        // ln2 - ln2_hi
  } else {
    k = B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, xc);
    r = B.CreateFMul(B.CreateFSub(xc, k), c(0.6931471805599453));  // x - k is exact
  }
  // e^r by its Taylor series to r^7: the remainder is below 2^-27 of the result.
  llvm::Value* p = c(1.0 / 5040);
  for (double coef : {1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0}) p = fma(p, r, c(coef));
  // * 2^k as two powers of two, each a normal float, so that results between the smallest
  // normal and the smallest subnormal round once, in the last multiply.
  auto* it = llvm::FixedVectorType::get(B.getInt32Ty(), n);
  llvm::Value* ki = B.CreateFPToSI(k, it);
  llvm::Value* k1 = B.CreateAShr(ki, 1);
  llvm::Value* k2 = B.CreateSub(ki, k1);
  auto pow2 = [&](llvm::Value* e) {
    return B.CreateBitCast(B.CreateShl(B.CreateAdd(e, llvm::ConstantInt::get(it, 127)), 23), vt);
  };
  llvm::Value* y = B.CreateFMul(B.CreateFMul(p, pow2(k1)), pow2(k2));
  return B.CreateSelect(B.CreateFCmpUNO(x, x), x, y);
}

}  // namespace coopvk::jit
