// In-memory form of a SPIR-V module, produced by the reader (spirv_reader.h) and
// consumed by the lowering. It keeps instructions close to the binary (opcode plus
// operand words) and adds the indexes every consumer needs: id -> defining
// instruction, decorations by id, functions split into basic blocks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace coopvk::jit {

using Id = uint32_t;

struct Instruction {
  uint16_t opcode = 0;
  Id result_type = 0;  // 0 when the opcode has none
  Id result = 0;       // 0 when the opcode has none
  std::vector<uint32_t> operands;  // the words after result type / result id
  // Which of `operands` are <id>s, per the grammar (ascending indexes into operands),
  // so analyses can follow every value an instruction reads without knowing the opcode.
  std::vector<uint16_t> id_operands;
  uint32_t offset = 0;             // word offset in the binary (for messages)
};

// Decodes the NUL-terminated literal string starting at words[index]; *next (if given)
// receives the index of the word after it. The reader has checked the terminator of
// every string operand it stored, so this never runs past `words`.
inline std::string literal_string(const std::vector<uint32_t>& words, size_t index,
                                  size_t* next = nullptr) {
  std::string s;
  size_t i = index;
  for (; i < words.size(); ++i) {
    uint32_t w = words[i];
    bool done = false;
    for (int b = 0; b < 4; ++b) {
      char c = static_cast<char>((w >> (8 * b)) & 0xFF);
      if (c == 0) { done = true; break; }
      s.push_back(c);
    }
    if (done) { ++i; break; }
  }
  if (next) *next = i;
  return s;
}

struct Decoration {
  uint32_t decoration = 0;       // spv::Decoration
  std::vector<uint32_t> args;    // literal operands
  int32_t member = -1;           // >= 0 for OpMemberDecorate
  bool args_are_ids = false;     // OpDecorateId
};

struct EntryPoint {
  uint32_t execution_model = 0;  // spv::ExecutionModel
  Id function = 0;
  std::string name;
  uint32_t offset = 0;           // word offset of the OpEntryPoint
  std::vector<Id> interface;
};

struct ExecutionMode {
  Id entry_point = 0;
  uint32_t mode = 0;             // spv::ExecutionMode
  std::vector<uint32_t> args;    // literals, or ids for OpExecutionModeId
  bool args_are_ids = false;
};

struct Block {
  Id label = 0;
  // Instructions of the block, OpLabel excluded, terminator last; merge instructions
  // (OpSelectionMerge / OpLoopMerge) stay in place just before the terminator.
  // OpLine / OpNoLine / OpNop are dropped by the reader (here and in globals);
  // NonSemantic OpExtInst (debug info, printf) stay.
  std::vector<Instruction> body;
};

struct Function {
  Instruction def;                 // OpFunction
  std::vector<Instruction> params; // OpFunctionParameter
  std::vector<Block> blocks;       // in module order; blocks[0] is the entry
};

struct Module {
  uint32_t version = 0;  // SPIR-V version word, e.g. 0x00010600
  uint32_t bound = 0;
  std::vector<uint32_t> capabilities;
  std::vector<std::string> extensions;
  std::map<Id, std::string> ext_inst_imports;  // id -> set name ("GLSL.std.450")
  uint32_t addressing_model = 0;
  uint32_t memory_model = 0;
  std::vector<EntryPoint> entry_points;
  std::vector<ExecutionMode> execution_modes;
  std::map<Id, std::string> names;
  std::map<std::pair<Id, uint32_t>, std::string> member_names;  // (struct, member)
  std::map<Id, std::string> strings;  // OpString
  std::map<Id, std::vector<Decoration>> decorations;
  // Types, constants, spec constants, undef and module-scope OpVariable, in order;
  // also OpTypeForwardPointer (no result id) and NonSemantic OpExtInst.
  std::vector<Instruction> globals;
  std::vector<Function> functions;

  // Where each result id is defined: index into globals (kind Global), into
  // functions (Function), or a (function, block, instruction) triple.
  struct Def {
    // Param: (function, param index); Local: (function, block, index in body);
    // Label: (function, block). ExtInstImport, String, DecorationGroup: the id is a key
    // of ext_inst_imports / strings / decorations.
    enum Kind : uint8_t {
      None, Global, FunctionDef, Param, Local, Label, ExtInstImport, String, DecorationGroup
    } kind = None;
    uint32_t a = 0, b = 0, c = 0;
  };
  std::vector<Def> defs;  // indexed by id, size == bound

  const Instruction* global(Id id) const {
    return id < defs.size() && defs[id].kind == Def::Global ? &globals[defs[id].a] : nullptr;
  }
  const Instruction* local(Id id) const {
    if (id >= defs.size() || defs[id].kind != Def::Local) return nullptr;
    return &functions[defs[id].a].blocks[defs[id].b].body[defs[id].c];
  }
  // The instruction that defines `id` (global, OpFunction, parameter or local), or null.
  const Instruction* def(Id id) const {
    if (id >= defs.size()) return nullptr;
    const Def& d = defs[id];
    switch (d.kind) {
      case Def::Global: return &globals[d.a];
      case Def::FunctionDef: return &functions[d.a].def;
      case Def::Param: return &functions[d.a].params[d.b];
      case Def::Local: return &functions[d.a].blocks[d.b].body[d.c];
      default: return nullptr;
    }
  }
  bool has_decoration(Id id, uint32_t decoration, const Decoration** out = nullptr) const {
    auto it = decorations.find(id);
    if (it == decorations.end()) return false;
    for (const auto& d : it->second)
      if (d.decoration == decoration && d.member < 0) {
        if (out) *out = &d;
        return true;
      }
    return false;
  }
};

}  // namespace coopvk::jit
