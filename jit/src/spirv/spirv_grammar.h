// The SPIR-V grammar as tables: generated at build time from SPIRV-Headers'
// spirv.core.grammar.json by jit/gen/gen_spirv_tables.py (spirv_grammar_tables.cpp in
// the build tree), looked up by spirv_grammar.cpp. Internal to jit/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace coopvk::jit::grammar {

enum class OperandClass : uint8_t {
  IdResultType,
  IdResult,
  IdRef,  // also IdMemorySemantics, IdScope
  LiteralInteger,  // one word (LiteralInteger, LiteralFloat)
  LiteralString,
  LiteralContextDependentNumber,  // width from a type (OpConstant, OpSwitch)
  LiteralExtInstInteger,
  LiteralSpecConstantOpInteger,
  Pair,  // two operands: kinds pair_first, pair_second
  ValueEnum,
  BitEnum,
};

enum class Quantifier : uint8_t { One, Optional, Variadic };

struct OperandRef {
  uint16_t kind;  // index into kOperandKinds
  Quantifier quantifier;
};

struct OperandKind {
  const char* name;
  OperandClass cls;
  uint16_t first_enumerant;  // enums: slice of kEnumerants, sorted by value
  uint16_t enumerant_count;
  uint16_t pair_first, pair_second;
};

struct Enumerant {
  uint32_t value;
  const char* name;
  uint16_t first_param;  // slice of kOperandRefs
  uint16_t param_count;
};

struct OpcodeInfo {
  uint32_t opcode;
  const char* name;
  uint16_t klass;  // index into kInstructionClasses ("Type-Declaration", ...)
  bool has_result_type;
  bool has_result;
  uint16_t first_operand;  // slice of kOperandRefs: operands after result type / id
  uint16_t operand_count;
};

struct ExtInstInfo {
  uint32_t number;
  const char* name;
  uint32_t operand_count;  // all IdRef
};

extern const char* const kInstructionClasses[];
extern const size_t kInstructionClassCount;
extern const OperandRef kOperandRefs[];
extern const OperandKind kOperandKinds[];
extern const size_t kOperandKindCount;
extern const Enumerant kEnumerants[];
extern const size_t kEnumerantCount;
extern const OpcodeInfo kOpcodes[];
extern const size_t kOpcodeCount;
extern const ExtInstInfo kGlslStd450[];
extern const size_t kGlslStd450Count;

const OpcodeInfo* find_opcode(uint32_t opcode);
// Index of the operand kind named `name` ("Capability"), or -1.
int find_kind(const char* name);
const Enumerant* find_enumerant(int kind, uint32_t value);
const ExtInstInfo* find_glsl_std_450(uint32_t number);
// The grammar class of an opcode ("Type-Declaration", "Constant-Creation", ...).
bool opcode_in_class(const OpcodeInfo& info, const char* klass);

}  // namespace coopvk::jit::grammar
