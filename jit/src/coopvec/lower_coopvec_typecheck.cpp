// Operand checks of the instructions that take cooperative vectors as composites or
// element-wise (SPV_NV_cooperative_vector, "2.2 Terms", "3.42.11", "3.42.13", "3.42.14").
// The component types are checked afterwards by the scalar rules of check_types, which
// the component view (lower_coopvec.cpp) applies to the instruction on one component;
// the cooperative-vector instructions themselves check their operands where lowered.
#include <spirv/unified1/GLSL.std.450.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;

// The GLSL.std.450 instructions the extension allows on cooperative vectors.
bool glsl_allowed(uint32_t number) {
  switch (static_cast<GLSLstd450>(number)) {
    case GLSLstd450FMin: case GLSLstd450UMin: case GLSLstd450SMin: case GLSLstd450NMin:
    case GLSLstd450FMax: case GLSLstd450UMax: case GLSLstd450SMax: case GLSLstd450NMax:
    case GLSLstd450FClamp: case GLSLstd450UClamp: case GLSLstd450SClamp: case GLSLstd450NClamp:
    case GLSLstd450Step: case GLSLstd450Exp: case GLSLstd450Log: case GLSLstd450Tanh:
    case GLSLstd450Atan: case GLSLstd450Fma:
      return true;
    default:
      return false;
  }
}
}  // namespace

bool Lowerer::check_coopvec_types(const Instruction& in) {
  const auto& o = in.operands;
  const Id rt = in.result_type;
  auto value_type = [&](Id id) { return value_type_of(id); };
  if ((in.opcode == uint16_t(Op::OpAccessChain) || in.opcode == uint16_t(Op::OpInBoundsAccessChain)) && !o.empty()) {
    // Into a variable holding cooperative vectors: checked where it is lowered.
    Id pt = value_type(o[0]);
    if (pt && type(pt).op == uint16_t(Op::OpTypePointer) && holds_coopvec(type(pt).elem)) return true;
  }
  bool any = rt && holds_coopvec(rt);
  for (uint16_t k : in.id_operands)
    if (Id t = value_type(o[k]); t && holds_coopvec(t)) any = true;
  if (!any) return false;
  auto need = [&](bool ok, const char* what) {
    if (!ok) fail(std::string("ill-typed cooperative vector operands: ") + what, &in);
  };
  auto count = [&](Id t) { return is_coopvec(t) ? type(t).count : 0u; };
  auto component = [&](Id t) { return type(t).elem; };
  const bool aggregate = rt && holds_coopvec(rt) && !is_coopvec(rt);
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpCompositeConstruct:
      if (aggregate) {
        // An array or struct holding cooperative vectors: one constituent per element or member.
        const TypeInfo& t = type(rt);
        const bool array = t.op == uint16_t(Op::OpTypeArray);
        need(o.size() == (array ? t.count : t.members.size()), "one constituent per element or member");
        for (size_t k = 0; k < o.size(); ++k)
          need(value_type(o[k]) == (array ? t.elem : t.members[k]), "constituents must have the element or member types");
        return true;
      }
      need(is_coopvec(rt) && o.size() == count(rt), "a cooperative vector is constructed from one scalar per component");
      for (Id c : o) need(value_type(c) == component(rt), "constituents must have the component type");
      return true;
    case Op::OpCompositeConstructReplicateEXT:
      need(is_coopvec(rt) && o.size() == 1 && value_type(o[0]) == component(rt), "replicate one value of the component type");
      return true;
    case Op::OpCompositeExtract:
      if (!is_coopvec(value_type(o.at(0)))) return true;  // from an aggregate: the path is checked where lowered
      need(o.size() == 2 && is_coopvec(value_type(o[0])) && o[1] < count(value_type(o[0])) &&
               rt == component(value_type(o[0])),
           "extract one component by an index below the component count");
      return true;
    case Op::OpCompositeInsert:
      if (aggregate) return true;  // the path is checked where lowered
      need(o.size() == 3 && is_coopvec(rt) && value_type(o[1]) == rt && value_type(o[0]) == component(rt) &&
               o[2] < count(rt),
           "insert one component by an index below the component count");
      return true;
    case Op::OpVectorExtractDynamic:
      need(o.size() == 2 && is_coopvec(value_type(o[0])) && rt == component(value_type(o[0])) &&
               type(value_type(o[1])).op == uint16_t(Op::OpTypeInt) && components(value_type(o[1])) == 1,
           "dynamic extract of a component by a scalar integer index");
      return true;
    case Op::OpVectorInsertDynamic:
      need(o.size() == 3 && is_coopvec(rt) && value_type(o[0]) == rt && value_type(o[1]) == component(rt) &&
               type(value_type(o[2])).op == uint16_t(Op::OpTypeInt) && components(value_type(o[2])) == 1,
           "dynamic insert of a component by a scalar integer index");
      return true;
    case Op::OpCopyObject: case Op::OpCopyLogical:
      need(o.size() == 1 && value_type(o[0]) == rt, "a copy has its operand's type");
      return true;
    case Op::OpPhi:
      for (size_t k = 0; k < o.size(); k += 2) need(value_type(o[k]) == rt, "phi operands must have the result's type");
      return true;
    case Op::OpSelect:
      need(o.size() == 3 && is_coopvec(rt) && value_type(o[1]) == rt && value_type(o[2]) == rt &&
               type(value_type(o[0])).op == uint16_t(Op::OpTypeBool) && components(value_type(o[0])) == 1,
           "select between two cooperative vectors of the result's type on a scalar condition");
      return true;
    case Op::OpVectorTimesScalar:
      need(o.size() == 2 && is_coopvec(rt) && value_type(o[0]) == rt && value_type(o[1]) == component(rt),
           "vector times a scalar of its component type");
      return true;
    case Op::OpExtInst: {
      auto set = m.ext_inst_imports.find(o.at(0));
      need(set != m.ext_inst_imports.end() && set->second == "GLSL.std.450" && o.size() >= 2 && glsl_allowed(o[1]),
           "only FMin, UMin, SMin, NMin, FMax, UMax, SMax, NMax, FClamp, UClamp, SClamp, NClamp, Step, Exp, Log, Tanh, "
           "Atan and Fma of GLSL.std.450 take cooperative vectors");
      need(is_coopvec(rt), "the result must be a cooperative vector");
      for (size_t k = 2; k < o.size(); ++k) need(value_type(o[k]) == rt, "every operand must have the result's type");
      return true;
    }
    case Op::OpSNegate: case Op::OpFNegate: case Op::OpIAdd: case Op::OpFAdd: case Op::OpISub: case Op::OpFSub:
    case Op::OpFMul: case Op::OpIMul: case Op::OpFDiv: case Op::OpSDiv: case Op::OpUDiv:
    case Op::OpBitwiseOr: case Op::OpBitwiseXor: case Op::OpBitwiseAnd: case Op::OpNot:
      need(is_coopvec(rt), "the result must be a cooperative vector");
      for (Id v : o) need(value_type(v) == rt, "operands must have the result's type");
      return true;
    case Op::OpShiftRightLogical: case Op::OpShiftRightArithmetic: case Op::OpShiftLeftLogical:
      need(is_coopvec(rt) && o.size() == 2 && value_type(o[0]) == rt && count(value_type(o[1])) == count(rt),
           "shift of a cooperative vector by one of the same component count");
      return true;
    case Op::OpConvertFToU: case Op::OpConvertFToS: case Op::OpConvertSToF: case Op::OpConvertUToF:
    case Op::OpUConvert: case Op::OpSConvert: case Op::OpFConvert: case Op::OpBitcast:
      need(is_coopvec(rt) && o.size() == 1 && count(value_type(o[0])) == count(rt),
           "conversion between cooperative vectors of one component count");
      if (in.opcode == uint16_t(Op::OpBitcast))
        need(type(component(rt)).width == type(component(value_type(o[0]))).width,
             "bitcast between components of one width");
      return true;
    case Op::OpLoad: case Op::OpStore: case Op::OpVariable: case Op::OpFunctionCall: case Op::OpReturnValue:
    case Op::OpUndef: case Op::OpCooperativeVectorLoadNV: case Op::OpCooperativeVectorStoreNV:
    case Op::OpCooperativeVectorMatrixMulNV: case Op::OpCooperativeVectorMatrixMulAddNV:
    case Op::OpCooperativeVectorOuterProductAccumulateNV: case Op::OpCooperativeVectorReduceSumAccumulateNV:
      return true;  // their own lowering checks the rest
    default:
      fail("instruction does not take cooperative vector operands", &in);
  }
}

}  // namespace coopvk::jit
