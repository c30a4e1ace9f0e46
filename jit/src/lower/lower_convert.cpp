// Conversions (OpConvert*, OpUConvert, OpSConvert, OpFConvert, OpQuantizeToF16,
// OpBitcast) on every rep: per-lane and uniform values leaf by leaf, and cooperative
// matrices row by row (lower_coopmat.cpp calls convert_leaves). IEEE floats and integers
// convert with LLVM's instructions; bfloat16 and float8 (SPV_KHR_bfloat16,
// SPV_EXT_float8), whose reps hold their bits in integers, through kernels::convert,
// which rounds to nearest even and saturates exactly as the number-format tests check.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;

// The leaf type `like` has, with another scalar: a vector of as many elements, or it.
llvm::Type* same_shape(llvm::Type* like, llvm::Type* scalar) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like)) return llvm::FixedVectorType::get(scalar, vt->getNumElements());
  return scalar;
}

// Elements in a rep: leaves times the width of each.
uint64_t element_count(llvm::Type* t) {
  if (t->isArrayTy()) return t->getArrayNumElements() * element_count(t->getArrayElementType());
  if (t->isStructTy()) {
    uint64_t n = 0;
    for (unsigned i = 0; i < t->getStructNumElements(); ++i) n += element_count(t->getStructElementType(i));
    return n;
  }
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) return vt->getNumElements();
  return 1;
}
}  // namespace

bool Lowerer::special_float(Id scalar_type_id) const {
  const TypeInfo& t = type(scalar_type_id);
  return t.op == uint16_t(Op::OpTypeFloat) && t.fkind != TypeInfo::FloatKind::Ieee;
}

llvm::Value* Lowerer::convert_leaves(const Instruction& in, llvm::Value* v, Id from, Id to, llvm::Type* result_t,
                                     uint64_t count) {
  auto op = static_cast<Op>(in.opcode);
  if (count == 0) count = element_count(v->getType());
  llvm::Type* dst_scalar = scalar_type(to);
  bool from_special = special_float(from), to_special = special_float(to);
  // SPV_EXT_float8, "Conversion Instructions": saturate instead of NaN / infinity when
  // the conversion is so decorated.
  bool saturate = in.result && m.has_decoration(in.result, uint32_t(spv::Decoration::SaturatedToLargestFloat8NormalConversionEXT));
  auto each = [&](llvm::Value* x, auto f) { return map_leaves(x, [&](llvm::Value* leaf) { return f(leaf); }); };
  if (op != Op::OpBitcast && (from_special || to_special)) {
    // SPV_KHR_bfloat16: a conversion to or from bfloat16 goes through binary32; float8
    // likewise, which cannot change a result (every integer float8 can hold fits f32).
    using NF = kernels::NumberFormat;
    NF f32 = NF::F32;
    llvm::Type* f32_t = B.getFloatTy();
    llvm::Type* f32_rep = v->getType()->isArrayTy() ? llvm::ArrayType::get(same_shape(v->getType()->getArrayElementType(), f32_t), v->getType()->getArrayNumElements())
                                                    : same_shape(v->getType(), f32_t);
    llvm::Value* x = v;
    if (from_special) {
      x = convert_via_kernels(x, number_format(from, false), f32, count, f32_rep, false);
    } else if (op == Op::OpConvertSToF || op == Op::OpConvertUToF) {
      x = each(x, [&](llvm::Value* a) {
        llvm::Type* t = same_shape(a->getType(), f32_t);
        return op == Op::OpConvertSToF ? B.CreateSIToFP(a, t) : B.CreateUIToFP(a, t);
      });
    } else if (op == Op::OpFConvert) {
      if (!to_special) fail("internal: float conversion without a special format", &in);
      x = each(x, [&](llvm::Value* a) { return B.CreateFPCast(a, same_shape(a->getType(), f32_t)); });
    } else {
      fail("conversion not defined for bfloat16 or float8 operands", &in);
    }
    if (to_special) return convert_via_kernels(x, f32, number_format(to, false), count, result_t, saturate);
    return each(x, [&](llvm::Value* a) -> llvm::Value* {
      llvm::Type* t = same_shape(a->getType(), dst_scalar);
      switch (op) {
        case Op::OpConvertFToU: return B.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {t, a->getType()}, {a});
        case Op::OpConvertFToS: return B.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {t, a->getType()}, {a});
        default: return B.CreateFPCast(a, t);
      }
    });
  }
  return each(v, [&](llvm::Value* a) -> llvm::Value* {
    llvm::Type* t = same_shape(a->getType(), dst_scalar);
    switch (op) {
      // Out-of-range is undefined in SPIR-V; saturating keeps LLVM free of poison.
      case Op::OpConvertFToU: return B.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {t, a->getType()}, {a});
      case Op::OpConvertFToS: return B.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {t, a->getType()}, {a});
      case Op::OpConvertSToF: return B.CreateSIToFP(a, t);
      case Op::OpConvertUToF: return B.CreateUIToFP(a, t);
      case Op::OpUConvert: return B.CreateZExtOrTrunc(a, t);
      case Op::OpSConvert: return B.CreateSExtOrTrunc(a, t);
      case Op::OpFConvert: return B.CreateFPCast(a, t);
      case Op::OpBitcast: return B.CreateBitCast(a, t);  // same width (matrices of ints)
      default: fail("not a conversion", &in);
    }
  });
}

bool Lowerer::lower_conversion(const Instruction& in) {
  const auto& o = in.operands;
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpConvertFToU: case Op::OpConvertFToS: case Op::OpConvertSToF: case Op::OpConvertUToF:
    case Op::OpUConvert: case Op::OpSConvert: case Op::OpFConvert: {
      Id s = scalar_of(in.result_type);
      if (!(is_scalar(s) || type(s).op == uint16_t(Op::OpTypePointer))) fail("conversion to a non-scalar type", &in);
      define(in.result, convert_leaves(in, value(o.at(0)), scalar_of(type_of(o[0])), s, rep_type(in.result_type)));
      return true;
    }
    case Op::OpQuantizeToF16:
      define(in.result, map_leaves(value(o.at(0)), [&](llvm::Value* a) {
        return B.CreateFPExt(B.CreateFPTrunc(a, same_shape(a->getType(), B.getHalfTy())), a->getType());
      }));
      return true;
    case Op::OpBitcast: {
      llvm::Value* v = value(o.at(0));
      llvm::Type* rt = rep_type(in.result_type);
      // Flatten both sides to one <N x iW> per lane-bundle by bytes: handle the common
      // shapes: same leaf count, or scalar <-> 2-component vector (e.g. u64 <-> uvec2).
      auto leaves_of = [&](llvm::Value* x) {
        std::vector<llvm::Value*> out;
        if (is_leaf(x->getType())) out.push_back(x);
        else for (unsigned i = 0; i < x->getType()->getArrayNumElements(); ++i) out.push_back(B.CreateExtractValue(x, i));
        return out;
      };
      auto to_int = [&](llvm::Value* x) -> llvm::Value* {
        auto* et = (x->getType())->getScalarType();
        if (et->isPointerTy()) return B.CreatePtrToInt(x, lanes(B.getInt64Ty()));
        return B.CreateBitCast(x, lanes(B.getIntNTy(et->getPrimitiveSizeInBits())));
      };
      auto from_int = [&](llvm::Value* x, llvm::Type* leaf) -> llvm::Value* {
        auto* et = (leaf)->getScalarType();
        if (et->isPointerTy()) return B.CreateIntToPtr(x, leaf);
        return B.CreateBitCast(x, leaf);
      };
      std::vector<llvm::Value*> src = leaves_of(v);
      unsigned src_bits = (src[0]->getType())->getScalarType()->getPrimitiveSizeInBits();
      if (src_bits == 0) src_bits = 64;  // pointers
      llvm::Type* dst_leaf = is_leaf(rt) ? rt : rt->getArrayElementType();
      unsigned dst_n = is_leaf(rt) ? 1 : rt->getArrayNumElements();
      unsigned dst_bits = (dst_leaf)->getScalarType()->getPrimitiveSizeInBits();
      if (dst_bits == 0) dst_bits = 64;
      // Concatenate all source bits per lane into one wide integer, then slice.
      unsigned total = src_bits * unsigned(src.size());
      if (total != dst_bits * dst_n) fail("bitcast between types of different sizes", &in);
      llvm::Type* wide = lanes(B.getIntNTy(total));
      llvm::Value* acc = llvm::Constant::getNullValue(wide);
      for (unsigned i = 0; i < src.size(); ++i)
        acc = B.CreateOr(acc, B.CreateShl(B.CreateZExt(to_int(src[i]), wide), llvm::ConstantInt::get(wide, i * src_bits)));
      std::vector<llvm::Value*> parts;
      for (unsigned i = 0; i < dst_n; ++i) {
        llvm::Value* slice = B.CreateTrunc(B.CreateLShr(acc, llvm::ConstantInt::get(wide, i * dst_bits)), lanes(B.getIntNTy(dst_bits)));
        parts.push_back(from_int(slice, dst_leaf));
      }
      if (is_leaf(rt)) {
        define(in.result, parts[0]);
      } else {
        llvm::Value* r = llvm::PoisonValue::get(rt);
        for (unsigned i = 0; i < dst_n; ++i) r = B.CreateInsertValue(r, parts[i], i);
        define(in.result, r);
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace coopvk::jit
