// Lookups over the generated grammar tables (spirv_grammar.h).
#include "spirv/spirv_grammar.h"

#include <algorithm>
#include <cstring>

#include "coopvk/jit/spirv_reader.h"

namespace coopvk::jit::grammar {

const OpcodeInfo* find_opcode(uint32_t opcode) {
  const OpcodeInfo* end = kOpcodes + kOpcodeCount;
  const OpcodeInfo* it = std::lower_bound(
      kOpcodes, end, opcode, [](const OpcodeInfo& a, uint32_t v) { return a.opcode < v; });
  return it != end && it->opcode == opcode ? it : nullptr;
}

int find_kind(const char* name) {
  for (size_t i = 0; i < kOperandKindCount; ++i)
    if (std::strcmp(kOperandKinds[i].name, name) == 0) return static_cast<int>(i);
  return -1;
}

const Enumerant* find_enumerant(int kind, uint32_t value) {
  if (kind < 0 || static_cast<size_t>(kind) >= kOperandKindCount) return nullptr;
  const OperandKind& k = kOperandKinds[kind];
  const Enumerant* begin = kEnumerants + k.first_enumerant;
  const Enumerant* end = begin + k.enumerant_count;
  const Enumerant* it = std::lower_bound(
      begin, end, value, [](const Enumerant& a, uint32_t v) { return a.value < v; });
  return it != end && it->value == value ? it : nullptr;
}

const ExtInstInfo* find_glsl_std_450(uint32_t number) {
  const ExtInstInfo* end = kGlslStd450 + kGlslStd450Count;
  const ExtInstInfo* it = std::lower_bound(
      kGlslStd450, end, number, [](const ExtInstInfo& a, uint32_t v) { return a.number < v; });
  return it != end && it->number == number ? it : nullptr;
}

bool opcode_in_class(const OpcodeInfo& info, const char* klass) {
  return info.klass < kInstructionClassCount &&
         std::strcmp(kInstructionClasses[info.klass], klass) == 0;
}

}  // namespace coopvk::jit::grammar

namespace coopvk::jit {

const char* opcode_name(uint32_t opcode) {
  const grammar::OpcodeInfo* info = grammar::find_opcode(opcode);
  return info ? info->name : nullptr;
}

const char* capability_name(uint32_t capability) {
  static const int kind = grammar::find_kind("Capability");
  const grammar::Enumerant* e = grammar::find_enumerant(kind, capability);
  return e ? e->name : nullptr;
}

const char* glsl_std_450_name(uint32_t number) {
  const grammar::ExtInstInfo* e = grammar::find_glsl_std_450(number);
  return e ? e->name : nullptr;
}

}  // namespace coopvk::jit
