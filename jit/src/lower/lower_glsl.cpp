// GLSL.std.450 extended instructions.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <spirv/unified1/GLSL.std.450.h>

#include "lower/lowerer.h"
#include "lower/vector_exp.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

bool Lowerer::lower_glsl(const Instruction& in) {
  if (in.opcode != uint16_t(spv::Op::OpExtInst)) return false;
  const auto& o = in.operands;
  auto it = m.ext_inst_imports.find(o.at(0));
  if (it == m.ext_inst_imports.end() || it->second != "GLSL.std.450")
    fail("extended instruction set is not supported", &in);
  uint32_t op = o.at(1);
  auto arg = [&](size_t i) { return value(o.at(2 + i)); };
  auto un_intr = [&](llvm::Intrinsic::ID id) {
    define(in.result, map_leaves(arg(0), [&](llvm::Value* a) { return B.CreateUnaryIntrinsic(id, a); }));
  };
  // minnum / maxnum of halves in float: without AVX512-FP16 LLVM calls fmaxf per element
  // for half vectors. Exact: the result is one of the operands (or a NaN).
  auto intr2 = [&](llvm::Intrinsic::ID id, llvm::Value* a, llvm::Value* b) -> llvm::Value* {
    const bool narrow = (id == llvm::Intrinsic::minnum || id == llvm::Intrinsic::maxnum) &&
                        a->getType()->getScalarType()->isHalfTy();
    if (!narrow) return B.CreateBinaryIntrinsic(id, a, b);
    llvm::Type* ft = a->getType()->isVectorTy()
                         ? static_cast<llvm::Type*>(llvm::VectorType::get(B.getFloatTy(), llvm::cast<llvm::VectorType>(a->getType())))
                         : B.getFloatTy();
    return B.CreateFPTrunc(B.CreateBinaryIntrinsic(id, B.CreateFPExt(a, ft), B.CreateFPExt(b, ft)), a->getType());
  };
  auto bin_intr = [&](llvm::Intrinsic::ID id) {
    define(in.result, map_leaves2(arg(0), arg(1), [&](llvm::Value* a, llvm::Value* b) { return intr2(id, a, b); }));
  };
  auto fconst = [&](llvm::Value* like, double v) { return llvm::ConstantFP::get(like->getType(), v); };
  switch (op) {
    case GLSLstd450FAbs: un_intr(llvm::Intrinsic::fabs); return true;
    case GLSLstd450SAbs:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) { return B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, B.getFalse()); }));
      return true;
    case GLSLstd450FSign:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) {
        llvm::Value* pos = B.CreateSelect(B.CreateFCmpOGT(a, fconst(a, 0)), fconst(a, 1), fconst(a, 0));
        return B.CreateSelect(B.CreateFCmpOLT(a, fconst(a, 0)), fconst(a, -1), pos);
      }));
      return true;
    case GLSLstd450SSign:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) {
        llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
        llvm::Value* pos = B.CreateZExt(B.CreateICmpSGT(a, zero), a->getType());
        return B.CreateSelect(B.CreateICmpSLT(a, zero), llvm::Constant::getAllOnesValue(a->getType()), pos);
      }));
      return true;
    case GLSLstd450Floor: un_intr(llvm::Intrinsic::floor); return true;
    case GLSLstd450Ceil: un_intr(llvm::Intrinsic::ceil); return true;
    case GLSLstd450Trunc: un_intr(llvm::Intrinsic::trunc); return true;
    case GLSLstd450Round: un_intr(llvm::Intrinsic::round); return true;
    case GLSLstd450RoundEven: un_intr(llvm::Intrinsic::roundeven); return true;
    case GLSLstd450Fract:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) {
        return B.CreateFSub(a, B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a));
      }));
      return true;
    case GLSLstd450Sqrt: un_intr(llvm::Intrinsic::sqrt); return true;
    case GLSLstd450InverseSqrt:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) {
        return B.CreateFDiv(fconst(a, 1), B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a));
      }));
      return true;
    case GLSLstd450Exp:
    case GLSLstd450Exp2:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) -> llvm::Value* {
        if (llvm::Value* v = vector_exp(B, a, op == GLSLstd450Exp)) return v;
        return B.CreateUnaryIntrinsic(op == GLSLstd450Exp ? llvm::Intrinsic::exp : llvm::Intrinsic::exp2, a);
      }));
      return true;
    case GLSLstd450Log: un_intr(llvm::Intrinsic::log); return true;
    case GLSLstd450Log2: un_intr(llvm::Intrinsic::log2); return true;
    case GLSLstd450Sin: un_intr(llvm::Intrinsic::sin); return true;
    case GLSLstd450Cos: un_intr(llvm::Intrinsic::cos); return true;
    case GLSLstd450Tan: un_intr(llvm::Intrinsic::tan); return true;
    case GLSLstd450Asin: un_intr(llvm::Intrinsic::asin); return true;
    case GLSLstd450Acos: un_intr(llvm::Intrinsic::acos); return true;
    case GLSLstd450Atan: un_intr(llvm::Intrinsic::atan); return true;
    case GLSLstd450Sinh: un_intr(llvm::Intrinsic::sinh); return true;
    case GLSLstd450Cosh: un_intr(llvm::Intrinsic::cosh); return true;
    case GLSLstd450Tanh: un_intr(llvm::Intrinsic::tanh); return true;
    case GLSLstd450Atan2: {
      // No LLVM 19 vector intrinsic: call atan2f/atan2 per lane.
      define(in.result, map_leaves2(arg(0), arg(1), [&](llvm::Value* y, llvm::Value* x) {
        llvm::Type* st = y->getType()->getScalarType();
        const char* name = st->isDoubleTy() ? "atan2" : "atan2f";
        bool half = st->isHalfTy();
        llvm::Type* ct = half ? B.getFloatTy() : st;
        llvm::FunctionCallee f = M->getOrInsertFunction(name, ct, ct, ct);
        auto one = [&](llvm::Value* ys, llvm::Value* xs) -> llvm::Value* {
          if (half) { ys = B.CreateFPExt(ys, ct); xs = B.CreateFPExt(xs, ct); }
          llvm::Value* v = B.CreateCall(f, {ys, xs});
          return half ? B.CreateFPTrunc(v, st) : v;
        };
        if (!y->getType()->isVectorTy()) return one(y, x);  // a uniform value: one call
        llvm::Value* r = llvm::PoisonValue::get(y->getType());
        for (uint32_t l = 0; l < N; ++l)
          r = B.CreateInsertElement(r, one(B.CreateExtractElement(y, l), B.CreateExtractElement(x, l)), l);
        return r;
      }));
      return true;
    }
    case GLSLstd450Pow: bin_intr(llvm::Intrinsic::pow); return true;
    case GLSLstd450FMin: bin_intr(llvm::Intrinsic::minnum); return true;
    case GLSLstd450FMax: bin_intr(llvm::Intrinsic::maxnum); return true;
    case GLSLstd450NMin: bin_intr(llvm::Intrinsic::minnum); return true;
    case GLSLstd450NMax: bin_intr(llvm::Intrinsic::maxnum); return true;
    case GLSLstd450UMin: bin_intr(llvm::Intrinsic::umin); return true;
    case GLSLstd450UMax: bin_intr(llvm::Intrinsic::umax); return true;
    case GLSLstd450SMin: bin_intr(llvm::Intrinsic::smin); return true;
    case GLSLstd450SMax: bin_intr(llvm::Intrinsic::smax); return true;
    case GLSLstd450FClamp:
    case GLSLstd450NClamp:
      define(in.result, map_leaves3(arg(0), arg(1), arg(2), [&](llvm::Value* x, llvm::Value* lo, llvm::Value* hi) {
        return intr2(llvm::Intrinsic::minnum, intr2(llvm::Intrinsic::maxnum, x, lo), hi);
      }));
      return true;
    case GLSLstd450UClamp:
      define(in.result, map_leaves3(arg(0), arg(1), arg(2), [&](llvm::Value* x, llvm::Value* lo, llvm::Value* hi) {
        return B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, x, lo), hi);
      }));
      return true;
    case GLSLstd450SClamp:
      define(in.result, map_leaves3(arg(0), arg(1), arg(2), [&](llvm::Value* x, llvm::Value* lo, llvm::Value* hi) {
        return B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, lo), hi);
      }));
      return true;
    case GLSLstd450FMix:
      define(in.result, map_leaves3(arg(0), arg(1), arg(2), [&](llvm::Value* x, llvm::Value* y, llvm::Value* a) {
        return B.CreateFAdd(x, B.CreateFMul(a, B.CreateFSub(y, x)));
      }));
      return true;
    case GLSLstd450Step:
      define(in.result, map_leaves2(arg(0), arg(1), [&](llvm::Value* edge, llvm::Value* x) {
        return B.CreateSelect(B.CreateFCmpOLT(x, edge), fconst(x, 0), fconst(x, 1));
      }));
      return true;
    case GLSLstd450SmoothStep:
      define(in.result, map_leaves3(arg(0), arg(1), arg(2), [&](llvm::Value* e0, llvm::Value* e1, llvm::Value* x) {
        llvm::Value* t = B.CreateFDiv(B.CreateFSub(x, e0), B.CreateFSub(e1, e0));
        t = B.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, B.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, t, fconst(t, 0)), fconst(t, 1));
        return B.CreateFMul(B.CreateFMul(t, t), B.CreateFSub(fconst(t, 3), B.CreateFMul(fconst(t, 2), t)));
      }));
      return true;
    case GLSLstd450Fma:
      define(in.result, map_leaves3(arg(0), arg(1), arg(2), [&](llvm::Value* a, llvm::Value* b, llvm::Value* c) {
        return B.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
      }));
      return true;
    case GLSLstd450Radians:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) { return B.CreateFMul(a, fconst(a, 3.14159265358979323846 / 180.0)); }));
      return true;
    case GLSLstd450Degrees:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) { return B.CreateFMul(a, fconst(a, 180.0 / 3.14159265358979323846)); }));
      return true;
    case GLSLstd450Length:
    case GLSLstd450Distance:
    case GLSLstd450Normalize: {
      llvm::Value* v = arg(0);
      if (op == GLSLstd450Distance) v = map_leaves2(v, arg(1), [&](auto a, auto b) { return B.CreateFSub(a, b); });
      llvm::Value* sum = nullptr;
      if (is_leaf(v->getType())) {
        sum = B.CreateFMul(v, v);
      } else {
        for (unsigned i = 0; i < v->getType()->getArrayNumElements(); ++i) {
          llvm::Value* c = B.CreateExtractValue(v, i);
          sum = sum ? B.CreateFAdd(sum, B.CreateFMul(c, c)) : B.CreateFMul(c, c);
        }
      }
      llvm::Value* len = B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, sum);
      if (op != GLSLstd450Normalize) define(in.result, len);
      else define(in.result, map_leaves(v, [&](llvm::Value* c) { return B.CreateFDiv(c, len); }));
      return true;
    }
    case GLSLstd450Cross: {
      llvm::Value* a = arg(0);
      llvm::Value* b = arg(1);
      auto e = [&](llvm::Value* v, unsigned i) { return B.CreateExtractValue(v, i); };
      llvm::Value* r = llvm::PoisonValue::get(a->getType());
      r = B.CreateInsertValue(r, B.CreateFSub(B.CreateFMul(e(a, 1), e(b, 2)), B.CreateFMul(e(b, 1), e(a, 2))), 0);
      r = B.CreateInsertValue(r, B.CreateFSub(B.CreateFMul(e(a, 2), e(b, 0)), B.CreateFMul(e(b, 2), e(a, 0))), 1);
      r = B.CreateInsertValue(r, B.CreateFSub(B.CreateFMul(e(a, 0), e(b, 1)), B.CreateFMul(e(b, 0), e(a, 1))), 2);
      define(in.result, r);
      return true;
    }
    case GLSLstd450FindILsb:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) {
        llvm::Value* tz = B.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, a, B.getTrue());
        return B.CreateSelect(B.CreateICmpEQ(a, llvm::Constant::getNullValue(a->getType())), llvm::Constant::getAllOnesValue(a->getType()), tz);
      }));
      return true;
    case GLSLstd450FindUMsb:
    case GLSLstd450FindSMsb:
      define(in.result, map_leaves(arg(0), [&](llvm::Value* a) {
        llvm::Type* t = a->getType();
        unsigned w = (t)->getScalarType()->getIntegerBitWidth();
        llvm::Value* x = a;
        // Signed: the most significant bit that differs from the sign bit.
        if (op == GLSLstd450FindSMsb)
          x = B.CreateSelect(B.CreateICmpSLT(a, llvm::Constant::getNullValue(t)), B.CreateNot(a), a);
        llvm::Value* lz = B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, B.getFalse());
        return B.CreateSub(llvm::ConstantInt::get(t, w - 1), lz);  // -1 when x == 0
      }));
      return true;
    case GLSLstd450PackHalf2x16: {
      llvm::Value* v = arg(0);
      llvm::Type* i32v = lanes(B.getInt32Ty());
      auto h = [&](unsigned i) {
        llvm::Value* x = B.CreateFPTrunc(B.CreateExtractValue(v, i), lanes(B.getHalfTy()));
        return B.CreateZExt(B.CreateBitCast(x, lanes(B.getInt16Ty())), i32v);
      };
      define(in.result, B.CreateOr(h(0), B.CreateShl(h(1), splat(B.getInt32(16)))));
      return true;
    }
    case GLSLstd450UnpackHalf2x16: {
      llvm::Value* v = arg(0);
      auto h = [&](unsigned sh) {
        llvm::Value* bits = B.CreateTrunc(B.CreateLShr(v, splat(B.getInt32(sh))), lanes(B.getInt16Ty()));
        return B.CreateFPExt(B.CreateBitCast(bits, lanes(B.getHalfTy())), lanes(B.getFloatTy()));
      };
      llvm::Value* r = llvm::PoisonValue::get(rep_type(in.result_type));
      r = B.CreateInsertValue(r, h(0), 0);
      define(in.result, B.CreateInsertValue(r, h(16), 1));
      return true;
    }
    case GLSLstd450Ldexp:
      define(in.result, map_leaves2(arg(0), arg(1), [&](llvm::Value* x, llvm::Value* e) {
        return B.CreateIntrinsic(llvm::Intrinsic::ldexp, {x->getType(), e->getType()}, {x, e});
      }));
      return true;
    case GLSLstd450FrexpStruct: {
      llvm::Value* x = arg(0);
      llvm::Type* rt = rep_type(in.result_type);
      llvm::Type* exp_t = rt->getStructElementType(1);
      llvm::Value* mant = nullptr;
      llvm::Value* ex = nullptr;
      mant = map_leaves(x, [&](llvm::Value* v) {
        return B.CreateExtractValue(B.CreateIntrinsic(llvm::Intrinsic::frexp,
            {v->getType(), is_leaf(exp_t) ? exp_t : exp_t->getArrayElementType()}, {v}), 0);
      });
      ex = map_leaves(x, [&](llvm::Value* v) {
        return B.CreateExtractValue(B.CreateIntrinsic(llvm::Intrinsic::frexp,
            {v->getType(), is_leaf(exp_t) ? exp_t : exp_t->getArrayElementType()}, {v}), 1);
      });
      llvm::Value* r = llvm::PoisonValue::get(rt);
      r = B.CreateInsertValue(r, mant, 0);
      define(in.result, B.CreateInsertValue(r, ex, 1));
      return true;
    }
    case GLSLstd450ModfStruct: {
      llvm::Value* x = arg(0);
      llvm::Value* whole = map_leaves(x, [&](llvm::Value* v) { return B.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, v); });
      llvm::Value* frac = map_leaves2(x, whole, [&](llvm::Value* v, llvm::Value* w) { return B.CreateFSub(v, w); });
      llvm::Value* r = llvm::PoisonValue::get(rep_type(in.result_type));
      r = B.CreateInsertValue(r, frac, 0);
      define(in.result, B.CreateInsertValue(r, whole, 1));
      return true;
    }
    case GLSLstd450Reflect:
    case GLSLstd450FaceForward: {
      // Reflect(I, N) = I - 2 dot(N, I) N; FaceForward(N, I, Nref) = dot(Nref, I) < 0 ? N : -N.
      auto dot = [&](llvm::Value* a, llvm::Value* b) {
        if (is_leaf(a->getType())) return B.CreateFMul(a, b);
        llvm::Value* acc = nullptr;
        for (unsigned i = 0; i < a->getType()->getArrayNumElements(); ++i) {
          llvm::Value* p = B.CreateFMul(B.CreateExtractValue(a, i), B.CreateExtractValue(b, i));
          acc = acc ? B.CreateFAdd(acc, p) : p;
        }
        return acc;
      };
      if (op == GLSLstd450Reflect) {
        llvm::Value* i_v = arg(0);
        llvm::Value* n_v = arg(1);
        llvm::Value* d = dot(n_v, i_v);
        llvm::Value* two_d = B.CreateFMul(fconst(d, 2.0), d);
        define(in.result, map_leaves2(i_v, n_v, [&](llvm::Value* iv, llvm::Value* nv) { return B.CreateFSub(iv, B.CreateFMul(two_d, nv)); }));
      } else {
        llvm::Value* n_v = arg(0);
        llvm::Value* d = dot(arg(2), arg(1));
        llvm::Value* neg = B.CreateFCmpOLT(d, fconst(d, 0.0));
        define(in.result, map_leaves(n_v, [&](llvm::Value* nv) { return B.CreateSelect(neg, nv, B.CreateFNeg(nv)); }));
      }
      return true;
    }
    case GLSLstd450PackUnorm4x8:
    case GLSLstd450PackSnorm4x8:
    case GLSLstd450PackUnorm2x16:
    case GLSLstd450PackSnorm2x16: {
      bool snorm = op == GLSLstd450PackSnorm4x8 || op == GLSLstd450PackSnorm2x16;
      bool four = op == GLSLstd450PackUnorm4x8 || op == GLSLstd450PackSnorm4x8;
      unsigned bits = four ? 8 : 16;
      double scale = snorm ? double((1u << (bits - 1)) - 1) : double((1u << bits) - 1);
      llvm::Value* v = arg(0);
      llvm::Type* i32v = lanes(B.getInt32Ty());
      llvm::Value* out = llvm::Constant::getNullValue(i32v);
      for (unsigned k = 0; k < (four ? 4u : 2u); ++k) {
        llvm::Value* c = B.CreateExtractValue(v, k);
        llvm::Value* lo = fconst(c, snorm ? -1.0 : 0.0);
        c = B.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, B.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, c, lo), fconst(c, 1.0));
        c = B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, B.CreateFMul(c, fconst(c, scale)));
        llvm::Value* q = B.CreateFPToSI(c, i32v);
        q = B.CreateAnd(q, splat(B.getInt32((1u << bits) - 1)));
        out = B.CreateOr(out, B.CreateShl(q, splat(B.getInt32(bits * k))));
      }
      define(in.result, out);
      return true;
    }
    case GLSLstd450UnpackUnorm4x8:
    case GLSLstd450UnpackSnorm4x8:
    case GLSLstd450UnpackUnorm2x16:
    case GLSLstd450UnpackSnorm2x16: {
      bool snorm = op == GLSLstd450UnpackSnorm4x8 || op == GLSLstd450UnpackSnorm2x16;
      bool four = op == GLSLstd450UnpackUnorm4x8 || op == GLSLstd450UnpackSnorm4x8;
      unsigned bits = four ? 8 : 16;
      double scale = snorm ? double((1u << (bits - 1)) - 1) : double((1u << bits) - 1);
      llvm::Value* v = arg(0);
      llvm::Type* f32v = lanes(B.getFloatTy());
      llvm::Value* r = llvm::PoisonValue::get(rep_type(in.result_type));
      for (unsigned k = 0; k < (four ? 4u : 2u); ++k) {
        llvm::Value* field = B.CreateTrunc(B.CreateLShr(v, splat(B.getInt32(bits * k))), lanes(B.getIntNTy(bits)));
        llvm::Value* f = snorm ? B.CreateSIToFP(field, f32v) : B.CreateUIToFP(field, f32v);
        f = B.CreateFDiv(f, llvm::ConstantFP::get(f32v, scale));
        if (snorm) f = B.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, f, llvm::ConstantFP::get(f32v, -1.0));
        r = B.CreateInsertValue(r, f, k);
      }
      define(in.result, r);
      return true;
    }
    default:
      fail("GLSL.std.450 instruction " + std::to_string(op) + " is not supported", &in);
  }
}

}  // namespace coopvk::jit
