// SPIR-V binary -> Module (spirv_module.h).
//
// One pass over the words parses every instruction against the generated grammar
// (spirv_grammar.h), which tells where its ids are; the instruction is then placed in
// its section of the module (capabilities ... globals, functions -> blocks) and its
// result id recorded in Module::defs. A second pass checks every id use against the
// definitions: defined at all, and defined earlier in module order except where SPIR-V
// allows a forward reference (debug and annotation instructions, entry points and
// execution modes, OpTypeForwardPointer, OpPhi, branch and merge targets, the callee of
// OpFunctionCall and of the cooperative-matrix reduce / per-element instructions, a tensor
// load's DecodeFunc,
// OpExtInstWithForwardRefsKHR). Locals must belong to the function that
// uses them; branch targets and phi parents must be labels of that function.
//
// Reads only words[0, word_count); every failure is one message
// "offset N (OpName): what is wrong", N being the word offset of the instruction.
#include "coopvk/jit/spirv_reader.h"

#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "spirv/spirv_grammar.h"

namespace coopvk::jit {
namespace {

using grammar::OpcodeInfo;
using grammar::OperandClass;
using grammar::Quantifier;
using Op = spv::Op;

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kMagicSwapped = 0x03022307;
constexpr uint32_t kMaxVersion = 0x00010600;
// SPIR-V's universal limit on the id bound; also keeps Module::defs a sane size.
constexpr uint32_t kMaxBound = 0x3FFFFF;

enum class Section : uint8_t {
  Capability,
  Extension,
  ExtInstImport,
  MemoryModel,
  EntryPoint,
  ExecutionMode,
  Debug,
  Annotation,
  Globals,
  Functions,
};

const char* section_name(Section s) {
  switch (s) {
    case Section::Capability: return "capabilities";
    case Section::Extension: return "extensions";
    case Section::ExtInstImport: return "extended instruction imports";
    case Section::MemoryModel: return "the memory model";
    case Section::EntryPoint: return "entry points";
    case Section::ExecutionMode: return "execution modes";
    case Section::Debug: return "debug instructions";
    case Section::Annotation: return "annotations";
    case Section::Globals: return "types, constants and global variables";
    case Section::Functions: return "functions";
  }
  return "?";
}

// How an id operand may refer to its definition.
enum class UseKind : uint8_t {
  Before,    // defined earlier in module order (and in the same function if local)
  Anywhere,  // defined somewhere in the module
  Label,     // an OpLabel of the same function, anywhere in it
  FunctionOrBefore,  // a function defined anywhere, or else as Before
  PhiValue,  // anywhere; in the same function if local
  Function,  // an OpFunction, anywhere
};

struct Use {
  uint32_t seq;  // instruction number
  Id id;
  UseKind kind;
};

struct SeqInfo {
  uint32_t offset;
  uint16_t opcode;
  int32_t function;  // index into Module::functions, -1 outside
};

std::string op_label(uint32_t opcode) {
  const char* n = opcode_name(opcode);
  return n ? std::string(n) : "opcode " + std::to_string(opcode);
}

std::string id_str(Id id) {
  std::string s(1, '%');
  s += std::to_string(id);
  return s;
}

bool is_terminator(uint32_t op) {
  switch (static_cast<Op>(op)) {
    case Op::OpBranch:
    case Op::OpBranchConditional:
    case Op::OpSwitch:
    case Op::OpReturn:
    case Op::OpReturnValue:
    case Op::OpKill:
    case Op::OpUnreachable:
    case Op::OpTerminateInvocation:
    case Op::OpIgnoreIntersectionKHR:
    case Op::OpTerminateRayKHR:
    case Op::OpEmitMeshTasksEXT:
      return true;
    default:
      return false;
  }
}

// The section of a module-level instruction that only lives before the functions, or
// false when `op` is not one of those.
bool header_section(uint32_t op, Section* s) {
  switch (static_cast<Op>(op)) {
    case Op::OpCapability: *s = Section::Capability; return true;
    case Op::OpExtension: *s = Section::Extension; return true;
    case Op::OpExtInstImport: *s = Section::ExtInstImport; return true;
    case Op::OpMemoryModel: *s = Section::MemoryModel; return true;
    case Op::OpEntryPoint: *s = Section::EntryPoint; return true;
    case Op::OpExecutionMode:
    case Op::OpExecutionModeId: *s = Section::ExecutionMode; return true;
    case Op::OpString:
    case Op::OpSourceExtension:
    case Op::OpSource:
    case Op::OpSourceContinued:
    case Op::OpName:
    case Op::OpMemberName:
    case Op::OpModuleProcessed: *s = Section::Debug; return true;
    case Op::OpDecorate:
    case Op::OpMemberDecorate:
    case Op::OpDecorationGroup:
    case Op::OpGroupDecorate:
    case Op::OpGroupMemberDecorate:
    case Op::OpDecorateId:
    case Op::OpDecorateString:
    case Op::OpMemberDecorateString: *s = Section::Annotation; return true;
    default: return false;
  }
}

bool is_global_declaration(const OpcodeInfo& info) {
  return grammar::opcode_in_class(info, "Type-Declaration") ||
         grammar::opcode_in_class(info, "Constant-Creation");
}

class Reader {
 public:
  Reader(const uint32_t* words, size_t count, Module& m) : w_(words), n_(count), m_(m) {}

  bool run();
  std::string error;

 private:
  // --- messages
  bool fail_at(uint32_t offset, int opcode, const std::string& msg) {
    error = "offset " + std::to_string(offset);
    if (opcode >= 0) error += " (" + op_label(static_cast<uint32_t>(opcode)) + ")";
    error += ": " + msg;
    return false;
  }
  bool fail(const std::string& msg) { return fail_at(cur_offset_, cur_opcode_, msg); }

  // --- operand parsing (words of the current instruction: [pos, end_))
  bool parse_operands(uint32_t first_ref, uint32_t count, size_t& pos, int depth);
  bool parse_operand(uint32_t kind, size_t& pos, int depth);
  bool need(size_t pos, size_t n, uint32_t kind) {
    if (end_ - pos >= n) return true;
    return fail(std::string("missing operand (") + grammar::kOperandKinds[kind].name + ")");
  }
  bool check_id(Id id) {
    if (id != 0 && id < m_.bound) return true;
    return fail("id " + id_str(id) + " is out of range (bound " + std::to_string(m_.bound) + ")");
  }
  uint32_t scalar_width(Id type) const;

  // --- placement
  bool place(Instruction&& ins, const OpcodeInfo& info);
  bool place_in_function(Instruction&& ins, const OpcodeInfo& info);
  bool define(Id id, Id type, Module::Def::Kind kind, uint32_t a = 0, uint32_t b = 0,
              uint32_t c = 0);
  void record_uses(const Instruction& ins);
  bool check_uses();
  static uint32_t op(const Instruction& ins, size_t i) {
    return i < ins.operands.size() ? ins.operands[i] : 0;
  }

  const uint32_t* w_;
  size_t n_;
  Module& m_;

  // The instruction being read.
  uint32_t cur_offset_ = 0;
  int cur_opcode_ = -1;
  size_t begin_ = 0, end_ = 0;     // its operand words (after result type / id)
  std::vector<uint32_t> id_slots_;  // indexes into Instruction::operands holding ids
  Id ext_set_ = 0;                  // OpExtInst's set, for LiteralExtInstInteger
  Id result_type_ = 0;
  uint32_t seq_ = 0;

  // Module structure state.
  Section section_ = Section::Capability;
  bool have_memory_model_ = false;
  bool in_function_ = false;
  bool block_open_ = false;

  // Per id: instruction number + 1 of its definition (0: none), owning function
  // (-1: module scope), its result type, and where an OpTypeForwardPointer declared it.
  std::vector<uint32_t> def_seq_;
  std::vector<int32_t> def_fn_;
  std::vector<Id> id_type_;
  std::vector<uint32_t> fwd_seq_;
  std::vector<SeqInfo> seqs_;
  std::vector<Use> uses_;
};

uint32_t Reader::scalar_width(Id type) const {
  const Instruction* t = m_.global(type);
  if (!t || (t->opcode != static_cast<uint16_t>(Op::OpTypeInt) &&
             t->opcode != static_cast<uint16_t>(Op::OpTypeFloat)) ||
      t->operands.empty())
    return 0;
  uint32_t width = t->operands[0];
  return width >= 1 && width <= 64 ? width : 0;
}

bool Reader::parse_operands(uint32_t first_ref, uint32_t count, size_t& pos, int depth) {
  for (uint32_t i = 0; i < count; ++i) {
    const grammar::OperandRef& ref = grammar::kOperandRefs[first_ref + i];
    switch (ref.quantifier) {
      case Quantifier::One:
        if (!parse_operand(ref.kind, pos, depth)) return false;
        break;
      case Quantifier::Optional:
        if (pos < end_ && !parse_operand(ref.kind, pos, depth)) return false;
        break;
      case Quantifier::Variadic:
        while (pos < end_)
          if (!parse_operand(ref.kind, pos, depth)) return false;
        break;
    }
  }
  return true;
}

bool Reader::parse_operand(uint32_t kind, size_t& pos, int depth) {
  if (depth > 8) return fail("operands nest too deeply");
  const grammar::OperandKind& k = grammar::kOperandKinds[kind];
  switch (k.cls) {
    case OperandClass::IdResultType:
    case OperandClass::IdResult:
    case OperandClass::IdRef: {
      if (!need(pos, 1, kind) || !check_id(w_[pos])) return false;
      id_slots_.push_back(static_cast<uint32_t>(pos - begin_));
      ++pos;
      return true;
    }
    case OperandClass::LiteralInteger:
      if (!need(pos, 1, kind)) return false;
      ++pos;
      return true;
    case OperandClass::LiteralString: {
      for (size_t i = pos; i < end_; ++i) {
        uint32_t word = w_[i];
        if ((word & 0xFF) == 0 || (word & 0xFF00) == 0 || (word & 0xFF0000) == 0 ||
            (word & 0xFF000000) == 0) {
          pos = i + 1;
          return true;
        }
      }
      if (pos >= end_) return need(pos, 1, kind);
      return fail("literal string is not NUL-terminated within the instruction");
    }
    case OperandClass::LiteralContextDependentNumber: {
      uint32_t width = 0;
      if (cur_opcode_ == static_cast<int>(Op::OpSwitch)) {
        Id selector = begin_ < end_ ? w_[begin_] : 0;
        Id type = selector < id_type_.size() ? id_type_[selector] : 0;
        width = scalar_width(type);
        if (!width)
          return fail("the selector " + id_str(selector) +
                      " has no integer type defined before the OpSwitch");
      } else {
        width = scalar_width(result_type_);
        if (!width)
          return fail("the result type " + id_str(result_type_) +
                      " is not a scalar int or float type defined earlier");
      }
      size_t words = (width + 31) / 32;
      if (!need(pos, words, kind)) return false;
      pos += words;
      return true;
    }
    case OperandClass::LiteralExtInstInteger: {
      if (!need(pos, 1, kind)) return false;
      uint32_t number = w_[pos++];
      auto it = m_.ext_inst_imports.find(ext_set_);
      if (it == m_.ext_inst_imports.end())
        return fail("the set " + id_str(ext_set_) + " is not an OpExtInstImport");
      const std::string& set = it->second;
      if (set == "GLSL.std.450") {
        const grammar::ExtInstInfo* e = grammar::find_glsl_std_450(number);
        if (!e) return fail("unknown GLSL.std.450 instruction " + std::to_string(number));
        if (end_ - pos != e->operand_count)
          return fail(std::string("GLSL.std.450 ") + e->name + " takes " +
                      std::to_string(e->operand_count) + " operands, not " +
                      std::to_string(end_ - pos));
      } else if (set.rfind("NonSemantic.", 0) != 0) {
        pos = end_;  // a set whose operands the reader does not know: left to the lowering
      }
      return true;  // the grammar's trailing IdRef* reads the operands
    }
    case OperandClass::LiteralSpecConstantOpInteger: {
      if (!need(pos, 1, kind)) return false;
      uint32_t opcode = w_[pos++];
      const OpcodeInfo* info = grammar::find_opcode(opcode);
      if (!info || opcode == static_cast<uint32_t>(Op::OpSpecConstantOp) ||
          !info->has_result_type)
        return fail("OpSpecConstantOp cannot compute " + op_label(opcode));
      return parse_operands(info->first_operand, info->operand_count, pos, depth + 1);
    }
    case OperandClass::Pair:
      return parse_operand(k.pair_first, pos, depth + 1) &&
             parse_operand(k.pair_second, pos, depth + 1);
    case OperandClass::ValueEnum: {
      if (!need(pos, 1, kind)) return false;
      uint32_t value = w_[pos];
      const grammar::Enumerant* e = grammar::find_enumerant(static_cast<int>(kind), value);
      if (!e) return fail(std::string("unknown ") + k.name + " " + std::to_string(value));
      ++pos;
      return parse_operands(e->first_param, e->param_count, pos, depth + 1);
    }
    case OperandClass::BitEnum: {
      if (!need(pos, 1, kind)) return false;
      uint32_t value = w_[pos++];
      for (uint32_t bit = 0; bit < 32; ++bit) {
        uint32_t mask = 1u << bit;
        if (!(value & mask)) continue;
        const grammar::Enumerant* e = grammar::find_enumerant(static_cast<int>(kind), mask);
        if (!e) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "0x%x", mask);
          return fail(std::string("unknown ") + k.name + " bit " + buf);
        }
        if (!parse_operands(e->first_param, e->param_count, pos, depth + 1)) return false;
      }
      return true;
    }
  }
  return fail("internal: unhandled operand class");
}

bool Reader::define(Id id, Id type, Module::Def::Kind kind, uint32_t a, uint32_t b,
                    uint32_t c) {
  if (id == 0) return true;
  if (m_.defs[id].kind != Module::Def::None)
    return fail("id " + id_str(id) + " is defined twice (first at offset " +
                std::to_string(seqs_[def_seq_[id] - 1].offset) + ")");
  m_.defs[id] = Module::Def{kind, a, b, c};
  def_seq_[id] = seq_ + 1;
  def_fn_[id] = in_function_ ? static_cast<int32_t>(m_.functions.size() - 1) : -1;
  id_type_[id] = type;
  return true;
}

bool Reader::place(Instruction&& ins, const OpcodeInfo& info) {
  const Op opc = static_cast<Op>(ins.opcode);
  if (opc == Op::OpNop) return true;
  if (in_function_) return place_in_function(std::move(ins), info);

  Section s;
  if (header_section(ins.opcode, &s)) {
  } else if (opc == Op::OpFunction) {
    s = Section::Functions;
  } else if (opc == Op::OpLine || opc == Op::OpNoLine || opc == Op::OpVariable ||
             opc == Op::OpUndef || opc == Op::OpExtInst ||
             opc == Op::OpExtInstWithForwardRefsKHR || is_global_declaration(info)) {
    s = Section::Globals;
  } else {
    return fail("not allowed outside a function");
  }
  if (s < section_)
    return fail(std::string("out of order: ") + section_name(s) + " come before " +
                section_name(section_));
  if (s > Section::MemoryModel && !have_memory_model_)
    return fail("no OpMemoryModel before this instruction");
  section_ = s;

  using D = Module::Def;
  switch (opc) {
    case Op::OpCapability: {
      uint32_t cap = op(ins, 0);
      if (!capability_supported(cap)) {
        const char* name = capability_name(cap);
        return fail("capability " + (name ? std::string(name) : std::to_string(cap)) +
                    " is not supported");
      }
      m_.capabilities.push_back(cap);
      return true;
    }
    case Op::OpExtension:
      m_.extensions.push_back(literal_string(ins.operands, 0));
      return true;
    case Op::OpExtInstImport:
      m_.ext_inst_imports[ins.result] = literal_string(ins.operands, 0);
      return define(ins.result, 0, D::ExtInstImport);
    case Op::OpMemoryModel:
      if (have_memory_model_) return fail("a second OpMemoryModel");
      have_memory_model_ = true;
      m_.addressing_model = op(ins, 0);
      m_.memory_model = op(ins, 1);
      return true;
    case Op::OpEntryPoint: {
      EntryPoint ep;
      ep.execution_model = op(ins, 0);
      ep.function = op(ins, 1);
      size_t next = 2;
      ep.name = literal_string(ins.operands, 2, &next);
      ep.interface.assign(ins.operands.begin() + std::min(next, ins.operands.size()),
                          ins.operands.end());
      ep.offset = ins.offset;
      m_.entry_points.push_back(std::move(ep));
      return true;
    }
    case Op::OpExecutionMode:
    case Op::OpExecutionModeId: {
      ExecutionMode em;
      em.entry_point = op(ins, 0);
      em.mode = op(ins, 1);
      if (ins.operands.size() > 2) em.args.assign(ins.operands.begin() + 2, ins.operands.end());
      em.args_are_ids = opc == Op::OpExecutionModeId;
      m_.execution_modes.push_back(std::move(em));
      return true;
    }
    case Op::OpString:
      m_.strings[ins.result] = literal_string(ins.operands, 0);
      return define(ins.result, 0, D::String);
    case Op::OpName:
      m_.names[op(ins, 0)] = literal_string(ins.operands, 1);
      return true;
    case Op::OpMemberName:
      m_.member_names[{op(ins, 0), op(ins, 1)}] = literal_string(ins.operands, 2);
      return true;
    case Op::OpSourceExtension:
    case Op::OpSource:
    case Op::OpSourceContinued:
    case Op::OpModuleProcessed:
      return true;
    case Op::OpDecorate:
    case Op::OpDecorateId:
    case Op::OpDecorateString: {
      Decoration d;
      d.decoration = op(ins, 1);
      if (ins.operands.size() > 2) d.args.assign(ins.operands.begin() + 2, ins.operands.end());
      d.args_are_ids = opc == Op::OpDecorateId;
      m_.decorations[op(ins, 0)].push_back(std::move(d));
      return true;
    }
    case Op::OpMemberDecorate:
    case Op::OpMemberDecorateString: {
      if (op(ins, 1) > 0x7FFFFFFF) return fail("member index out of range");
      Decoration d;
      d.member = static_cast<int32_t>(op(ins, 1));
      d.decoration = op(ins, 2);
      if (ins.operands.size() > 3) d.args.assign(ins.operands.begin() + 3, ins.operands.end());
      m_.decorations[op(ins, 0)].push_back(std::move(d));
      return true;
    }
    case Op::OpDecorationGroup:
      return define(ins.result, 0, D::DecorationGroup);
    case Op::OpGroupDecorate:
    case Op::OpGroupMemberDecorate: {
      const Id group = op(ins, 0);
      std::vector<Decoration> from;
      if (auto it = m_.decorations.find(group); it != m_.decorations.end()) from = it->second;
      const bool member = opc == Op::OpGroupMemberDecorate;
      for (size_t i = 1; i < ins.operands.size(); i += member ? 2 : 1) {
        int32_t index = -1;
        if (member) {
          if (i + 1 >= ins.operands.size() || ins.operands[i + 1] > 0x7FFFFFFF)
            return fail("bad member index");
          index = static_cast<int32_t>(ins.operands[i + 1]);
        }
        auto& to = m_.decorations[ins.operands[i]];
        for (const Decoration& d : from)
          if (d.member < 0) {
            to.push_back(d);
            to.back().member = index;
          }
      }
      return true;
    }
    case Op::OpLine:
    case Op::OpNoLine:
      return true;
    case Op::OpFunction: {
      Function f;
      f.def = std::move(ins);
      m_.functions.push_back(std::move(f));
      in_function_ = true;
      block_open_ = false;
      const Instruction& d = m_.functions.back().def;
      seqs_.back().function = static_cast<int32_t>(m_.functions.size() - 1);
      return define(d.result, d.result_type, D::FunctionDef,
                    static_cast<uint32_t>(m_.functions.size() - 1));
    }
    case Op::OpExtInst:
    case Op::OpExtInstWithForwardRefsKHR: {
      auto it = m_.ext_inst_imports.find(op(ins, 0));
      if (it == m_.ext_inst_imports.end() || it->second.rfind("NonSemantic.", 0) != 0)
        return fail("only NonSemantic extended instructions may appear outside a function");
      [[fallthrough]];
    }
    default: {
      // Types, constants, global variables, OpUndef, OpTypeForwardPointer.
      uint32_t index = static_cast<uint32_t>(m_.globals.size());
      Id result = ins.result, type = ins.result_type;
      m_.globals.push_back(std::move(ins));
      return define(result, type, D::Global, index);
    }
  }
}

bool Reader::place_in_function(Instruction&& ins, const OpcodeInfo& info) {
  using D = Module::Def;
  const Op opc = static_cast<Op>(ins.opcode);
  Function& f = m_.functions.back();
  const uint32_t fi = static_cast<uint32_t>(m_.functions.size() - 1);
  Section s;
  if (header_section(ins.opcode, &s) || is_global_declaration(info))
    return fail("not allowed inside a function");
  switch (opc) {
    case Op::OpFunction:
      return fail("OpFunction inside function " + id_str(f.def.result) +
                  " (missing OpFunctionEnd)");
    case Op::OpFunctionParameter: {
      if (!f.blocks.empty()) return fail("OpFunctionParameter after the first block");
      uint32_t index = static_cast<uint32_t>(f.params.size());
      Id result = ins.result, type = ins.result_type;
      f.params.push_back(std::move(ins));
      return define(result, type, D::Param, fi, index);
    }
    case Op::OpLabel: {
      if (block_open_)
        return fail("block " + id_str(f.blocks.back().label) +
                    " does not end with a terminator");
      Block b;
      b.label = ins.result;
      f.blocks.push_back(std::move(b));
      block_open_ = true;
      return define(ins.result, 0, D::Label, fi, static_cast<uint32_t>(f.blocks.size() - 1));
    }
    case Op::OpFunctionEnd:
      if (block_open_)
        return fail("block " + id_str(f.blocks.back().label) +
                    " does not end with a terminator");
      if (f.blocks.empty())
        return fail("function " + id_str(f.def.result) +
                    " has no body (declarations need the Linkage capability)");
      in_function_ = false;
      return true;
    case Op::OpLine:
    case Op::OpNoLine:
      return true;
    default:
      break;
  }
  if (!block_open_)
    return fail(f.blocks.empty() ? "instruction before the function's first OpLabel"
                                 : "instruction after the block's terminator (missing OpLabel)");
  Block& b = f.blocks.back();
  const uint32_t bi = static_cast<uint32_t>(f.blocks.size() - 1);
  const uint32_t index = static_cast<uint32_t>(b.body.size());
  if (is_terminator(ins.opcode)) block_open_ = false;
  Id result = ins.result, type = ins.result_type;
  b.body.push_back(std::move(ins));
  return define(result, type, D::Local, fi, bi, index);
}

void Reader::record_uses(const Instruction& ins) {
  const Op opc = static_cast<Op>(ins.opcode);
  if (ins.result_type) uses_.push_back({seq_, ins.result_type, UseKind::Before});
  Section section;
  const bool header = header_section(ins.opcode, &section);
  for (size_t n = 0; n < id_slots_.size(); ++n) {
    Id id = ins.operands[id_slots_[n]];
    UseKind kind = UseKind::Before;
    if (header) {
      kind = UseKind::Anywhere;
      if ((opc == Op::OpEntryPoint || opc == Op::OpExecutionMode ||
           opc == Op::OpExecutionModeId) && n == 0)
        kind = UseKind::Function;
    } else {
      switch (opc) {
        case Op::OpTypeForwardPointer:
          kind = UseKind::Anywhere;
          if (n == 0 && id < fwd_seq_.size() && !fwd_seq_[id]) fwd_seq_[id] = seq_ + 1;
          break;
        case Op::OpExtInstWithForwardRefsKHR:
          kind = n == 0 ? UseKind::Before : UseKind::Anywhere;
          break;
        case Op::OpPhi:
          kind = n % 2 ? UseKind::Label : UseKind::PhiValue;
          break;
        case Op::OpBranch:
        case Op::OpLoopMerge:
        case Op::OpSelectionMerge:
          kind = UseKind::Label;
          break;
        case Op::OpBranchConditional:
        case Op::OpSwitch:
          kind = n == 0 ? UseKind::Before : UseKind::Label;
          break;
        case Op::OpFunctionCall:
          kind = n == 0 ? UseKind::Function : UseKind::Before;
          break;
        case Op::OpCooperativeMatrixReduceEXT:
        case Op::OpCooperativeMatrixPerElementOpEXT:
          kind = n == 1 ? UseKind::Function : UseKind::Before;  // the callback may come later
          break;
        case Op::OpCooperativeMatrixLoadTensorNV:
          kind = UseKind::FunctionOrBefore;  // its DecodeFunc may come later
          break;
        default:
          break;
      }
    }
    uses_.push_back({seq_, id, kind});
  }
}

bool Reader::check_uses() {
  for (const Use& u : uses_) {
    const SeqInfo& at = seqs_[u.seq];
    auto bad = [&](const std::string& msg) { return fail_at(at.offset, at.opcode, msg); };
    const Module::Def& d = m_.defs[u.id];
    if (d.kind == Module::Def::None) return bad("reference to undefined id " + id_str(u.id));
    const bool other_fn = def_fn_[u.id] >= 0 && def_fn_[u.id] != at.function;
    switch (u.kind) {
      case UseKind::Anywhere:
        break;
      case UseKind::Function:
        if (d.kind != Module::Def::FunctionDef)
          return bad(id_str(u.id) + " is not a function");
        break;
      case UseKind::Label:
        if (d.kind != Module::Def::Label) return bad(id_str(u.id) + " is not a label");
        if (other_fn) return bad("label " + id_str(u.id) + " belongs to another function");
        break;
      case UseKind::PhiValue:
        if (other_fn) return bad(id_str(u.id) + " belongs to another function");
        break;
      case UseKind::FunctionOrBefore:
        if (d.kind == Module::Def::FunctionDef) break;
        [[fallthrough]];
      case UseKind::Before: {
        const bool earlier = def_seq_[u.id] - 1 < u.seq ||
                             (fwd_seq_[u.id] && fwd_seq_[u.id] - 1 < u.seq);
        if (!earlier)
          return bad("forward reference to " + id_str(u.id) + " (defined at offset " +
                     std::to_string(seqs_[def_seq_[u.id] - 1].offset) + ")");
        if (other_fn) return bad(id_str(u.id) + " belongs to another function");
        break;
      }
    }
  }
  return true;
}

bool Reader::run() {
  if (!w_ && n_) return fail_at(0, -1, "null words");
  if (n_ < 5)
    return fail_at(0, -1, "truncated header: " + std::to_string(n_) + " words, need 5");
  if (w_[0] != kMagic) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "bad magic number 0x%08x", w_[0]);
    return fail_at(0, -1, buf);
  }
  const uint32_t version = w_[1];
  const uint32_t major = (version >> 16) & 0xFF, minor = (version >> 8) & 0xFF;
  if ((version & 0xFF0000FF) != 0 || major != 1 || version > kMaxVersion)
    return fail_at(1, -1, "unsupported SPIR-V version " + std::to_string(major) + "." +
                              std::to_string(minor) + " (1.0 to 1.6 are read)");
  const uint32_t bound = w_[3];
  if (bound == 0) return fail_at(3, -1, "id bound is 0");
  if (bound > kMaxBound)
    return fail_at(3, -1, "id bound " + std::to_string(bound) +
                              " exceeds SPIR-V's limit of " + std::to_string(kMaxBound));
  if (w_[4] != 0) return fail_at(4, -1, "reserved header word (schema) is not 0");
  m_.version = version;
  m_.bound = bound;
  m_.defs.assign(bound, Module::Def{});
  def_seq_.assign(bound, 0);
  def_fn_.assign(bound, -1);
  id_type_.assign(bound, 0);
  fwd_seq_.assign(bound, 0);

  for (size_t pos = 5; pos < n_;) {
    const uint32_t head = w_[pos];
    const uint32_t wc = head >> 16, opcode = head & 0xFFFF;
    cur_offset_ = static_cast<uint32_t>(pos);
    const OpcodeInfo* info = grammar::find_opcode(opcode);
    cur_opcode_ = info ? static_cast<int>(opcode) : -1;
    if (wc == 0) return fail(info ? "word count 0" : "word count 0 (opcode " + std::to_string(opcode) + ")");
    if (wc > n_ - pos)
      return fail("instruction runs past the end of the module (word count " +
                  std::to_string(wc) + ", " + std::to_string(n_ - pos) + " words left)");
    if (!info) return fail("unknown opcode " + std::to_string(opcode));
    end_ = pos + wc;

    Instruction ins;
    ins.opcode = static_cast<uint16_t>(opcode);
    ins.offset = cur_offset_;
    size_t p = pos + 1;
    if (info->has_result_type) {
      if (p >= end_) return fail("missing result type");
      if (!check_id(w_[p])) return false;
      ins.result_type = w_[p++];
    }
    if (info->has_result) {
      if (p >= end_) return fail("missing result id");
      if (!check_id(w_[p])) return false;
      ins.result = w_[p++];
    }
    begin_ = p;
    result_type_ = ins.result_type;
    ext_set_ = (opcode == static_cast<uint32_t>(Op::OpExtInst) ||
                opcode == static_cast<uint32_t>(Op::OpExtInstWithForwardRefsKHR)) &&
                       p < end_
                   ? w_[p]
                   : 0;
    id_slots_.clear();
    size_t q = p;
    if (!parse_operands(info->first_operand, info->operand_count, q, 0)) return false;
    if (q != end_)
      return fail(std::to_string(end_ - q) + " operand word(s) more than the grammar allows");
    ins.operands.assign(w_ + p, w_ + end_);
    ins.id_operands.assign(id_slots_.begin(), id_slots_.end());

    seqs_.push_back({cur_offset_, static_cast<uint16_t>(opcode),
                     in_function_ ? static_cast<int32_t>(m_.functions.size() - 1) : -1});
    record_uses(ins);
    if (!place(std::move(ins), *info)) return false;
    ++seq_;
    pos = end_;
  }
  cur_offset_ = static_cast<uint32_t>(n_);
  cur_opcode_ = -1;
  if (in_function_) {
    const Instruction& f = m_.functions.back().def;
    return fail_at(f.offset, f.opcode,
                   "function " + id_str(f.result) + " is missing OpFunctionEnd");
  }
  if (!have_memory_model_) return fail("missing OpMemoryModel");
  return check_uses();
}

}  // namespace

ReadResult read_spirv(const uint32_t* words, size_t word_count, Module* out) {
  ReadResult r;
  std::vector<uint32_t> swapped;
  if (words && word_count > 0 && words[0] == kMagicSwapped) {
    swapped.assign(words, words + word_count);
    for (uint32_t& w : swapped) w = __builtin_bswap32(w);
    words = swapped.data();
  }
  Module m;
  Reader reader(words, word_count, m);
  if (reader.run()) {
    r.ok = true;
    if (out) *out = std::move(m);
  } else {
    r.error = std::move(reader.error);
    if (out) *out = Module{};
  }
  return r;
}

}  // namespace coopvk::jit
