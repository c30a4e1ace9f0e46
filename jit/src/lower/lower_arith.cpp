// Arithmetic, comparisons, logic, select, composites and conversions. Every operation
// works leaf by leaf on reps, so a vec4 add is four <N x float> adds.
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
}

bool Lowerer::lower_arith(const Instruction& in) {
  const auto& o = in.operands;
  auto bin = [&](auto f) {
    define(in.result, map_leaves2(value(o.at(0)), value(o.at(1)), f));
    return true;
  };
  auto un = [&](auto f) {
    define(in.result, map_leaves(value(o.at(0)), f));
    return true;
  };
  // Division by zero is undefined in SPIR-V but must not trap the host: divide by 1
  // instead (any result is allowed). Signed INT_MIN / -1 likewise.
  auto safe_div = [&](llvm::Value* a, llvm::Value* b, bool is_signed, bool rem) -> llvm::Value* {
    // A divisor the same in every lane stays a splat (guarded on its scalar), for the lane
    // patterns of addresses (lower_memory_fast.cpp) and expand_uniform_divisions.
    if (!is_signed && b->getType()->isVectorTy())
      if (llvm::Value* bs = llvm::getSplatValue(b)) {
        llvm::Value* ds = B.CreateSelect(B.CreateICmpEQ(bs, llvm::Constant::getNullValue(bs->getType())),
                                         llvm::ConstantInt::get(bs->getType(), 1), bs);
        llvm::Value* d = B.CreateVectorSplat(llvm::cast<llvm::FixedVectorType>(b->getType())->getNumElements(), ds);
        return rem ? B.CreateURem(a, d) : B.CreateUDiv(a, d);
      }
    llvm::Value* zero = llvm::Constant::getNullValue(b->getType());
    llvm::Value* one = llvm::ConstantInt::get(b->getType(), 1);
    llvm::Value* bad = B.CreateICmpEQ(b, zero);
    if (is_signed) {
      auto* et = (b->getType())->getScalarType();
      llvm::Value* minv = llvm::ConstantInt::get(b->getType(), llvm::APInt::getSignedMinValue(et->getIntegerBitWidth()));
      llvm::Value* neg1 = llvm::Constant::getAllOnesValue(b->getType());
      bad = B.CreateOr(bad, B.CreateAnd(B.CreateICmpEQ(a, minv), B.CreateICmpEQ(b, neg1)));
    }
    llvm::Value* d = B.CreateSelect(bad, one, b);
    if (!rem) return is_signed ? B.CreateSDiv(a, d) : B.CreateUDiv(a, d);
    return is_signed ? B.CreateSRem(a, d) : B.CreateURem(a, d);
  };
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpIAdd: return bin([&](auto a, auto b) { return B.CreateAdd(a, b); });
    case Op::OpISub: return bin([&](auto a, auto b) { return B.CreateSub(a, b); });
    case Op::OpIMul: return bin([&](auto a, auto b) { return B.CreateMul(a, b); });
    case Op::OpUDiv: return bin([&](auto a, auto b) { return safe_div(a, b, false, false); });
    case Op::OpSDiv: return bin([&](auto a, auto b) { return safe_div(a, b, true, false); });
    case Op::OpUMod: return bin([&](auto a, auto b) { return safe_div(a, b, false, true); });
    case Op::OpSRem: return bin([&](auto a, auto b) { return safe_div(a, b, true, true); });
    case Op::OpSMod:
      // Sign of the result follows the divisor.
      return bin([&](auto a, auto b) {
        llvm::Value* r = safe_div(a, b, true, true);
        llvm::Value* zero = llvm::Constant::getNullValue(r->getType());
        llvm::Value* fix = B.CreateAnd(B.CreateICmpNE(r, zero),
                                       B.CreateICmpNE(B.CreateICmpSLT(r, zero), B.CreateICmpSLT(b, zero)));
        return B.CreateSelect(fix, B.CreateAdd(r, b), r);
      });
    case Op::OpSNegate: return un([&](auto a) { return B.CreateNeg(a); });
    case Op::OpFNegate: return un([&](auto a) { return B.CreateFNeg(a); });
    case Op::OpFAdd: return bin([&](auto a, auto b) { return B.CreateFAdd(a, b); });
    case Op::OpFSub: return bin([&](auto a, auto b) { return B.CreateFSub(a, b); });
    case Op::OpFMul: return bin([&](auto a, auto b) { return B.CreateFMul(a, b); });
    case Op::OpFDiv: return bin([&](auto a, auto b) { return B.CreateFDiv(a, b); });
    case Op::OpFRem: return bin([&](auto a, auto b) { return B.CreateFRem(a, b); });
    case Op::OpFMod:
      // Sign of the result follows the divisor: x - y * floor(x / y).
      return bin([&](auto a, auto b) {
        llvm::Value* q = B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, B.CreateFDiv(a, b));
        return B.CreateFSub(a, B.CreateFMul(b, q));
      });
    case Op::OpShiftLeftLogical:
    case Op::OpShiftRightLogical:
    case Op::OpShiftRightArithmetic:
      // Shift counts >= the width are undefined in SPIR-V; mask them so LLVM gets no poison.
      return bin([&](llvm::Value* a, llvm::Value* b) {
        auto* et = (a->getType())->getScalarType();
        unsigned w = et->getIntegerBitWidth();
        b = B.CreateZExtOrTrunc(b, a->getType());
        b = B.CreateAnd(b, llvm::ConstantInt::get(a->getType(), w - 1));
        if (in.opcode == uint16_t(Op::OpShiftLeftLogical)) return B.CreateShl(a, b);
        if (in.opcode == uint16_t(Op::OpShiftRightLogical)) return B.CreateLShr(a, b);
        return B.CreateAShr(a, b);
      });
    case Op::OpBitwiseAnd: return bin([&](auto a, auto b) { return B.CreateAnd(a, b); });
    case Op::OpBitwiseOr: return bin([&](auto a, auto b) { return B.CreateOr(a, b); });
    case Op::OpBitwiseXor: return bin([&](auto a, auto b) { return B.CreateXor(a, b); });
    case Op::OpNot: return un([&](auto a) { return B.CreateNot(a); });
    case Op::OpBitCount:
      return un([&](llvm::Value* a) {
        return B.CreateZExtOrTrunc(B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, a),
                                   lanes(scalar_type(scalar_of(in.result_type))));
      });
    case Op::OpBitReverse: return un([&](auto a) { return B.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, a); });
    case Op::OpBitFieldInsert: {
      llvm::Value* base = value(o.at(0));
      llvm::Value* ins = value(o.at(1));
      llvm::Value* off = value(o.at(2));
      llvm::Value* cnt = value(o.at(3));
      define(in.result, map_leaves2(base, ins, [&](llvm::Value* b, llvm::Value* i) {
        llvm::Type* t = b->getType();
        unsigned w = (t)->getScalarType()->getIntegerBitWidth();
        llvm::Value* ofs = B.CreateZExtOrTrunc(off, t);
        llvm::Value* c = B.CreateZExtOrTrunc(cnt, t);
        llvm::Value* ones = llvm::Constant::getAllOnesValue(t);
        // mask = ((1 << count) - 1) << offset, with count == width meaning all ones.
        llvm::Value* full = B.CreateICmpUGE(c, llvm::ConstantInt::get(t, w));
        llvm::Value* lowbits = B.CreateSelect(full, ones, B.CreateSub(B.CreateShl(llvm::ConstantInt::get(t, 1), B.CreateAnd(c, llvm::ConstantInt::get(t, w - 1))), llvm::ConstantInt::get(t, 1)));
        llvm::Value* msk = B.CreateShl(lowbits, B.CreateAnd(ofs, llvm::ConstantInt::get(t, w - 1)));
        return B.CreateOr(B.CreateAnd(b, B.CreateNot(msk)), B.CreateAnd(B.CreateShl(i, B.CreateAnd(ofs, llvm::ConstantInt::get(t, w - 1))), msk));
      }));
      return true;
    }
    case Op::OpBitFieldSExtract:
    case Op::OpBitFieldUExtract: {
      bool sext = in.opcode == uint16_t(Op::OpBitFieldSExtract);
      llvm::Value* off = value(o.at(1));
      llvm::Value* cnt = value(o.at(2));
      define(in.result, map_leaves(value(o.at(0)), [&](llvm::Value* b) {
        llvm::Type* t = b->getType();
        unsigned w = (t)->getScalarType()->getIntegerBitWidth();
        llvm::Value* ofs = B.CreateAnd(B.CreateZExtOrTrunc(off, t), llvm::ConstantInt::get(t, w - 1));
        llvm::Value* c = B.CreateZExtOrTrunc(cnt, t);
        // Shift the field to the top, then back down (arithmetic for signed).
        llvm::Value* left = B.CreateSub(llvm::ConstantInt::get(t, w), B.CreateAdd(ofs, c));
        left = B.CreateAnd(left, llvm::ConstantInt::get(t, w - 1));
        llvm::Value* top = B.CreateShl(b, left);
        llvm::Value* right = B.CreateAnd(B.CreateSub(llvm::ConstantInt::get(t, w), c), llvm::ConstantInt::get(t, w - 1));
        llvm::Value* r = sext ? B.CreateAShr(top, right) : B.CreateLShr(top, right);
        return B.CreateSelect(B.CreateICmpEQ(c, llvm::Constant::getNullValue(t)), llvm::Constant::getNullValue(t), r);
      }));
      return true;
    }
    // Comparisons and logic
    case Op::OpIEqual: return bin([&](auto a, auto b) { return B.CreateICmpEQ(a, b); });
    case Op::OpINotEqual: return bin([&](auto a, auto b) { return B.CreateICmpNE(a, b); });
    case Op::OpUGreaterThan: return bin([&](auto a, auto b) { return B.CreateICmpUGT(a, b); });
    case Op::OpSGreaterThan: return bin([&](auto a, auto b) { return B.CreateICmpSGT(a, b); });
    case Op::OpUGreaterThanEqual: return bin([&](auto a, auto b) { return B.CreateICmpUGE(a, b); });
    case Op::OpSGreaterThanEqual: return bin([&](auto a, auto b) { return B.CreateICmpSGE(a, b); });
    case Op::OpULessThan: return bin([&](auto a, auto b) { return B.CreateICmpULT(a, b); });
    case Op::OpSLessThan: return bin([&](auto a, auto b) { return B.CreateICmpSLT(a, b); });
    case Op::OpULessThanEqual: return bin([&](auto a, auto b) { return B.CreateICmpULE(a, b); });
    case Op::OpSLessThanEqual: return bin([&](auto a, auto b) { return B.CreateICmpSLE(a, b); });
    case Op::OpFOrdEqual: return bin([&](auto a, auto b) { return B.CreateFCmpOEQ(a, b); });
    case Op::OpFUnordEqual: return bin([&](auto a, auto b) { return B.CreateFCmpUEQ(a, b); });
    case Op::OpFOrdNotEqual: return bin([&](auto a, auto b) { return B.CreateFCmpONE(a, b); });
    case Op::OpFUnordNotEqual: return bin([&](auto a, auto b) { return B.CreateFCmpUNE(a, b); });
    case Op::OpFOrdLessThan: return bin([&](auto a, auto b) { return B.CreateFCmpOLT(a, b); });
    case Op::OpFUnordLessThan: return bin([&](auto a, auto b) { return B.CreateFCmpULT(a, b); });
    case Op::OpFOrdGreaterThan: return bin([&](auto a, auto b) { return B.CreateFCmpOGT(a, b); });
    case Op::OpFUnordGreaterThan: return bin([&](auto a, auto b) { return B.CreateFCmpUGT(a, b); });
    case Op::OpFOrdLessThanEqual: return bin([&](auto a, auto b) { return B.CreateFCmpOLE(a, b); });
    case Op::OpFUnordLessThanEqual: return bin([&](auto a, auto b) { return B.CreateFCmpULE(a, b); });
    case Op::OpFOrdGreaterThanEqual: return bin([&](auto a, auto b) { return B.CreateFCmpOGE(a, b); });
    case Op::OpFUnordGreaterThanEqual: return bin([&](auto a, auto b) { return B.CreateFCmpUGE(a, b); });
    case Op::OpIsNan: return un([&](auto a) { return B.CreateFCmpUNO(a, a); });
    case Op::OpIsInf:
      return un([&](llvm::Value* a) {
        llvm::Value* abs = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
        return B.CreateFCmpOEQ(abs, llvm::ConstantFP::getInfinity(a->getType()));
      });
    case Op::OpLogicalEqual: return bin([&](auto a, auto b) { return B.CreateICmpEQ(a, b); });
    case Op::OpLogicalNotEqual: return bin([&](auto a, auto b) { return B.CreateICmpNE(a, b); });
    case Op::OpLogicalOr: return bin([&](auto a, auto b) { return B.CreateOr(a, b); });
    case Op::OpLogicalAnd: return bin([&](auto a, auto b) { return B.CreateAnd(a, b); });
    case Op::OpLogicalNot: return un([&](auto a) { return B.CreateNot(a); });
    case Op::OpAny:
    case Op::OpAll: {
      llvm::Value* v = value(o.at(0));
      if (is_leaf(v->getType())) {
        define(in.result, v);
        return true;
      }
      llvm::Value* acc = B.CreateExtractValue(v, 0);
      for (unsigned i = 1; i < v->getType()->getArrayNumElements(); ++i)
        acc = in.opcode == uint16_t(Op::OpAny) ? B.CreateOr(acc, B.CreateExtractValue(v, i))
                                               : B.CreateAnd(acc, B.CreateExtractValue(v, i));
      define(in.result, acc);
      return true;
    }
    case Op::OpSelect: {
      llvm::Value* c = value(o.at(0));
      llvm::Value* t = value(o.at(1));
      llvm::Value* f = value(o.at(2));
      if (is_leaf(c->getType())) define(in.result, select_rep(c, t, f));
      else define(in.result, map_leaves3(c, t, f, [&](auto cc, auto x, auto y) { return B.CreateSelect(cc, x, y); }));
      return true;
    }
    case Op::OpIAddCarry:
    case Op::OpISubBorrow:
    case Op::OpUMulExtended:
    case Op::OpSMulExtended: {
      llvm::Value* a = value(o.at(0));
      llvm::Value* b = value(o.at(1));
      // Result is a struct {low/result, high/carry} of the operand type.
      llvm::Value* lo = nullptr;
      llvm::Value* hi = nullptr;
      auto op = static_cast<Op>(in.opcode);
      if (op == Op::OpIAddCarry || op == Op::OpISubBorrow) {
        lo = map_leaves2(a, b, [&](auto x, auto y) { return op == Op::OpIAddCarry ? B.CreateAdd(x, y) : B.CreateSub(x, y); });
        hi = map_leaves2(a, b, [&](llvm::Value* x, llvm::Value* y) {
          llvm::Value* c = op == Op::OpIAddCarry ? B.CreateICmpULT(B.CreateAdd(x, y), x) : B.CreateICmpULT(x, y);
          return B.CreateZExt(c, x->getType());
        });
      } else {
        bool s = op == Op::OpSMulExtended;
        lo = map_leaves2(a, b, [&](auto x, auto y) { return B.CreateMul(x, y); });
        hi = map_leaves2(a, b, [&](llvm::Value* x, llvm::Value* y) {
          unsigned w = x->getType()->getScalarType()->getIntegerBitWidth();
          llvm::Type* wide = lanes(B.getIntNTy(2 * w));
          llvm::Value* xw = s ? B.CreateSExt(x, wide) : B.CreateZExt(x, wide);
          llvm::Value* yw = s ? B.CreateSExt(y, wide) : B.CreateZExt(y, wide);
          return B.CreateTrunc(B.CreateLShr(B.CreateMul(xw, yw), llvm::ConstantInt::get(wide, w)), x->getType());
        });
      }
      llvm::Value* r = llvm::PoisonValue::get(rep_type(in.result_type));
      r = B.CreateInsertValue(r, lo, 0);
      r = B.CreateInsertValue(r, hi, 1);
      define(in.result, r);
      return true;
    }
    case Op::OpDot: {
      llvm::Value* a = value(o.at(0));
      llvm::Value* b = value(o.at(1));
      // bfloat16 vectors (SPV_KHR_bfloat16, BFloat16DotProductKHR): "the same accuracy
      // as operations on binary32", rounding of intermediates implementation-defined;
      // widen exactly (the bits are binary32's top half), sum in f32, round once.
      const bool bf16 = special_float(in.result_type);
      if (bf16 && type(in.result_type).fkind != TypeInfo::FloatKind::BFloat16)
        fail("OpDot on float8 vectors (SPV_EXT_float8 does not allow it)", &in);
      auto widen = [&](llvm::Value* x) -> llvm::Value* {
        if (!bf16) return x;
        llvm::Type* t = x->getType();
        auto shaped = [&](llvm::Type* s) -> llvm::Type* {
          if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) return llvm::FixedVectorType::get(s, vt->getNumElements());
          return s;
        };
        return B.CreateBitCast(B.CreateShl(B.CreateZExt(x, shaped(B.getInt32Ty())), 16), shaped(B.getFloatTy()));
      };
      llvm::Value* acc = nullptr;
      for (unsigned i = 0; i < a->getType()->getArrayNumElements(); ++i) {
        llvm::Value* p = B.CreateFMul(widen(B.CreateExtractValue(a, i)), widen(B.CreateExtractValue(b, i)));
        acc = acc ? B.CreateFAdd(acc, p) : p;
      }
      if (bf16) {
        uint64_t n = acc->getType()->isVectorTy() ? llvm::cast<llvm::FixedVectorType>(acc->getType())->getNumElements() : 1;
        acc = convert_via_kernels(acc, kernels::NumberFormat::F32, kernels::NumberFormat::BF16, n, rep_type(in.result_type), false);
      }
      define(in.result, acc);
      return true;
    }
    case Op::OpVectorTimesScalar: {
      llvm::Value* s = value(o.at(1));
      return un([&](auto a) { return B.CreateFMul(a, s); });
    }
    case Op::OpMatrixTimesScalar: {
      llvm::Value* s = value(o.at(1));
      define(in.result, map_leaves(value(o.at(0)), [&](auto a) { return B.CreateFMul(a, s); }));
      return true;
    }
    case Op::OpMatrixTimesVector:
    case Op::OpVectorTimesMatrix:
    case Op::OpMatrixTimesMatrix:
    case Op::OpOuterProduct:
    case Op::OpTranspose: {
      // Column-major matrices: M[c][r].
      auto col = [&](llvm::Value* mtx, unsigned c) { return B.CreateExtractValue(mtx, c); };
      auto el = [&](llvm::Value* v, unsigned r) { return B.CreateExtractValue(v, r); };
      llvm::Value* r = llvm::PoisonValue::get(rep_type(in.result_type));
      auto op = static_cast<Op>(in.opcode);
      if (op == Op::OpMatrixTimesVector) {
        llvm::Value* mtx = value(o.at(0));
        llvm::Value* v = value(o.at(1));
        unsigned cols = mtx->getType()->getArrayNumElements();
        unsigned rows = col(mtx, 0)->getType()->getArrayNumElements();
        for (unsigned i = 0; i < rows; ++i) {
          llvm::Value* acc = nullptr;
          for (unsigned c = 0; c < cols; ++c) {
            llvm::Value* p = B.CreateFMul(el(col(mtx, c), i), el(v, c));
            acc = acc ? B.CreateFAdd(acc, p) : p;
          }
          r = B.CreateInsertValue(r, acc, i);
        }
      } else if (op == Op::OpVectorTimesMatrix) {
        llvm::Value* v = value(o.at(0));
        llvm::Value* mtx = value(o.at(1));
        unsigned cols = mtx->getType()->getArrayNumElements();
        unsigned rows = col(mtx, 0)->getType()->getArrayNumElements();
        for (unsigned c = 0; c < cols; ++c) {
          llvm::Value* acc = nullptr;
          for (unsigned i = 0; i < rows; ++i) {
            llvm::Value* p = B.CreateFMul(el(col(mtx, c), i), el(v, i));
            acc = acc ? B.CreateFAdd(acc, p) : p;
          }
          r = B.CreateInsertValue(r, acc, c);
        }
      } else if (op == Op::OpMatrixTimesMatrix) {
        llvm::Value* a = value(o.at(0));
        llvm::Value* b = value(o.at(1));
        unsigned a_cols = a->getType()->getArrayNumElements();
        unsigned rows = col(a, 0)->getType()->getArrayNumElements();
        unsigned b_cols = b->getType()->getArrayNumElements();
        for (unsigned c = 0; c < b_cols; ++c) {
          llvm::Value* out_col = llvm::PoisonValue::get(r->getType()->getArrayElementType());
          for (unsigned i = 0; i < rows; ++i) {
            llvm::Value* acc = nullptr;
            for (unsigned k = 0; k < a_cols; ++k) {
              llvm::Value* p = B.CreateFMul(el(col(a, k), i), el(col(b, c), k));
              acc = acc ? B.CreateFAdd(acc, p) : p;
            }
            out_col = B.CreateInsertValue(out_col, acc, i);
          }
          r = B.CreateInsertValue(r, out_col, c);
        }
      } else if (op == Op::OpOuterProduct) {
        llvm::Value* a = value(o.at(0));
        llvm::Value* b = value(o.at(1));
        unsigned rows = a->getType()->getArrayNumElements();
        unsigned cols = b->getType()->getArrayNumElements();
        for (unsigned c = 0; c < cols; ++c) {
          llvm::Value* out_col = llvm::PoisonValue::get(r->getType()->getArrayElementType());
          for (unsigned i = 0; i < rows; ++i) out_col = B.CreateInsertValue(out_col, B.CreateFMul(el(a, i), el(b, c)), i);
          r = B.CreateInsertValue(r, out_col, c);
        }
      } else {
        llvm::Value* a = value(o.at(0));
        unsigned cols = a->getType()->getArrayNumElements();
        unsigned rows = col(a, 0)->getType()->getArrayNumElements();
        for (unsigned i = 0; i < rows; ++i) {
          llvm::Value* out_col = llvm::PoisonValue::get(r->getType()->getArrayElementType());
          for (unsigned c = 0; c < cols; ++c) out_col = B.CreateInsertValue(out_col, el(col(a, c), i), c);
          r = B.CreateInsertValue(r, out_col, i);
        }
      }
      define(in.result, r);
      return true;
    }
    default:
      return false;
  }
}

bool Lowerer::lower_composite(const Instruction& in) {
  const auto& o = in.operands;
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpCompositeConstruct: {
      llvm::Type* rt = rep_type(in.result_type);
      llvm::Value* r = llvm::PoisonValue::get(rt);
      const TypeInfo& t = type(in.result_type);
      if (t.op == uint16_t(Op::OpTypeVector)) {
        // Vector constituents may be vectors: flatten them.
        unsigned k = 0;
        for (Id part : o) {
          llvm::Value* v = value(part);
          if (is_leaf(v->getType())) {
            r = B.CreateInsertValue(r, v, k++);
          } else {
            for (unsigned i = 0; i < v->getType()->getArrayNumElements(); ++i)
              r = B.CreateInsertValue(r, B.CreateExtractValue(v, i), k++);
          }
        }
      } else {
        for (unsigned i = 0; i < o.size(); ++i) r = B.CreateInsertValue(r, value(o[i]), i);
      }
      define(in.result, r);
      return true;
    }
    case Op::OpCompositeExtract: {
      llvm::Value* v = value(o.at(0));
      for (size_t i = 1; i < o.size(); ++i) v = B.CreateExtractValue(v, o[i]);
      define(in.result, v);
      return true;
    }
    case Op::OpCompositeInsert: {
      std::vector<unsigned> idx(o.begin() + 2, o.end());
      define(in.result, B.CreateInsertValue(value(o.at(1)), value(o.at(0)), idx));
      return true;
    }
    case Op::OpCopyObject:
    case Op::OpCopyLogical:
      define(in.result, value(o.at(0)));
      return true;
    case Op::OpVectorExtractDynamic: {
      llvm::Value* v = value(o.at(0));
      llvm::Value* idx = value(o.at(1));
      unsigned n = v->getType()->getArrayNumElements();
      llvm::Value* r = B.CreateExtractValue(v, 0);
      llvm::Value* idx32 = B.CreateZExtOrTrunc(idx, lanes(B.getInt32Ty()));
      for (unsigned i = 1; i < n; ++i)
        r = B.CreateSelect(B.CreateICmpEQ(idx32, splat(B.getInt32(i))), B.CreateExtractValue(v, i), r);
      define(in.result, r);
      return true;
    }
    case Op::OpVectorInsertDynamic: {
      llvm::Value* v = value(o.at(0));
      llvm::Value* comp = value(o.at(1));
      llvm::Value* idx32 = B.CreateZExtOrTrunc(value(o.at(2)), lanes(B.getInt32Ty()));
      for (unsigned i = 0; i < v->getType()->getArrayNumElements(); ++i) {
        llvm::Value* hit = B.CreateICmpEQ(idx32, splat(B.getInt32(i)));
        v = B.CreateInsertValue(v, B.CreateSelect(hit, comp, B.CreateExtractValue(v, i)), i);
      }
      define(in.result, v);
      return true;
    }
    case Op::OpVectorShuffle: {
      llvm::Value* a = value(o.at(0));
      llvm::Value* b = value(o.at(1));
      unsigned na = a->getType()->getArrayNumElements();
      llvm::Value* r = llvm::PoisonValue::get(rep_type(in.result_type));
      for (size_t i = 2; i < o.size(); ++i) {
        uint32_t s = o[i];
        llvm::Value* comp;
        if (s == 0xFFFFFFFFu) comp = llvm::Constant::getNullValue(r->getType()->getArrayElementType());
        else comp = s < na ? B.CreateExtractValue(a, s) : B.CreateExtractValue(b, s - na);
        r = B.CreateInsertValue(r, comp, unsigned(i - 2));
      }
      define(in.result, r);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace coopvk::jit
