// SPIR-V reader: a valid module (conformance/shaders/reader_sample.spvasm, assembled and
// validated at build time) reads into the right sections; malformed variants made by
// mutating its words are each rejected with a message naming the problem and the
// instruction's offset; and a deterministic mini-fuzz loop of bit flips, word swaps and
// truncations never crashes or reads out of bounds (run it in the ASan build).
#include <catch2/catch_test_macros.hpp>

#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "coopvk/jit/spirv_reader.h"

using namespace coopvk::jit;

namespace {

std::vector<uint32_t> load_sample() {
  std::ifstream f(COOPVK_READER_SAMPLE_SPV, std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() % 4 == 0);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

struct Inst {
  size_t offset;
  uint32_t opcode;
  uint32_t wc;
};

std::vector<Inst> instructions(const std::vector<uint32_t>& w) {
  std::vector<Inst> out;
  for (size_t p = 5; p < w.size();) {
    uint32_t wc = w[p] >> 16;
    REQUIRE(wc > 0);
    out.push_back({p, w[p] & 0xFFFF, wc});
    p += wc;
  }
  return out;
}

// Offset of the nth (0-based) instruction with opcode `op`.
size_t find(const std::vector<uint32_t>& w, spv::Op op, int nth = 0) {
  for (const Inst& i : instructions(w))
    if (i.opcode == static_cast<uint32_t>(op) && nth-- == 0) return i.offset;
  FAIL("opcode " << static_cast<uint32_t>(op) << " not in the sample");
  return 0;
}

// Reads from an allocation of exactly the module's size, so ASan flags any over-read.
ReadResult read_exact(const std::vector<uint32_t>& w, Module* m) {
  std::unique_ptr<uint32_t[]> buf(new uint32_t[w.size() ? w.size() : 1]);
  if (!w.empty()) std::memcpy(buf.get(), w.data(), w.size() * 4);
  return read_spirv(w.empty() ? nullptr : buf.get(), w.size(), m);
}

Id id_named(const Module& m, const std::string& name) {
  for (const auto& [id, n] : m.names)
    if (n == name) return id;
  FAIL("no id named " << name);
  return 0;
}

uint32_t head(spv::Op op, uint32_t wc) { return (wc << 16) | static_cast<uint32_t>(op); }

}  // namespace

TEST_CASE("valid module: sections, functions, blocks and defs", "[spirv_reader]") {
  const std::vector<uint32_t> words = load_sample();
  Module m;
  ReadResult r = read_exact(words, &m);
  INFO(r.error);
  REQUIRE(r.ok);

  CHECK(m.version == 0x00010600);
  CHECK(m.bound == words[3]);
  REQUIRE(m.defs.size() == m.bound);
  CHECK(m.capabilities ==
        std::vector<uint32_t>{static_cast<uint32_t>(spv::Capability::Shader),
                              static_cast<uint32_t>(spv::Capability::Int64)});
  CHECK(m.extensions == std::vector<std::string>{"SPV_KHR_storage_buffer_storage_class"});
  REQUIRE(m.ext_inst_imports.size() == 1);
  CHECK(m.ext_inst_imports.begin()->second == "GLSL.std.450");
  CHECK(m.defs[m.ext_inst_imports.begin()->first].kind == Module::Def::ExtInstImport);
  CHECK(m.addressing_model == static_cast<uint32_t>(spv::AddressingModel::Logical));
  CHECK(m.memory_model == static_cast<uint32_t>(spv::MemoryModel::GLSL450));

  const Id main_id = id_named(m, "main_entry_point");
  const Id helper_id = id_named(m, "helper");
  const Id buf_struct = id_named(m, "Buf");
  REQUIRE(m.entry_points.size() == 1);
  const EntryPoint& ep = m.entry_points[0];
  CHECK(ep.execution_model == static_cast<uint32_t>(spv::ExecutionModel::GLCompute));
  CHECK(ep.name == "main_entry_point");
  CHECK(ep.function == main_id);
  CHECK(ep.interface.size() == 2);

  REQUIRE(m.execution_modes.size() == 1);
  const ExecutionMode& em = m.execution_modes[0];
  CHECK(em.entry_point == main_id);
  CHECK(em.mode == static_cast<uint32_t>(spv::ExecutionMode::LocalSizeId));
  CHECK(em.args_are_ids);
  REQUIRE(em.args.size() == 3);
  const Instruction* x = m.global(em.args[0]);
  REQUIRE(x);
  CHECK(x->opcode == static_cast<uint16_t>(spv::Op::OpConstant));
  CHECK(x->operands == std::vector<uint32_t>{64});

  CHECK(m.member_names.at({buf_struct, 0}) == "data");
  const Decoration* block = nullptr;
  CHECK(m.has_decoration(buf_struct, static_cast<uint32_t>(spv::Decoration::Block), &block));
  bool member_offset = false;
  for (const Decoration& d : m.decorations.at(buf_struct))
    if (d.decoration == static_cast<uint32_t>(spv::Decoration::Offset) && d.member == 0 &&
        d.args == std::vector<uint32_t>{0})
      member_offset = true;
  CHECK(member_offset);
  // The buffer variable: Binding 3, DescriptorSet 0, defined as a global OpVariable.
  Id buf_var = 0;
  for (const auto& [id, decos] : m.decorations)
    for (const Decoration& d : decos)
      if (d.decoration == static_cast<uint32_t>(spv::Decoration::Binding) && d.args[0] == 3)
        buf_var = id;
  REQUIRE(buf_var != 0);
  const Instruction* var = m.global(buf_var);
  REQUIRE(var);
  CHECK(var->opcode == static_cast<uint16_t>(spv::Op::OpVariable));
  CHECK(var->operands[0] == static_cast<uint32_t>(spv::StorageClass::StorageBuffer));

  // Globals: the 64-bit constant keeps both words; the spec-constant op its opcode.
  bool saw_big = false, saw_spec_op = false;
  for (const Instruction& g : m.globals) {
    CHECK(m.defs[g.result].kind == Module::Def::Global);
    CHECK(m.global(g.result) == &g);
    if (g.opcode == static_cast<uint16_t>(spv::Op::OpConstant) && g.operands.size() == 2) {
      CHECK(g.operands[0] == 0x23456789u);
      CHECK(g.operands[1] == 0x1u);
      saw_big = true;
    }
    if (g.opcode == static_cast<uint16_t>(spv::Op::OpSpecConstantOp)) {
      CHECK(g.operands[0] == static_cast<uint32_t>(spv::Op::OpIMul));
      saw_spec_op = true;
    }
  }
  CHECK(saw_big);
  CHECK(saw_spec_op);

  REQUIRE(m.functions.size() == 2);
  const Function& fmain = m.functions[0];
  const Function& fhelper = m.functions[1];
  CHECK(fmain.def.result == main_id);
  CHECK(fhelper.def.result == helper_id);
  CHECK(m.defs[main_id].kind == Module::Def::FunctionDef);
  CHECK(m.defs[helper_id].kind == Module::Def::FunctionDef);
  CHECK(m.defs[helper_id].a == 1);
  CHECK(fmain.params.empty());
  REQUIRE(fhelper.params.size() == 2);
  CHECK(m.defs[fhelper.params[1].result].kind == Module::Def::Param);
  CHECK(m.defs[fhelper.params[1].result].b == 1);
  REQUIRE(fmain.blocks.size() == 9);
  REQUIRE(fhelper.blocks.size() == 1);
  // Loop header: two phis, the merge, then the branch.
  const Block& loop = fmain.blocks[1];
  REQUIRE(loop.body.size() == 4);
  CHECK(loop.body[0].opcode == static_cast<uint16_t>(spv::Op::OpPhi));
  CHECK(loop.body[1].opcode == static_cast<uint16_t>(spv::Op::OpPhi));
  CHECK(loop.body[2].opcode == static_cast<uint16_t>(spv::Op::OpLoopMerge));
  CHECK(loop.body[3].opcode == static_cast<uint16_t>(spv::Op::OpBranch));
  for (uint32_t fi = 0; fi < m.functions.size(); ++fi)
    for (uint32_t bi = 0; bi < m.functions[fi].blocks.size(); ++bi) {
      const Block& b = m.functions[fi].blocks[bi];
      CHECK(m.defs[b.label].kind == Module::Def::Label);
      CHECK(m.defs[b.label].a == fi);
      CHECK(m.defs[b.label].b == bi);
      REQUIRE(!b.body.empty());
      for (uint32_t ii = 0; ii < b.body.size(); ++ii)
        if (b.body[ii].result) {
          CHECK(m.local(b.body[ii].result) == &b.body[ii]);
          CHECK(m.def(b.body[ii].result) == &b.body[ii]);
        }
    }
  // The call reaches forward to the helper; the GLSL.std.450 FMax kept its number.
  bool saw_call = false, saw_fmax = false;
  for (const Block& b : fmain.blocks)
    for (const Instruction& i : b.body) {
      if (i.opcode == static_cast<uint16_t>(spv::Op::OpFunctionCall)) {
        CHECK(i.operands[0] == helper_id);
        saw_call = true;
      }
      if (i.opcode == static_cast<uint16_t>(spv::Op::OpExtInst)) {
        CHECK(glsl_std_450_name(i.operands[1]) == std::string("FMax"));
        saw_fmax = true;
      }
    }
  CHECK(saw_call);
  CHECK(saw_fmax);
  CHECK(fhelper.blocks[0].body.back().opcode == static_cast<uint16_t>(spv::Op::OpReturnValue));

  // Every instruction's offset points at its own opcode word.
  for (const Instruction& g : m.globals) CHECK((words[g.offset] & 0xFFFF) == g.opcode);
  CHECK(opcode_name(static_cast<uint32_t>(spv::Op::OpCooperativeMatrixMulAddKHR)) ==
        std::string("OpCooperativeMatrixMulAddKHR"));
  CHECK(capability_name(static_cast<uint32_t>(spv::Capability::Geometry)) ==
        std::string("Geometry"));
  CHECK(capability_supported(static_cast<uint32_t>(spv::Capability::Shader)));
  CHECK_FALSE(capability_supported(static_cast<uint32_t>(spv::Capability::Geometry)));
}

TEST_CASE("byte-swapped module reads the same", "[spirv_reader]") {
  std::vector<uint32_t> words = load_sample();
  Module a, b;
  REQUIRE(read_exact(words, &a).ok);
  for (uint32_t& w : words) w = __builtin_bswap32(w);
  ReadResult r = read_exact(words, &b);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(b.globals.size() == a.globals.size());
  CHECK(b.functions.size() == a.functions.size());
  CHECK(b.entry_points[0].name == a.entry_points[0].name);
}

TEST_CASE("malformed modules are rejected with the problem and the offset", "[spirv_reader]") {
  const std::vector<uint32_t> base = load_sample();
  using spv::Op;
  struct Case {
    const char* name;
    const char* phrase;
    // Mutates the words; returns the offset the message must name.
    std::function<size_t(std::vector<uint32_t>&)> mutate;
  };
  const std::vector<Case> cases = {
      {"bad magic", "bad magic number 0xdeadbeef",
       [](auto& w) { w[0] = 0xdeadbeef; return size_t{0}; }},
      {"version 2.0", "unsupported SPIR-V version 2.0",
       [](auto& w) { w[1] = 0x00020000; return size_t{1}; }},
      {"version 1.7", "unsupported SPIR-V version 1.7",
       [](auto& w) { w[1] = 0x00010700; return size_t{1}; }},
      {"bound 0", "id bound is 0", [](auto& w) { w[3] = 0; return size_t{3}; }},
      {"bound beyond the universal limit", "exceeds SPIR-V's limit",
       [](auto& w) { w[3] = 0x80000000u; return size_t{3}; }},
      {"truncated header", "truncated header",
       [](auto& w) { w.resize(3); return size_t{0}; }},
      {"bound too small", "is out of range (bound",
       [](auto& w) {
         // The highest id is the helper's OpFMul result (spirv-as numbers ids in order of
         // first appearance), so bound - 1 first shows up there.
         size_t at = find(w, Op::OpFMul);
         REQUIRE(w[at + 2] == w[3] - 1);
         w[3] -= 1;
         return at;
       }},
      {"truncated final instruction", "runs past the end of the module",
       [](auto& w) {
         size_t at = find(w, Op::OpReturnValue);
         w.resize(at + 1);
         return at;
       }},
      {"word count 0", "word count 0",
       [](auto& w) {
         size_t at = find(w, Op::OpMemoryModel);
         w[at] &= 0xFFFF;
         return at;
       }},
      {"word count past the end", "runs past the end of the module",
       [](auto& w) {
         size_t at = w.size() - 1;  // the final OpFunctionEnd
         w[at] = head(Op::OpFunctionEnd, 5);
         return at;
       }},
      {"unknown opcode", "unknown opcode 65520",
       [](auto& w) {
         size_t at = find(w, Op::OpSource);
         w[at] = (w[at] & 0xFFFF0000u) | 0xFFF0;
         return at;
       }},
      {"id out of range", "is out of range (bound",
       [](auto& w) {
         size_t at = find(w, Op::OpIAdd);
         w[at + 2] = w[3] + 5;
         return at;
       }},
      {"duplicate result id", "is defined twice",
       [](auto& w) {
         size_t conv = find(w, Op::OpConvertUToF), at = find(w, Op::OpFMul);
         w[at + 2] = w[conv + 2];
         return at;
       }},
      {"reference to an undefined id", "reference to undefined id",
       [](auto& w) {
         size_t at = find(w, Op::OpFMul);
         w[at + 3] = w[3];  // the old bound: in range once the bound grows, never defined
         w[3] += 1;
         return at;
       }},
      {"forward reference among global types", "forward reference to",
       [](auto& w) {
         size_t at = find(w, Op::OpTypePointer), st = find(w, Op::OpTypeStruct);
         w[at + 3] = w[st + 1];
         return at;
       }},
      {"local of another function", "belongs to another function",
       [](auto& w) {
         size_t phi = find(w, Op::OpPhi), at = find(w, Op::OpFMul);
         w[at + 3] = w[phi + 2];
         return at;
       }},
      {"branch to a non-label", "is not a label",
       [](auto& w) {
         size_t at = find(w, Op::OpBranch), c = find(w, Op::OpConstant);
         w[at + 1] = w[c + 2];
         return at;
       }},
      {"unsupported capability", "capability Geometry is not supported",
       [](auto& w) {
         size_t at = find(w, Op::OpCapability);
         w[at + 1] = static_cast<uint32_t>(spv::Capability::Geometry);
         return at;
       }},
      {"unknown capability", "unknown Capability 77777",
       [](auto& w) {
         size_t at = find(w, Op::OpCapability);
         w[at + 1] = 77777;
         return at;
       }},
      {"unknown decoration", "unknown Decoration 99999",
       [](auto& w) {
         size_t at = find(w, Op::OpDecorate, 2);
         w[at + 2] = 99999;
         return at;
       }},
      {"missing OpFunctionEnd", "is missing OpFunctionEnd",
       [](auto& w) {
         w.pop_back();
         return find(w, Op::OpFunction, 1);
       }},
      {"block without terminator", "does not end with a terminator",
       [](auto& w) {
         size_t ret = find(w, Op::OpReturn);
         w[ret] = head(Op::OpNop, 1);
         return find(w, Op::OpFunctionEnd);
       }},
      {"unterminated string", "not NUL-terminated within the instruction",
       [](auto& w) {
         size_t at = find(w, Op::OpName, 1);  // OpName %Buf "Buf": 3 words
         REQUIRE((w[at] >> 16) == 3);
         w[at + 2] = 0x58667542;  // "BufX"
         return at;
       }},
      {"missing OpMemoryModel", "no OpMemoryModel before this instruction",
       [](auto& w) {
         size_t at = find(w, Op::OpMemoryModel);
         w.erase(w.begin() + at, w.begin() + at + 3);
         return at;
       }},
      {"too many operand words", "operand word(s) more than the grammar allows",
       [](auto& w) {
         size_t at = find(w, Op::OpReturn);
         w[at] = head(Op::OpReturn, 2);
         w.insert(w.begin() + at + 1, 0);
         return at;
       }},
      {"missing operand", "missing operand",
       [](auto& w) {
         size_t at = find(w, Op::OpIAdd);
         w[at] = head(Op::OpIAdd, 4);
         w.erase(w.begin() + at + 4);
         return at;
       }},
      {"header instruction inside a function", "not allowed inside a function",
       [](auto& w) {
         size_t at = find(w, Op::OpReturn);
         w[at] = head(Op::OpCapability, 2);
         w.insert(w.begin() + at + 1, static_cast<uint32_t>(spv::Capability::Shader));
         return at;
       }},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      std::vector<uint32_t> w = base;
      const size_t offset = c.mutate(w);
      Module m;
      m.bound = 12345;  // a failed read must leave an empty module
      ReadResult r = read_exact(w, &m);
      INFO(c.name << ": " << r.error);
      if (std::getenv("COOPVK_PRINT")) std::printf("%-40s %s\n", c.name, r.error.c_str());
      REQUIRE_FALSE(r.ok);
      CHECK(r.error.find(c.phrase) != std::string::npos);
      const std::string at = "offset " + std::to_string(offset);
      CHECK((r.error.rfind(at + ":", 0) == 0 || r.error.rfind(at + " (", 0) == 0));
      CHECK(m.bound == 0);
      CHECK(m.functions.empty());
    }
  }
}

TEST_CASE("mini-fuzz: mutated modules never crash", "[spirv_reader][fuzz]") {
  const std::vector<uint32_t> base = load_sample();
  std::mt19937 rng(0xC00B7u);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  size_t accepted = 0, rejected = 0, bad_messages = 0, bad_modules = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint32_t> w = base;
    const int edits = 1 + static_cast<int>(pick(4));
    for (int e = 0; e < edits && !w.empty(); ++e) {
      size_t i = pick(w.size());
      switch (pick(8)) {
        case 0: w[i] ^= 1u << pick(32); break;                         // bit flip
        case 1: w[i] = static_cast<uint32_t>(pick(base[3] + 4)); break;  // small id / count
        case 2: w[i] = rng(); break;                                    // random word
        case 3: w.resize(i); break;                                     // truncation
        case 4: w.erase(w.begin() + i); break;                          // drop a word
        case 5: w.insert(w.begin() + i, static_cast<uint32_t>(pick(64))); break;
        case 6: w[i] = (w[i] & 0xFFFF) | (static_cast<uint32_t>(pick(12)) << 16); break;
        case 7: std::swap(w[i], w[pick(w.size())]); break;
      }
    }
    Module m;
    ReadResult r = read_exact(w, &m);
    if (!r.ok) {
      ++rejected;
      if (r.error.rfind("offset ", 0) != 0) ++bad_messages;
      continue;
    }
    ++accepted;
    // Whatever was accepted is internally consistent.
    bool consistent = m.defs.size() == m.bound;
    for (Id id = 0; id < m.defs.size() && consistent; ++id) {
      const Module::Def& d = m.defs[id];
      if (d.kind == Module::Def::Global || d.kind == Module::Def::Local ||
          d.kind == Module::Def::Param || d.kind == Module::Def::FunctionDef)
        consistent = m.def(id) && m.def(id)->result == id;
    }
    for (const Function& f : m.functions)
      for (const Block& b : f.blocks) consistent = consistent && !b.body.empty();
    if (!consistent) ++bad_modules;
  }
  INFO("accepted " << accepted << ", rejected " << rejected);
  CHECK(bad_messages == 0);
  CHECK(bad_modules == 0);
  CHECK(rejected > 10000);
  CHECK(accepted > 0);
}
