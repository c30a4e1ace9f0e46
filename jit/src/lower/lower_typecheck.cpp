// Operand type checks run before an instruction is lowered. The reader validates the
// module's structure, not its typing; the lowering builds LLVM IR assuming well-typed
// operands, and LLVM asserts (or misbehaves) on ill-typed IR. A module that spirv-val
// would reject must fail pipeline creation here with a message, never crash the driver.
#include <spirv/unified1/GLSL.std.450.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
}

bool Lowerer::check_matrix_types(const Instruction& in) {
  // SPV_KHR_cooperative_matrix, "Arithmetic Instructions", "Composite Instructions",
  // "Conversion Instructions": which instructions take cooperative matrix operands, and
  // with which types. Returns false when no matrix is involved (the checks below apply).
  const auto& o = in.operands;
  const Id rt = in.result_type;
  bool any = rt && is_matrix(rt);
  for (uint16_t k : in.id_operands)
    if (F.value_types.count(o[k]) || m.global(o[k])) {
      const Instruction* g = m.global(o[k]);
      if (g && spv_op_is_type(g->opcode)) continue;
      if (auto vt = F.value_types.find(o[k]); vt != F.value_types.end() ? is_matrix(vt->second) : (g && is_matrix(g->result_type)))
        any = true;
    }
  if (!any) return false;
  auto need = [&](bool ok, const char* what) {
    if (!ok) fail(std::string("ill-typed cooperative matrix operands: ") + what, &in);
  };
  auto component = [&](Id matrix_type) { return type(matrix_type).elem; };
  auto is_float = [&](Id t) { return type(t).op == uint16_t(Op::OpTypeFloat); };
  auto ieee = [&](Id t) { return is_float(t) && type(t).fkind == TypeInfo::FloatKind::Ieee; };
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpFAdd: case Op::OpFSub: case Op::OpFMul: case Op::OpFDiv: case Op::OpFNegate:
    case Op::OpIAdd: case Op::OpISub: case Op::OpIMul: case Op::OpSDiv: case Op::OpUDiv: case Op::OpSNegate: {
      bool fop = in.opcode == uint16_t(Op::OpFAdd) || in.opcode == uint16_t(Op::OpFSub) ||
                 in.opcode == uint16_t(Op::OpFMul) || in.opcode == uint16_t(Op::OpFDiv) ||
                 in.opcode == uint16_t(Op::OpFNegate);
      need(is_matrix(rt), "arithmetic result");
      for (Id v : o) need(type_of(v) == rt, "arithmetic operands must have the result's type");
      need(fop ? ieee(component(rt)) : type(component(rt)).op == uint16_t(Op::OpTypeInt),
           fop ? "float arithmetic on a matrix of IEEE floats" : "integer arithmetic on a matrix of integers");
      return true;
    }
    case Op::OpMatrixTimesScalar:
      need(o.size() == 2 && is_matrix(rt) && type_of(o[0]) == rt && type_of(o[1]) == component(rt) &&
               (ieee(component(rt)) || type(component(rt)).op == uint16_t(Op::OpTypeInt)),
           "matrix times scalar");
      return true;
    case Op::OpCompositeConstruct:
      need(o.size() == 1 && is_matrix(rt) && type_of(o[0]) == component(rt), "matrix construct from one component");
      return true;
    case Op::OpCompositeExtract:
      need(o.size() == 2 && is_matrix(type_of(o[0])) && rt == component(type_of(o[0])), "matrix component extract");
      return true;
    case Op::OpCompositeInsert:
      need(o.size() == 3 && is_matrix(rt) && type_of(o[1]) == rt && type_of(o[0]) == component(rt), "matrix component insert");
      return true;
    case Op::OpFConvert: case Op::OpSConvert: case Op::OpUConvert: case Op::OpConvertFToS: case Op::OpConvertFToU:
    case Op::OpConvertSToF: case Op::OpConvertUToF: case Op::OpBitcast: {
      need(o.size() == 1 && is_matrix(rt) && is_matrix(type_of(o[0])), "matrix conversion between matrices");
      Id from = component(type_of(o[0])), to = component(rt);
      bool fin = is_float(from), fout = is_float(to);
      switch (static_cast<Op>(in.opcode)) {
        case Op::OpFConvert: need(fin && fout, "OpFConvert between float matrices"); break;
        case Op::OpSConvert: case Op::OpUConvert: need(!fin && !fout, "integer conversion between integer matrices"); break;
        case Op::OpConvertFToS: case Op::OpConvertFToU: need(fin && !fout, "float to integer matrix"); break;
        case Op::OpConvertSToF: case Op::OpConvertUToF: need(!fin && fout, "integer to float matrix"); break;
        default:
          need(!fin && !fout && type(from).width == type(to).width, "bitcast between integer matrices of one width");
      }
      return true;
    }
    case Op::OpCooperativeMatrixLoadKHR: case Op::OpCooperativeMatrixStoreKHR: case Op::OpCooperativeMatrixMulAddKHR:
    case Op::OpCooperativeMatrixLengthKHR: case Op::OpCopyObject: case Op::OpPhi: case Op::OpSelect:
    case Op::OpFunctionCall: case Op::OpReturnValue: case Op::OpLoad: case Op::OpStore: case Op::OpVariable:
    case Op::OpUndef: case Op::OpCopyLogical: case Op::OpCooperativeMatrixConvertUseEXT:
    case Op::OpCooperativeMatrixReduceEXT: case Op::OpCooperativeMatrixPerElementOpEXT:
    case Op::OpCooperativeMatrixGetCoordinateEXT: case Op::OpCooperativeMatrixTransposeNV:
    case Op::OpCooperativeMatrixLoadTensorNV: case Op::OpCooperativeMatrixStoreTensorNV:
      return true;  // their own lowering checks the rest
    default:
      fail("instruction does not take cooperative matrix operands", &in);
  }
}

void Lowerer::check_special_float_use(const Instruction& in) {
  // SPV_KHR_bfloat16 / SPV_EXT_float8, "Validation Rules": values of these types may
  // only be used by constant, memory, function, conversion and composite instructions,
  // OpSelect, OpPhi, OpReturnValue, (bfloat16) OpDot and the cooperative-matrix ones.
  // Their reps hold bits in integers, so anything else would compute on the bits.
  auto special = [&](Id t) {
    if (!t || !types_.count(t)) return false;
    const TypeInfo& ti = type(t);
    if (ti.op == uint16_t(Op::OpTypePointer)) return false;
    return special_float(scalar_of(t));
  };
  bool touches = special(in.result_type);
  for (uint16_t k : in.id_operands)
    if (!touches && (F.value_types.count(in.operands[k]) || m.global(in.operands[k]))) {
      const Instruction* g = m.global(in.operands[k]);
      if (g && spv_op_is_type(g->opcode)) continue;
      touches = special(type_of(in.operands[k]));
    }
  if (!touches) return;
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpLoad: case Op::OpStore: case Op::OpCopyMemory: case Op::OpVariable: case Op::OpAccessChain:
    case Op::OpInBoundsAccessChain: case Op::OpPtrAccessChain: case Op::OpInBoundsPtrAccessChain:
    case Op::OpFunctionCall: case Op::OpReturnValue: case Op::OpPhi: case Op::OpSelect: case Op::OpUndef:
    case Op::OpFConvert: case Op::OpConvertFToS: case Op::OpConvertFToU: case Op::OpConvertSToF:
    case Op::OpConvertUToF: case Op::OpBitcast:
    case Op::OpCompositeConstruct: case Op::OpCompositeExtract: case Op::OpCompositeInsert:
    case Op::OpVectorShuffle: case Op::OpVectorExtractDynamic: case Op::OpVectorInsertDynamic:
    case Op::OpCopyObject: case Op::OpCopyLogical:
      return;
    case Op::OpDot:
      if (type(scalar_of(in.result_type)).fkind == TypeInfo::FloatKind::BFloat16) return;
      break;
    default:
      break;
  }
  fail("bfloat16 / float8 values used by an instruction their extensions do not allow", &in);
}

Id Lowerer::type_of(Id value) const {
  if (auto it = F.value_types.find(value); it != F.value_types.end()) return it->second;
  if (const Instruction* g = m.global(value)) return g->result_type;
  fail("id " + std::to_string(value) + " is not a value");
}

uint32_t Lowerer::components(Id t) const {
  const TypeInfo& ti = type(t);
  if (is_scalar(t)) return 1;
  if (ti.op == uint16_t(Op::OpTypeVector)) return ti.count;
  return 0;
}

void Lowerer::check_types(const Instruction& in) {
  const auto& o = in.operands;
  auto need = [&](bool ok, const char* what) {
    if (!ok) fail(std::string("ill-typed operands: ") + what, &in);
  };
  auto kind = [&](Id t) { return type(scalar_of(t)).op; };
  auto width = [&](Id t) { return type(scalar_of(t)).width; };
  auto numeric = [&](Id t, uint16_t k) { return components(t) > 0 && kind(t) == k; };
  auto same_shape_int = [&](Id a, Id b) {
    return numeric(a, uint16_t(Op::OpTypeInt)) && numeric(b, uint16_t(Op::OpTypeInt)) &&
           components(a) == components(b) && width(a) == width(b);
  };
  auto operands_exist = [&](size_t n) { need(o.size() >= n, "too few operands"); };
  const Id rt = in.result_type;
  if (check_matrix_types(in) || check_coopvec_types(in)) return;
  check_special_float_use(in);
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpIAdd: case Op::OpISub: case Op::OpIMul: case Op::OpUDiv: case Op::OpSDiv:
    case Op::OpUMod: case Op::OpSRem: case Op::OpSMod: case Op::OpBitwiseAnd:
    case Op::OpBitwiseOr: case Op::OpBitwiseXor:
      operands_exist(2);
      need(same_shape_int(rt, type_of(o[0])) && same_shape_int(rt, type_of(o[1])), "integer operation");
      return;
    case Op::OpShiftLeftLogical: case Op::OpShiftRightLogical: case Op::OpShiftRightArithmetic:
      operands_exist(2);
      need(same_shape_int(rt, type_of(o[0])) && numeric(type_of(o[1]), uint16_t(Op::OpTypeInt)) &&
               components(type_of(o[1])) == components(rt), "shift");
      return;
    case Op::OpSNegate: case Op::OpNot: case Op::OpBitReverse:
      operands_exist(1);
      need(same_shape_int(rt, type_of(o[0])), "integer operation");
      return;
    case Op::OpBitCount:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeInt)) && numeric(type_of(o[0]), uint16_t(Op::OpTypeInt)) &&
               components(rt) == components(type_of(o[0])), "bit count");
      return;
    case Op::OpBitFieldInsert:
      operands_exist(4);
      need(same_shape_int(rt, type_of(o[0])) && same_shape_int(rt, type_of(o[1])) &&
               numeric(type_of(o[2]), uint16_t(Op::OpTypeInt)) && components(type_of(o[2])) == 1 &&
               numeric(type_of(o[3]), uint16_t(Op::OpTypeInt)) && components(type_of(o[3])) == 1,
           "bit field insert");
      return;
    case Op::OpBitFieldSExtract: case Op::OpBitFieldUExtract:
      operands_exist(3);
      need(same_shape_int(rt, type_of(o[0])) && numeric(type_of(o[1]), uint16_t(Op::OpTypeInt)) &&
               components(type_of(o[1])) == 1 && numeric(type_of(o[2]), uint16_t(Op::OpTypeInt)) &&
               components(type_of(o[2])) == 1, "bit field extract");
      return;
    case Op::OpFAdd: case Op::OpFSub: case Op::OpFMul: case Op::OpFDiv: case Op::OpFRem: case Op::OpFMod:
      operands_exist(2);
      need(numeric(rt, uint16_t(Op::OpTypeFloat)) && type_of(o[0]) == rt && type_of(o[1]) == rt, "float operation");
      return;
    case Op::OpFNegate:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeFloat)) && type_of(o[0]) == rt, "float operation");
      return;
    case Op::OpIEqual: case Op::OpINotEqual: case Op::OpUGreaterThan: case Op::OpSGreaterThan:
    case Op::OpUGreaterThanEqual: case Op::OpSGreaterThanEqual: case Op::OpULessThan:
    case Op::OpSLessThan: case Op::OpULessThanEqual: case Op::OpSLessThanEqual:
      operands_exist(2);
      need(numeric(rt, uint16_t(Op::OpTypeBool)) && same_shape_int(type_of(o[0]), type_of(o[1])) &&
               components(type_of(o[0])) == components(rt), "integer comparison");
      return;
    case Op::OpFOrdEqual: case Op::OpFUnordEqual: case Op::OpFOrdNotEqual: case Op::OpFUnordNotEqual:
    case Op::OpFOrdLessThan: case Op::OpFUnordLessThan: case Op::OpFOrdGreaterThan:
    case Op::OpFUnordGreaterThan: case Op::OpFOrdLessThanEqual: case Op::OpFUnordLessThanEqual:
    case Op::OpFOrdGreaterThanEqual: case Op::OpFUnordGreaterThanEqual:
      operands_exist(2);
      need(numeric(rt, uint16_t(Op::OpTypeBool)) && numeric(type_of(o[0]), uint16_t(Op::OpTypeFloat)) &&
               type_of(o[0]) == type_of(o[1]) && components(type_of(o[0])) == components(rt), "float comparison");
      return;
    case Op::OpIsNan: case Op::OpIsInf:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeBool)) && numeric(type_of(o[0]), uint16_t(Op::OpTypeFloat)) &&
               components(type_of(o[0])) == components(rt), "float classification");
      return;
    case Op::OpLogicalEqual: case Op::OpLogicalNotEqual: case Op::OpLogicalOr: case Op::OpLogicalAnd:
      operands_exist(2);
      need(numeric(rt, uint16_t(Op::OpTypeBool)) && type_of(o[0]) == rt && type_of(o[1]) == rt, "logical operation");
      return;
    case Op::OpLogicalNot:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeBool)) && type_of(o[0]) == rt, "logical operation");
      return;
    case Op::OpAny: case Op::OpAll:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeBool)) && components(rt) == 1 &&
               numeric(type_of(o[0]), uint16_t(Op::OpTypeBool)), "any/all");
      return;
    case Op::OpSelect: {
      operands_exist(3);
      Id c = type_of(o[0]);
      need(numeric(c, uint16_t(Op::OpTypeBool)) && type_of(o[1]) == rt && type_of(o[2]) == rt &&
               (components(c) == 1 || components(c) == components(rt)), "select");
      return;
    }
    case Op::OpConvertFToU: case Op::OpConvertFToS:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeInt)) && numeric(type_of(o[0]), uint16_t(Op::OpTypeFloat)) &&
               components(rt) == components(type_of(o[0])), "float to integer conversion");
      return;
    case Op::OpConvertSToF: case Op::OpConvertUToF:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeFloat)) && numeric(type_of(o[0]), uint16_t(Op::OpTypeInt)) &&
               components(rt) == components(type_of(o[0])), "integer to float conversion");
      return;
    case Op::OpUConvert: case Op::OpSConvert:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeInt)) && numeric(type_of(o[0]), uint16_t(Op::OpTypeInt)) &&
               components(rt) == components(type_of(o[0])), "integer conversion");
      return;
    case Op::OpFConvert: case Op::OpQuantizeToF16:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeFloat)) && numeric(type_of(o[0]), uint16_t(Op::OpTypeFloat)) &&
               components(rt) == components(type_of(o[0])), "float conversion");
      return;
    case Op::OpBitcast: {
      operands_exist(1);
      Id s = type_of(o[0]);
      auto ok = [&](Id t) {
        return (components(t) > 0 && kind(t) != uint16_t(Op::OpTypeBool)) || type(t).op == uint16_t(Op::OpTypePointer);
      };
      need(ok(s) && ok(rt), "bitcast");
      return;
    }
    case Op::OpConvertUToPtr:
      operands_exist(1);
      need(type(rt).op == uint16_t(Op::OpTypePointer) && numeric(type_of(o[0]), uint16_t(Op::OpTypeInt)) &&
               components(type_of(o[0])) == 1 && width(type_of(o[0])) == 64, "integer to pointer");
      return;
    case Op::OpConvertPtrToU:
      operands_exist(1);
      need(numeric(rt, uint16_t(Op::OpTypeInt)) && components(rt) == 1 && width(rt) == 64 &&
               type(type_of(o[0])).op == uint16_t(Op::OpTypePointer), "pointer to integer");
      return;
    case Op::OpCompositeExtract:
    case Op::OpCompositeInsert: {
      bool insert = in.opcode == uint16_t(Op::OpCompositeInsert);
      operands_exist(insert ? 2 : 1);
      Id t = type_of(o[insert ? 1 : 0]);
      for (size_t k = insert ? 2 : 1; k < o.size(); ++k) {
        const TypeInfo& ti = type(t);
        if (ti.op == uint16_t(Op::OpTypeStruct)) {
          need(o[k] < ti.members.size(), "composite index out of range");
          t = ti.members[o[k]];
        } else {
          need((ti.op == uint16_t(Op::OpTypeVector) || ti.op == uint16_t(Op::OpTypeMatrix) ||
                ti.op == uint16_t(Op::OpTypeArray)) && o[k] < ti.count, "composite index out of range");
          t = ti.elem;
        }
      }
      if (insert) need(type_of(o[0]) == t && type_of(o[1]) == rt, "composite insert");
      else need(t == rt, "composite extract result type");
      return;
    }
    case Op::OpCompositeConstruct: {
      const TypeInfo& ti = type(rt);
      if (ti.op == uint16_t(Op::OpTypeVector)) {
        uint32_t total = 0;
        for (Id p : o) {
          Id pt = type_of(p);
          need(components(pt) > 0 && scalar_of(pt) == ti.elem, "vector construct constituent");
          total += components(pt);
        }
        need(total == ti.count, "vector construct size");
      } else if (ti.op == uint16_t(Op::OpTypeStruct)) {
        need(o.size() == ti.members.size(), "struct construct size");
        for (size_t k = 0; k < o.size(); ++k) need(type_of(o[k]) == ti.members[k], "struct construct constituent");
      } else if (ti.op == uint16_t(Op::OpTypeArray) || ti.op == uint16_t(Op::OpTypeMatrix)) {
        need(o.size() == ti.count, "array construct size");
        for (Id p : o) need(type_of(p) == ti.elem, "array construct constituent");
      } else {
        need(false, "construct of a non-composite");
      }
      return;
    }
    case Op::OpCopyObject: case Op::OpCopyLogical:
      operands_exist(1);
      need(rep_type(type_of(o[0])) == rep_type(rt), "copy");
      return;
    case Op::OpVectorExtractDynamic:
      operands_exist(2);
      need(type(type_of(o[0])).op == uint16_t(Op::OpTypeVector) && type(type_of(o[0])).elem == rt &&
               numeric(type_of(o[1]), uint16_t(Op::OpTypeInt)) && components(type_of(o[1])) == 1, "vector extract");
      return;
    case Op::OpVectorInsertDynamic:
      operands_exist(3);
      need(type_of(o[0]) == rt && type(rt).op == uint16_t(Op::OpTypeVector) && type_of(o[1]) == type(rt).elem &&
               numeric(type_of(o[2]), uint16_t(Op::OpTypeInt)) && components(type_of(o[2])) == 1, "vector insert");
      return;
    case Op::OpVectorShuffle: {
      operands_exist(2);
      Id a = type_of(o[0]), b = type_of(o[1]);
      need(type(a).op == uint16_t(Op::OpTypeVector) && type(b).op == uint16_t(Op::OpTypeVector) &&
               type(rt).op == uint16_t(Op::OpTypeVector) && type(a).elem == type(rt).elem &&
               type(b).elem == type(rt).elem && type(rt).count == o.size() - 2, "vector shuffle");
      for (size_t k = 2; k < o.size(); ++k)
        need(o[k] == 0xFFFFFFFFu || o[k] < type(a).count + type(b).count, "vector shuffle index");
      return;
    }
    case Op::OpDot:
      operands_exist(2);
      need(type(type_of(o[0])).op == uint16_t(Op::OpTypeVector) && type_of(o[0]) == type_of(o[1]) &&
               type(type_of(o[0])).elem == rt && kind(rt) == uint16_t(Op::OpTypeFloat), "dot");
      return;
    case Op::OpVectorTimesScalar:
      operands_exist(2);
      need(type(rt).op == uint16_t(Op::OpTypeVector) && type_of(o[0]) == rt && type_of(o[1]) == type(rt).elem &&
               kind(rt) == uint16_t(Op::OpTypeFloat), "vector times scalar");
      return;
    case Op::OpMatrixTimesScalar:
      operands_exist(2);
      need(type(rt).op == uint16_t(Op::OpTypeMatrix) && type_of(o[0]) == rt &&
               type_of(o[1]) == type(type(rt).elem).elem, "matrix times scalar");
      return;
    case Op::OpMatrixTimesVector: case Op::OpVectorTimesMatrix: case Op::OpMatrixTimesMatrix:
    case Op::OpOuterProduct: case Op::OpTranspose: {
      // Shapes: columns of the matrix operand(s) against the vectors involved.
      auto is_fvec = [&](Id t) { return type(t).op == uint16_t(Op::OpTypeVector) && kind(t) == uint16_t(Op::OpTypeFloat); };
      auto is_mat = [&](Id t) { return type(t).op == uint16_t(Op::OpTypeMatrix) && is_fvec(type(t).elem); };
      auto cols = [&](Id t) { return type(t).count; };
      auto rows = [&](Id t) { return type(type(t).elem).count; };
      bool ok = false;
      switch (static_cast<Op>(in.opcode)) {
        case Op::OpMatrixTimesVector:
          operands_exist(2);
          ok = is_mat(type_of(o[0])) && is_fvec(type_of(o[1])) && is_fvec(rt) &&
               cols(type_of(o[0])) == type(type_of(o[1])).count && rows(type_of(o[0])) == type(rt).count;
          break;
        case Op::OpVectorTimesMatrix:
          operands_exist(2);
          ok = is_fvec(type_of(o[0])) && is_mat(type_of(o[1])) && is_fvec(rt) &&
               rows(type_of(o[1])) == type(type_of(o[0])).count && cols(type_of(o[1])) == type(rt).count;
          break;
        case Op::OpMatrixTimesMatrix:
          operands_exist(2);
          ok = is_mat(type_of(o[0])) && is_mat(type_of(o[1])) && is_mat(rt) &&
               cols(type_of(o[0])) == rows(type_of(o[1])) && rows(rt) == rows(type_of(o[0])) &&
               cols(rt) == cols(type_of(o[1]));
          break;
        case Op::OpOuterProduct:
          operands_exist(2);
          ok = is_fvec(type_of(o[0])) && is_fvec(type_of(o[1])) && is_mat(rt) &&
               rows(rt) == type(type_of(o[0])).count && cols(rt) == type(type_of(o[1])).count;
          break;
        default:
          operands_exist(1);
          ok = is_mat(type_of(o[0])) && is_mat(rt) && rows(rt) == cols(type_of(o[0])) && cols(rt) == rows(type_of(o[0]));
      }
      need(ok, "matrix operation shapes");
      return;
    }
    case Op::OpIAddCarry: case Op::OpISubBorrow: case Op::OpUMulExtended: case Op::OpSMulExtended: {
      operands_exist(2);
      const TypeInfo& st = type(rt);
      need(st.op == uint16_t(Op::OpTypeStruct) && st.members.size() == 2 && st.members[0] == st.members[1] &&
               same_shape_int(st.members[0], type_of(o[0])) && same_shape_int(st.members[0], type_of(o[1])),
           "extended arithmetic");
      return;
    }
    case Op::OpSDot: case Op::OpUDot: case Op::OpSUDot:
    case Op::OpSDotAccSat: case Op::OpUDotAccSat: case Op::OpSUDotAccSat: {
      operands_exist(2);
      Id a = type_of(o[0]), b = type_of(o[1]);
      bool packed = components(a) == 1;
      need(numeric(rt, uint16_t(Op::OpTypeInt)) && components(rt) == 1 && numeric(a, uint16_t(Op::OpTypeInt)) &&
               numeric(b, uint16_t(Op::OpTypeInt)) && components(a) == components(b) && width(a) == width(b) &&
               (!packed || width(a) == 32) && width(rt) >= (packed ? 8u : width(a)),
           "integer dot product");
      bool acc = in.opcode == uint16_t(Op::OpSDotAccSat) || in.opcode == uint16_t(Op::OpUDotAccSat) ||
                 in.opcode == uint16_t(Op::OpSUDotAccSat);
      if (acc) {
        operands_exist(3);
        need(type_of(o[2]) == rt, "integer dot product accumulator");
      }
      return;
    }
    case Op::OpVariable:
      operands_exist(1);
      need(type(rt).op == uint16_t(Op::OpTypePointer) && type(rt).storage == o[0] && type(rt).elem != 0,
           "variable whose type is not a pointer to its storage class");
      if (o.size() > 1) need(type_of(o[1]) == type(rt).elem, "variable initializer type");
      return;
    case Op::OpLoad:
      operands_exist(1);
      need(type(type_of(o[0])).op == uint16_t(Op::OpTypePointer) && type(type_of(o[0])).elem == rt, "load");
      return;
    case Op::OpStore:
      operands_exist(2);
      need(type(type_of(o[0])).op == uint16_t(Op::OpTypePointer) && type(type_of(o[0])).elem == type_of(o[1]), "store");
      return;
    case Op::OpCopyMemory:
      operands_exist(2);
      need(type(type_of(o[0])).op == uint16_t(Op::OpTypePointer) && type(type_of(o[1])).op == uint16_t(Op::OpTypePointer) &&
               type(type_of(o[0])).elem == type(type_of(o[1])).elem, "copy memory");
      return;
    case Op::OpAccessChain: case Op::OpInBoundsAccessChain:
    case Op::OpPtrAccessChain: case Op::OpInBoundsPtrAccessChain: {
      operands_exist(1);
      need(type(type_of(o[0])).op == uint16_t(Op::OpTypePointer) && type(rt).op == uint16_t(Op::OpTypePointer),
           "access chain on a non-pointer");
      bool ptr_chain = in.opcode == uint16_t(Op::OpPtrAccessChain) || in.opcode == uint16_t(Op::OpInBoundsPtrAccessChain);
      Id t = type(type_of(o[0])).elem;
      for (size_t k = ptr_chain ? 2 : 1; k < o.size(); ++k) {
        need(numeric(type_of(o[k]), uint16_t(Op::OpTypeInt)) && components(type_of(o[k])) == 1, "access chain index");
        const TypeInfo& ti = type(t);
        if (ti.op == uint16_t(Op::OpTypeStruct)) {
          need(is_constant(o[k]), "struct index must be a constant");
          uint64_t member = constant_u64(o[k]);
          need(member < ti.members.size(), "struct member index out of range");
          t = ti.members[member];
        } else if (is_matrix(t)) {
          // SPV_KHR_cooperative_matrix: an access chain may select one of the
          // invocation's components of a matrix; nothing lies below a component.
          need(k + 1 == o.size(), "access chain continues past a matrix component");
          t = ti.elem;
        } else {
          need(ti.op == uint16_t(Op::OpTypeVector) || ti.op == uint16_t(Op::OpTypeMatrix) ||
                   ti.op == uint16_t(Op::OpTypeArray) || ti.op == uint16_t(Op::OpTypeRuntimeArray),
               "access chain indexes into a non-composite");
          // A constant index past a fixed size can only be a mistake; reject it here
          // rather than address memory outside the object.
          if (ti.count && is_constant(o[k])) need(constant_u64(o[k]) < ti.count, "constant access chain index out of range");
          t = ti.elem;
        }
      }
      need(type(rt).elem == t, "access chain result type");
      return;
    }
    case Op::OpFunctionCall: {
      operands_exist(1);
      auto it = functions.find(o[0]);
      need(it != functions.end(), "call of something that is not a function");
      const Function* callee = nullptr;
      for (const Function& fn : m.functions)
        if (fn.def.result == o[0]) callee = &fn;
      need(callee && callee->params.size() == o.size() - 1 && callee->def.result_type == rt, "call signature");
      for (size_t k = 1; k < o.size(); ++k) need(type_of(o[k]) == callee->params[k - 1].result_type, "call argument");
      return;
    }
    case Op::OpPhi:
      for (size_t k = 0; k + 1 < o.size(); k += 2) need(type_of(o[k]) == rt, "phi operand");
      return;
    case Op::OpReturnValue:
      operands_exist(1);
      need(type_of(o[0]) == F.fn->def.result_type, "return value");
      return;
    case Op::OpBranchConditional:
      operands_exist(3);
      need(numeric(type_of(o[0]), uint16_t(Op::OpTypeBool)) && components(type_of(o[0])) == 1, "branch condition");
      return;
    case Op::OpSwitch:
      operands_exist(2);
      need(numeric(type_of(o[0]), uint16_t(Op::OpTypeInt)) && components(type_of(o[0])) == 1, "switch selector");
      return;
    case Op::OpAtomicLoad: case Op::OpAtomicStore: case Op::OpAtomicExchange: case Op::OpAtomicCompareExchange:
    case Op::OpAtomicIIncrement: case Op::OpAtomicIDecrement: case Op::OpAtomicIAdd: case Op::OpAtomicISub:
    case Op::OpAtomicSMin: case Op::OpAtomicUMin: case Op::OpAtomicSMax: case Op::OpAtomicUMax:
    case Op::OpAtomicAnd: case Op::OpAtomicOr: case Op::OpAtomicXor: case Op::OpAtomicFAddEXT:
    case Op::OpAtomicFMinEXT: case Op::OpAtomicFMaxEXT: {
      operands_exist(3);
      Id pt = type_of(o[0]);
      need(type(pt).op == uint16_t(Op::OpTypePointer), "atomic on a non-pointer");
      Id et = type(pt).elem;
      bool is_float = in.opcode == uint16_t(Op::OpAtomicFAddEXT) || in.opcode == uint16_t(Op::OpAtomicFMinEXT) ||
                      in.opcode == uint16_t(Op::OpAtomicFMaxEXT) ||
                      ((in.opcode == uint16_t(Op::OpAtomicLoad) || in.opcode == uint16_t(Op::OpAtomicStore) ||
                        in.opcode == uint16_t(Op::OpAtomicExchange)) && kind(et) == uint16_t(Op::OpTypeFloat));
      need(components(et) == 1 && (is_float ? kind(et) == uint16_t(Op::OpTypeFloat) : kind(et) == uint16_t(Op::OpTypeInt)) &&
               width(et) >= 16, "atomic operand type");
      if (in.opcode != uint16_t(Op::OpAtomicStore)) need(rt == et, "atomic result type");
      size_t value_at = in.opcode == uint16_t(Op::OpAtomicStore) ? 3 : in.opcode == uint16_t(Op::OpAtomicCompareExchange) ? 5 : 3;
      bool has_value = in.opcode != uint16_t(Op::OpAtomicLoad) && in.opcode != uint16_t(Op::OpAtomicIIncrement) &&
                       in.opcode != uint16_t(Op::OpAtomicIDecrement);
      if (has_value) {
        operands_exist(value_at + 1);
        need(type_of(o[value_at]) == et, "atomic value type");
      }
      if (in.opcode == uint16_t(Op::OpAtomicCompareExchange)) {
        operands_exist(7);
        need(type_of(o[6]) == et, "atomic comparator type");
      }
      return;
    }
    case Op::OpExtInst: {
      operands_exist(2);
      auto it = m.ext_inst_imports.find(o[0]);
      if (it == m.ext_inst_imports.end() || it->second != "GLSL.std.450") return;
      uint32_t e = o[1];
      // Operands of the same shape as the result, except the few that reduce, pack or
      // return structs; those check what they need.
      switch (e) {
        case GLSLstd450Length: case GLSLstd450Distance:
          need(components(rt) == 1 && kind(rt) == uint16_t(Op::OpTypeFloat), "length/distance");
          for (size_t k = 2; k < o.size(); ++k)
            need(numeric(type_of(o[k]), uint16_t(Op::OpTypeFloat)) && scalar_of(type_of(o[k])) == rt, "length/distance operand");
          return;
        case GLSLstd450Cross:
          need(type(rt).op == uint16_t(Op::OpTypeVector) && type(rt).count == 3 && o.size() == 4 &&
                   type_of(o[2]) == rt && type_of(o[3]) == rt, "cross");
          return;
        case GLSLstd450FrexpStruct: case GLSLstd450ModfStruct: {
          need(o.size() == 3 && type(rt).op == uint16_t(Op::OpTypeStruct) && type(rt).members.size() == 2 &&
                   type(rt).members[0] == type_of(o[2]) && components(type(rt).members[1]) == components(type_of(o[2])) &&
                   numeric(type_of(o[2]), uint16_t(Op::OpTypeFloat)), "frexp/modf struct");
          if (e == GLSLstd450ModfStruct) need(type(rt).members[1] == type_of(o[2]), "modf struct");
          else need(numeric(type(rt).members[1], uint16_t(Op::OpTypeInt)), "frexp struct");
          return;
        }
        case GLSLstd450Ldexp:
          need(o.size() == 4 && type_of(o[2]) == rt && numeric(rt, uint16_t(Op::OpTypeFloat)) &&
                   numeric(type_of(o[3]), uint16_t(Op::OpTypeInt)) && components(type_of(o[3])) == components(rt), "ldexp");
          return;
        case GLSLstd450PackHalf2x16: case GLSLstd450PackUnorm2x16: case GLSLstd450PackSnorm2x16:
        case GLSLstd450PackUnorm4x8: case GLSLstd450PackSnorm4x8: {
          uint32_t n = (e == GLSLstd450PackUnorm4x8 || e == GLSLstd450PackSnorm4x8) ? 4 : 2;
          need(o.size() == 3 && numeric(rt, uint16_t(Op::OpTypeInt)) && components(rt) == 1 && width(rt) == 32 &&
                   type(type_of(o[2])).op == uint16_t(Op::OpTypeVector) && type(type_of(o[2])).count == n &&
                   kind(type_of(o[2])) == uint16_t(Op::OpTypeFloat) && width(type_of(o[2])) == 32, "pack");
          return;
        }
        case GLSLstd450UnpackHalf2x16: case GLSLstd450UnpackUnorm2x16: case GLSLstd450UnpackSnorm2x16:
        case GLSLstd450UnpackUnorm4x8: case GLSLstd450UnpackSnorm4x8: {
          uint32_t n = (e == GLSLstd450UnpackUnorm4x8 || e == GLSLstd450UnpackSnorm4x8) ? 4 : 2;
          need(o.size() == 3 && numeric(type_of(o[2]), uint16_t(Op::OpTypeInt)) && components(type_of(o[2])) == 1 &&
                   width(type_of(o[2])) == 32 && type(rt).op == uint16_t(Op::OpTypeVector) && type(rt).count == n &&
                   kind(rt) == uint16_t(Op::OpTypeFloat) && width(rt) == 32, "unpack");
          return;
        }
        case GLSLstd450Reflect:
          need(o.size() == 4 && type_of(o[2]) == rt && type_of(o[3]) == rt && numeric(rt, uint16_t(Op::OpTypeFloat)), "reflect");
          return;
        case GLSLstd450FaceForward:
          need(o.size() == 5 && type_of(o[2]) == rt && type_of(o[3]) == rt && type_of(o[4]) == rt &&
                   numeric(rt, uint16_t(Op::OpTypeFloat)), "faceforward");
          return;
        case GLSLstd450FindILsb: case GLSLstd450FindSMsb: case GLSLstd450FindUMsb:
          need(o.size() == 3 && same_shape_int(rt, type_of(o[2])), "find bit");
          return;
        default:
          need(components(rt) > 0 && kind(rt) != uint16_t(Op::OpTypeBool), "extended instruction result");
          for (size_t k = 2; k < o.size(); ++k) need(type_of(o[k]) == rt, "extended instruction operand");
          return;
      }
    }
    default:
      break;
  }
  // Subgroup operations: (scope, [group operation], value, ...).
  if (in.opcode >= uint16_t(Op::OpGroupNonUniformElect) && in.opcode <= uint16_t(Op::OpGroupNonUniformQuadSwap)) {
    operands_exist(1);
    need(is_constant(o[0]), "subgroup scope must be a constant");
    auto op = static_cast<Op>(in.opcode);
    auto uvec4 = [&](Id t) {
      return type(t).op == uint16_t(Op::OpTypeVector) && type(t).count == 4 && kind(t) == uint16_t(Op::OpTypeInt) && width(t) == 32;
    };
    auto scalar_int = [&](Id t) { return numeric(t, uint16_t(Op::OpTypeInt)) && components(t) == 1; };
    switch (op) {
      case Op::OpGroupNonUniformElect:
        need(numeric(rt, uint16_t(Op::OpTypeBool)) && components(rt) == 1, "elect");
        return;
      case Op::OpGroupNonUniformAll: case Op::OpGroupNonUniformAny:
        operands_exist(2);
        need(numeric(rt, uint16_t(Op::OpTypeBool)) && type_of(o[1]) == rt && components(rt) == 1, "vote");
        return;
      case Op::OpGroupNonUniformAllEqual:
        operands_exist(2);
        need(numeric(rt, uint16_t(Op::OpTypeBool)) && components(type_of(o[1])) > 0, "all equal");
        return;
      case Op::OpGroupNonUniformBroadcast: case Op::OpGroupNonUniformShuffle:
      case Op::OpGroupNonUniformShuffleXor: case Op::OpGroupNonUniformShuffleUp:
      case Op::OpGroupNonUniformShuffleDown:
        operands_exist(3);
        need(type_of(o[1]) == rt && components(rt) > 0 && scalar_int(type_of(o[2])), "broadcast/shuffle");
        return;
      case Op::OpGroupNonUniformBroadcastFirst:
        operands_exist(2);
        need(type_of(o[1]) == rt && components(rt) > 0, "broadcast first");
        return;
      case Op::OpGroupNonUniformBallot:
        operands_exist(2);
        need(uvec4(rt) && numeric(type_of(o[1]), uint16_t(Op::OpTypeBool)) && components(type_of(o[1])) == 1, "ballot");
        return;
      case Op::OpGroupNonUniformInverseBallot:
        operands_exist(2);
        need(numeric(rt, uint16_t(Op::OpTypeBool)) && components(rt) == 1 && uvec4(type_of(o[1])), "inverse ballot");
        return;
      case Op::OpGroupNonUniformBallotBitExtract:
        operands_exist(3);
        need(numeric(rt, uint16_t(Op::OpTypeBool)) && uvec4(type_of(o[1])) && scalar_int(type_of(o[2])), "ballot bit extract");
        return;
      case Op::OpGroupNonUniformBallotBitCount:
        operands_exist(3);
        need(scalar_int(rt) && uvec4(type_of(o[2])), "ballot bit count");
        return;
      case Op::OpGroupNonUniformBallotFindLSB: case Op::OpGroupNonUniformBallotFindMSB:
        operands_exist(2);
        need(scalar_int(rt) && uvec4(type_of(o[1])), "ballot find");
        return;
      default:
        // Arithmetic: (scope, operation, value[, cluster size]) with value of the result type.
        operands_exist(3);
        need(type_of(o[2]) == rt && components(rt) > 0, "subgroup arithmetic operand");
        if (o[1] == uint32_t(spv::GroupOperation::ClusteredReduce)) {
          operands_exist(4);
          need(is_constant(o[3]) && scalar_int(type_of(o[3])), "cluster size");
        }
        return;
    }
  }
}

}  // namespace coopvk::jit
