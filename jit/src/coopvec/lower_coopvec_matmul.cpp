// OpCooperativeVectorMatrixMulNV / MatrixMulAddNV and the training accumulations
// (SPV_NV_cooperative_vector, "3.42.X Cooperative Vector Instructions"): per invocation,
// a call of kernels/coopvec_ops.h for each active lane (runtime_symbols.h), with the
// lane's pointers, offsets and strides and its column of the vectors' buffers (lane l's
// component j is at j * N + l elements; the kernels take the component stride). A multiply
// whose matrix and bias are the same for every lane, with every lane running, is instead one
// product over the lanes (kernels/coopvec_batch.h). The
// descriptor of the instruction (formats, M, K, layout, transpose) is a constant; the
// checks of what a shader may ask are the kernels' own coopvec_*_error(), run here at
// compile time so a bad combination fails pipeline creation with the kernel's reason.
#include <cstddef>

#include <llvm/IR/Constants.h>

#include "coopvk/jit/shader_abi.h"
#include "coopvk/kernels/coopvec_ops.h"
#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
using kernels::NumberFormat;

// SPIR-V "Component Type" (the interpretation operands) -> NumberFormat; packed: the
// 4-per-32-bit-component forms.
bool interpretation(uint64_t v, NumberFormat* f, bool* packed) {
  using CT = spv::ComponentType;
  *packed = false;
  if (v > UINT32_MAX) return false;
  switch (static_cast<CT>(uint32_t(v))) {
    case CT::Float16NV: *f = NumberFormat::F16; return true;
    case CT::Float32NV: *f = NumberFormat::F32; return true;
    case CT::SignedInt8NV: *f = NumberFormat::I8; return true;
    case CT::SignedInt16NV: *f = NumberFormat::I16; return true;
    case CT::SignedInt32NV: *f = NumberFormat::I32; return true;
    case CT::UnsignedInt8NV: *f = NumberFormat::U8; return true;
    case CT::UnsignedInt16NV: *f = NumberFormat::U16; return true;
    case CT::UnsignedInt32NV: *f = NumberFormat::U32; return true;
    case CT::SignedInt8PackedNV: *f = NumberFormat::I8; *packed = true; return true;
    case CT::UnsignedInt8PackedNV: *f = NumberFormat::U8; *packed = true; return true;
    case CT::FloatE4M3NV: *f = NumberFormat::E4M3; return true;
    case CT::FloatE5M2NV: *f = NumberFormat::E5M2; return true;
    default: return false;  // Float64NV, the 64-bit integers, and anything unknown
  }
}
}  // namespace

namespace {
// Lane l of a per-lane or uniform scalar value.
llvm::Value* lane_value(llvm::IRBuilder<>& B, const Val& v, llvm::Value* l) {
  return v.uniform ? v.v : B.CreateExtractElement(v.v, l);
}
}  // namespace

bool Lowerer::lower_coopvec_matmul(const Instruction& in) {
  const auto& o = in.operands;
  const Op op = static_cast<Op>(in.opcode);
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) fail(std::string(spv_op_name(in.opcode)) + ": " + what, &in);
  };
  auto constant_operand = [&](Id id, const char* what) {
    need(is_constant(id) && type(type_of(id)).op == uint16_t(Op::OpTypeInt), std::string(what) + " must be an integer constant");
    return constant_u64(id);
  };
  auto check_pointer = [&](Id id, const char* what) {
    const TypeInfo& pt = type(type_of(id));
    need(pt.op == uint16_t(Op::OpTypePointer), std::string(what) + " must be a pointer");
    need(pt.storage == uint32_t(spv::StorageClass::StorageBuffer) ||
             pt.storage == uint32_t(spv::StorageClass::PhysicalStorageBuffer) ||
             pt.storage == uint32_t(spv::StorageClass::Workgroup) ||
             pt.storage == uint32_t(spv::StorageClass::CrossWorkgroup),
         std::string(what) + " must point to StorageBuffer, PhysicalStorageBuffer or Workgroup memory");
  };
  auto check_int32 = [&](Id id, const char* what) {
    const TypeInfo& t = type(type_of(id));
    need(t.op == uint16_t(Op::OpTypeInt) && t.width == 32, std::string(what) + " must be a 32-bit integer");
  };
  auto layout_operand = [&](Id id) {
    uint64_t v = constant_operand(id, "MemoryLayout");
    need(v <= uint64_t(kernels::MatrixLayout::TrainingOptimal),
         "unknown cooperative vector matrix layout " + std::to_string(v));
    return uint32_t(v);
  };
  // Robust buffer access: [lo, hi) of a pointer's bound range, as lane vectors or scalars.
  auto range_of = [&](Id pointer) -> std::optional<std::pair<Val, Val>> {
    std::optional<Bounds> b = bounds_of(pointer);
    if (!b) return std::nullopt;
    Val lo = b->base;
    Val hi{B.CreateGEP(B.getInt8Ty(), b->base.uniform && !b->range.uniform ? B.CreateVectorSplat(N, b->base.v) : b->base.v,
                       b->range.v),
           b->base.uniform && b->range.uniform};
    return std::make_pair(lo, hi);
  };
  auto address = [&](Id pointer, Id offset) -> Val {
    Val p = value_v(pointer), off = value_v(offset);
    if (p.uniform && off.uniform) return {B.CreateGEP(B.getInt8Ty(), p.v, B.CreateZExt(off.v, B.getInt64Ty())), true};
    llvm::Value* ptrs = p.uniform ? B.CreateVectorSplat(N, p.v) : p.v;
    llvm::Value* offs = off.uniform ? B.CreateVectorSplat(N, off.v) : off.v;
    return {B.CreateGEP(B.getInt8Ty(), ptrs, B.CreateZExt(offs, llvm::FixedVectorType::get(B.getInt64Ty(), N))), false};
  };
  auto element_bytes = [&](Id vec_type) {
    return M->getDataLayout().getTypeAllocSize(scalar_type(type(vec_type).elem));
  };
  llvm::Type* ptr = B.getPtrTy();
  llvm::Type* i64 = B.getInt64Ty();
  llvm::Type* i32 = B.getInt32Ty();
  auto null = llvm::ConstantPointerNull::get(B.getPtrTy());
  auto desc_global = [&](const std::vector<uint32_t>& words) {
    std::vector<llvm::Constant*> cs;
    for (uint32_t w : words) cs.push_back(B.getInt32(w));
    auto* at = llvm::ArrayType::get(i32, words.size());
    auto* gv = new llvm::GlobalVariable(*M, at, true, llvm::GlobalValue::PrivateLinkage, llvm::ConstantArray::get(at, cs),
                                        "coopvec_desc");
    gv->setAlignment(llvm::Align(8));
    return gv;
  };
  auto lane_column = [&](llvm::Value* buf, llvm::Value* l, uint64_t esz) {
    return B.CreateGEP(B.getInt8Ty(), buf, B.CreateMul(B.CreateZExt(l, i64), B.getInt64(esz)));
  };

  switch (op) {
    case Op::OpCooperativeVectorMatrixMulNV:
    case Op::OpCooperativeVectorMatrixMulAddNV: {
      const bool add = op == Op::OpCooperativeVectorMatrixMulAddNV;
      const size_t fixed = add ? 11 : 8;  // ids up to MemoryLayout
      need(o.size() >= fixed, "too few operands");
      const Id input = o[0], matrix = o[2], matrix_offset = o[3];
      const Id bias = add ? o[5] : 0, bias_offset = add ? o[6] : 0;
      const size_t mk = add ? 8 : 5;
      const Id transpose_id = o.size() > fixed ? o[fixed] : 0;
      const Id stride_id = o.size() > fixed + 1 ? o[fixed + 1] : 0;
      const uint32_t operands = o.size() > fixed + 2 ? o[fixed + 2] : 0;
      using MO = spv::CooperativeMatrixOperandsMask;
      need((operands & ~uint32_t(uint32_t(MO::MatrixBSignedComponentsKHR) | uint32_t(MO::MatrixResultSignedComponentsKHR) |
                                 uint32_t(MO::SaturatingAccumulationKHR))) == 0,
           "only the MatrixBSignedComponents, MatrixResultSignedComponents and SaturatingAccumulation operands apply");
      need(is_coopvec(in.result_type), "'Result Type' must be a cooperative vector type");
      need(is_coopvec(type_of(input)), "'Input' must be a cooperative vector");
      check_pointer(matrix, "'Matrix'");
      check_int32(matrix_offset, "'MatrixOffset'");
      if (add) {
        check_pointer(bias, "'Bias'");
        check_int32(bias_offset, "'BiasOffset'");
      }
      kernels::CoopVecMatMulDesc d{};
      NumberFormat interp, mat, bias_f = NumberFormat::F32;
      bool packed = false, unused = false;
      need(interpretation(constant_operand(o[1], "InputInterpretation"), &interp, &packed), "unknown InputInterpretation");
      need(interpretation(constant_operand(o[4], "MatrixInterpretation"), &mat, &unused) && !unused,
           "unknown or packed MatrixInterpretation");
      if (add)
        need(interpretation(constant_operand(o[7], "BiasInterpretation"), &bias_f, &unused) && !unused,
             "unknown or packed BiasInterpretation");
      const TypeInfo& it = type(type_of(input));
      const TypeInfo& rt = type(in.result_type);
      d.input_format = uint32_t(packed ? NumberFormat::U32
                                       : number_format(it.elem, (operands & uint32_t(MO::MatrixBSignedComponentsKHR)) != 0));
      if (packed)
        need(type(it.elem).op == uint16_t(Op::OpTypeInt) && type(it.elem).width == 32,
             "a packed InputInterpretation needs 32-bit integer input components");
      d.input_interp = uint32_t(interp);
      d.input_packed = packed;
      d.matrix_format = uint32_t(mat);
      d.bias_format = uint32_t(bias_f);
      d.result_format = uint32_t(number_format(rt.elem, (operands & uint32_t(MO::MatrixResultSignedComponentsKHR)) != 0));
      d.m = uint32_t(constant_operand(o[mk], "M"));
      d.k = uint32_t(constant_operand(o[mk + 1], "K"));
      d.layout = layout_operand(o[mk + 2]);
      d.has_bias = add;
      d.saturate = (operands & uint32_t(MO::SaturatingAccumulationKHR)) != 0;
      if (transpose_id) {
        need(is_constant(transpose_id) && type(type_of(transpose_id)).op == uint16_t(Op::OpTypeBool),
             "'Transpose' must be a boolean constant");
        bool saved = scalar_mode;
        scalar_mode = true;
        auto* c = llvm::dyn_cast<llvm::ConstantInt>(constant(transpose_id));
        scalar_mode = saved;
        need(c != nullptr, "'Transpose' must be a boolean constant");
        d.transpose = c->isOne();
      }
      need(rt.count == d.m, "the result has " + std::to_string(rt.count) + " components but M is " + std::to_string(d.m));
      if (packed)
        need(uint64_t(it.count) * 4 >= d.k, "the packed input holds fewer than K values");
      else
        need(it.count == d.k, "'Input' has " + std::to_string(it.count) + " components but K is " + std::to_string(d.k));
      const bool strided = d.layout <= uint32_t(kernels::MatrixLayout::ColumnMajor);
      if (strided) need(stride_id != 0, "row- and column-major matrices need a MatrixStride");
      if (stride_id) check_int32(stride_id, "'MatrixStride'");
      if (const char* why = kernels::coopvec_matmul_error(d)) need(false, why);
      check_coopvec_combination(d, in);

      llvm::GlobalVariable* desc = desc_global({d.input_format, d.input_interp, d.input_packed, d.matrix_format,
                                                d.bias_format, d.result_format, d.m, d.k, d.layout, d.transpose,
                                                d.has_bias, d.saturate});
      static_assert(sizeof(kernels::CoopVecMatMulDesc) == 12 * 4, "descriptor layout");
      // CoopVecMatMulArgs, field by field.
      auto* args_t = llvm::StructType::get(C, {ptr, i64, ptr, i64, ptr, ptr, i64, ptr, ptr, ptr, ptr});
      static_assert(sizeof(kernels::CoopVecMatMulArgs) == 11 * 8, "argument layout");
      Val maddr = address(matrix, matrix_offset);
      Val baddr = add ? address(bias, bias_offset) : Val{null, true};
      Val stride = stride_id ? value_v(stride_id) : Val{B.getInt32(0), true};
      auto mrange = range_of(matrix);
      auto brange = add ? range_of(bias) : std::nullopt;
      llvm::Value* in_buf = value_v(input).v;
      llvm::Value* out = coopvec_buffer(in.result, in.result_type);
      const uint64_t in_esz = element_bytes(type_of(input)), out_esz = element_bytes(in.result_type);
      llvm::AllocaInst* args = entry_alloca(args_t, 1, 16);
      llvm::FunctionCallee f =
          M_get_function(kCoopVecMatMulSymbol, llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr}, false));
      // Every lane on the same matrix and bias (the usual case: uniform pointers, offsets
      // and stride) and every lane running: one product over the lanes (coopvec_batch.h),
      // which gives each lane the bits the per-lane call would. Inactive lanes keep their
      // results' old contents, so with any of them the lanes run one by one.
      auto uniform = [](const std::optional<std::pair<Val, Val>>& r) { return !r || (r->first.uniform && r->second.uniform); };
      llvm::BasicBlock* done_bb = nullptr;
      if (maddr.uniform && stride.uniform && baddr.uniform && uniform(mrange) && uniform(brange) &&
          mask->getType()->isVectorTy()) {
        llvm::BasicBlock* all_bb = llvm::BasicBlock::Create(C, "coopvec.lanes", F.llvm_fn);
        llvm::BasicBlock* each_bb = llvm::BasicBlock::Create(C, "coopvec.each", F.llvm_fn);
        done_bb = llvm::BasicBlock::Create(C, "coopvec.done", F.llvm_fn);
        llvm::Value* bits = B.CreateBitCast(mask, B.getIntNTy(N));
        B.CreateCondBr(B.CreateICmpEQ(bits, llvm::ConstantInt::getAllOnesValue(B.getIntNTy(N))), all_bb, each_bb);
        B.SetInsertPoint(all_bb);
        llvm::Value* fields[] = {
            maddr.v,
            B.CreateZExt(stride.v, i64),
            in_buf,
            B.getInt64(int64_t(in_esz) * N),
            baddr.v,
            out,
            B.getInt64(int64_t(out_esz) * N),
            mrange ? mrange->first.v : null,
            mrange ? mrange->second.v : null,
            brange ? brange->first.v : null,
            brange ? brange->second.v : null,
        };
        for (unsigned k = 0; k < 11; ++k) B.CreateStore(fields[k], B.CreateStructGEP(args_t, args, k));
        llvm::Value* serial = B.CreateLoad(
            i64, B.CreateConstGEP1_64(B.getInt8Ty(), ctx_field(kCtxDispatch), offsetof(DispatchState, dispatch_serial)));
        llvm::FunctionCallee lanes_f = M_get_function(
            kCoopVecMatMulLanesSymbol, llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr, i32, i64}, false));
        B.CreateCall(lanes_f, {desc, args, B.getInt32(N), serial});
        B.CreateBr(done_bb);
        B.SetInsertPoint(each_bb);
      }
      for_active_lanes(mask, [&](llvm::Value* l) {
        llvm::Value* fields[] = {
            lane_value(B, maddr, l),
            B.CreateZExt(lane_value(B, stride, l), i64),
            lane_column(in_buf, l, in_esz),
            B.getInt64(int64_t(in_esz) * N),
            lane_value(B, baddr, l),
            lane_column(out, l, out_esz),
            B.getInt64(int64_t(out_esz) * N),
            mrange ? lane_value(B, mrange->first, l) : null,
            mrange ? lane_value(B, mrange->second, l) : null,
            brange ? lane_value(B, brange->first, l) : null,
            brange ? lane_value(B, brange->second, l) : null,
        };
        for (unsigned k = 0; k < 11; ++k) B.CreateStore(fields[k], B.CreateStructGEP(args_t, args, k));
        B.CreateCall(f, {desc, args});
      });
      if (done_bb) {
        B.CreateBr(done_bb);
        B.SetInsertPoint(done_bb);
      }
      define_v(in.result, {out, true});
      return true;
    }
    case Op::OpCooperativeVectorOuterProductAccumulateNV: {
      // (Pointer, Offset, A, B, MemoryLayout, MatrixInterpretation, [MatrixStride])
      need(o.size() >= 6, "too few operands");
      check_pointer(o[0], "'Pointer'");
      check_int32(o[1], "'Offset'");
      need(is_coopvec(type_of(o[2])) && is_coopvec(type_of(o[3])), "'A' and 'B' must be cooperative vectors");
      const TypeInfo &ta = type(type_of(o[2])), &tb = type(type_of(o[3]));
      need(ta.elem == tb.elem, "'A' and 'B' must have the same component type");
      kernels::CoopVecOuterDesc d{};
      NumberFormat mat;
      bool packed = false;
      d.layout = layout_operand(o[4]);
      need(interpretation(constant_operand(o[5], "MatrixInterpretation"), &mat, &packed) && !packed,
           "unknown or packed MatrixInterpretation");
      d.vector_format = uint32_t(number_format(ta.elem, true));
      d.matrix_format = uint32_t(mat);
      d.m = ta.count;
      d.n = tb.count;
      const Id stride_id = o.size() > 6 ? o[6] : 0;
      if (d.layout <= uint32_t(kernels::MatrixLayout::ColumnMajor))
        need(stride_id != 0, "row- and column-major matrices need a MatrixStride");
      if (stride_id) check_int32(stride_id, "'MatrixStride'");
      if (const char* why = kernels::coopvec_outer_error(d)) need(false, why);
      llvm::GlobalVariable* desc = desc_global({d.vector_format, d.matrix_format, d.m, d.n, d.layout, 0});
      static_assert(sizeof(kernels::CoopVecOuterDesc) == 6 * 4, "descriptor layout");
      auto* args_t = llvm::StructType::get(C, {ptr, i64, ptr, i64, ptr, i64, ptr, ptr});
      static_assert(sizeof(kernels::CoopVecOuterArgs) == 8 * 8, "argument layout");
      Val maddr = address(o[0], o[1]);
      Val stride = stride_id ? value_v(stride_id) : Val{B.getInt32(0), true};
      auto range = range_of(o[0]);
      llvm::Value* a_buf = value_v(o[2]).v;
      llvm::Value* b_buf = value_v(o[3]).v;
      const uint64_t esz = element_bytes(type_of(o[2]));
      llvm::AllocaInst* args = entry_alloca(args_t, 1, 16);
      llvm::FunctionCallee f = M_get_function(kCoopVecOuterSymbol, llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr}, false));
      for_active_lanes(mask, [&](llvm::Value* l) {
        llvm::Value* fields[] = {
            lane_value(B, maddr, l), B.CreateZExt(lane_value(B, stride, l), i64),
            lane_column(a_buf, l, esz), B.getInt64(int64_t(esz) * N),
            lane_column(b_buf, l, esz), B.getInt64(int64_t(esz) * N),
            range ? lane_value(B, range->first, l) : null, range ? lane_value(B, range->second, l) : null,
        };
        for (unsigned k = 0; k < 8; ++k) B.CreateStore(fields[k], B.CreateStructGEP(args_t, args, k));
        B.CreateCall(f, {desc, args});
      });
      return true;
    }
    case Op::OpCooperativeVectorReduceSumAccumulateNV: {
      // (Pointer, Offset, V)
      need(o.size() >= 3, "too few operands");
      check_pointer(o[0], "'Pointer'");
      check_int32(o[1], "'Offset'");
      need(is_coopvec(type_of(o[2])), "'V' must be a cooperative vector");
      const TypeInfo& tv = type(type_of(o[2]));
      NumberFormat f_v = number_format(tv.elem, true);
      need(f_v == NumberFormat::F16 || f_v == NumberFormat::F32, "'V' must have 16- or 32-bit float components");
      auto* args_t = llvm::StructType::get(C, {ptr, ptr, i64, ptr, ptr});
      static_assert(sizeof(kernels::CoopVecReduceArgs) == 5 * 8, "argument layout");
      Val addr = address(o[0], o[1]);
      auto range = range_of(o[0]);
      llvm::Value* v_buf = value_v(o[2]).v;
      const uint64_t esz = element_bytes(type_of(o[2]));
      llvm::AllocaInst* args = entry_alloca(args_t, 1, 16);
      llvm::FunctionCallee f =
          M_get_function(kCoopVecReduceSymbol, llvm::FunctionType::get(B.getVoidTy(), {i32, i32, ptr}, false));
      for_active_lanes(mask, [&](llvm::Value* l) {
        llvm::Value* fields[] = {
            lane_value(B, addr, l), lane_column(v_buf, l, esz), B.getInt64(int64_t(esz) * N),
            range ? lane_value(B, range->first, l) : null, range ? lane_value(B, range->second, l) : null,
        };
        for (unsigned k = 0; k < 5; ++k) B.CreateStore(fields[k], B.CreateStructGEP(args_t, args, k));
        B.CreateCall(f, {B.getInt32(uint32_t(f_v)), B.getInt32(tv.count), args});
      });
      return true;
    }
    default:
      return false;
  }
}

}  // namespace coopvk::jit
