// Integer dot products (SPV_KHR_integer_dot_product): vectors, or 32-bit scalars holding
// four packed 8-bit components (PackedVectorFormat4x8Bit).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

bool Lowerer::lower_integer_dot(const Instruction& in) {
  using Op = spv::Op;
  auto op = static_cast<Op>(in.opcode);
  bool acc_sat = op == Op::OpSDotAccSat || op == Op::OpUDotAccSat || op == Op::OpSUDotAccSat;
  if (!(op == Op::OpSDot || op == Op::OpUDot || op == Op::OpSUDot || acc_sat)) return false;
  const auto& o = in.operands;
  bool a_signed = op == Op::OpSDot || op == Op::OpSUDot || op == Op::OpSDotAccSat || op == Op::OpSUDotAccSat;
  bool b_signed = op == Op::OpSDot || op == Op::OpSDotAccSat;
  llvm::Value* a = value(o.at(0));
  llvm::Value* b = value(o.at(1));
  llvm::Type* rt = rep_type(in.result_type);
  unsigned rw = (rt)->getScalarType()->getIntegerBitWidth();
  // Products are summed exactly in 64 bits, then wrapped or saturated to the result.
  llvm::Type* wide = lanes(B.getInt64Ty());
  auto components = [&](llvm::Value* v, bool sgn) {
    std::vector<llvm::Value*> out;
    if (is_leaf(v->getType())) {  // packed 4x8 in a 32-bit scalar
      for (unsigned k = 0; k < 4; ++k) {
        llvm::Value* byte = B.CreateTrunc(B.CreateLShr(v, llvm::ConstantInt::get(v->getType(), 8 * k)), lanes(B.getInt8Ty()));
        out.push_back(sgn ? B.CreateSExt(byte, wide) : B.CreateZExt(byte, wide));
      }
    } else {
      for (unsigned k = 0; k < v->getType()->getArrayNumElements(); ++k) {
        llvm::Value* c = B.CreateExtractValue(v, k);
        out.push_back(sgn ? B.CreateSExt(c, wide) : B.CreateZExt(c, wide));
      }
    }
    return out;
  };
  std::vector<llvm::Value*> ca = components(a, a_signed), cb = components(b, b_signed);
  llvm::Value* sum = llvm::Constant::getNullValue(wide);
  for (size_t k = 0; k < ca.size(); ++k) sum = B.CreateAdd(sum, B.CreateMul(ca[k], cb[k]));
  bool result_signed = a_signed;  // SDot/SUDot results are signed; UDot unsigned
  if (!acc_sat) {
    define(in.result, B.CreateTrunc(sum, rt));
    return true;
  }
  // Saturating accumulate: clamp (sum + acc) to the result's range.
  llvm::Value* acc = value(o.at(2));
  llvm::Value* accw = result_signed ? B.CreateSExt(acc, wide) : B.CreateZExt(acc, wide);
  llvm::Intrinsic::ID add = result_signed ? llvm::Intrinsic::sadd_sat : llvm::Intrinsic::uadd_sat;
  llvm::Value* total = B.CreateBinaryIntrinsic(add, sum, accw);
  if (rw < 64) {
    llvm::APInt hi = result_signed ? llvm::APInt::getSignedMaxValue(rw).sext(64) : llvm::APInt::getMaxValue(rw).zext(64);
    if (result_signed) {
      llvm::APInt lo = llvm::APInt::getSignedMinValue(rw).sext(64);
      total = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, total, llvm::ConstantInt::get(wide, lo));
      total = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, total, llvm::ConstantInt::get(wide, hi));
    } else {
      total = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, total, llvm::ConstantInt::get(wide, hi));
    }
  }
  define(in.result, B.CreateTrunc(total, rt));
  return true;
}

}  // namespace coopvk::jit
