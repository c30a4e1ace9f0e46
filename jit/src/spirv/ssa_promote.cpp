// promote_variables_to_ssa: see ssa_promote.h.
#include "spirv/ssa_promote.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "spirv/cfg.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

void rebuild_defs(Module& m) {
  if (m.defs.size() < m.bound) m.defs.resize(m.bound);
  for (auto& d : m.defs)
    if (d.kind == Module::Def::Global || d.kind == Module::Def::FunctionDef || d.kind == Module::Def::Param ||
        d.kind == Module::Def::Local || d.kind == Module::Def::Label)
      d = Module::Def{};
  auto set = [&](Id id, Module::Def::Kind k, uint32_t a, uint32_t b = 0, uint32_t c = 0) {
    if (id && id < m.defs.size()) m.defs[id] = Module::Def{k, a, b, c};
  };
  for (uint32_t i = 0; i < m.globals.size(); ++i) set(m.globals[i].result, Module::Def::Global, i);
  for (uint32_t f = 0; f < m.functions.size(); ++f) {
    const Function& fn = m.functions[f];
    set(fn.def.result, Module::Def::FunctionDef, f);
    for (uint32_t p = 0; p < fn.params.size(); ++p) set(fn.params[p].result, Module::Def::Param, f, p);
    for (uint32_t b = 0; b < fn.blocks.size(); ++b) {
      set(fn.blocks[b].label, Module::Def::Label, f, b);
      for (uint32_t k = 0; k < fn.blocks[b].body.size(); ++k)
        set(fn.blocks[b].body[k].result, Module::Def::Local, f, b, k);
    }
  }
}

namespace {

bool is_op(const Instruction& in, spv::Op op) { return in.opcode == uint16_t(op); }

bool is_non_semantic(const Module& m, const Instruction& in) {
  if (!is_op(in, spv::Op::OpExtInst) || in.operands.empty()) return false;
  auto it = m.ext_inst_imports.find(in.operands[0]);
  return it != m.ext_inst_imports.end() && it->second.rfind("NonSemantic.", 0) == 0;
}

struct Candidate {
  Id type = 0;         // pointee type
  Id initial = 0;      // initializer, or 0
  bool ok = true;
  std::vector<uint32_t> store_blocks;
};

class Promoter {
 public:
  Promoter(Module& m) : m_(m) {}

  uint32_t run(Id entry_function) {
    uint32_t promoted = 0;
    // Private variables used only by the entry point's own body are per-invocation
    // values of that one function, initialized at its start.
    std::unordered_map<Id, Candidate> privates;
    for (const Instruction& g : m_.globals)
      if (is_op(g, spv::Op::OpVariable) && g.operands.at(0) == uint32_t(spv::StorageClass::Private)) {
        Candidate c;
        c.type = pointee(g.result_type);
        c.initial = g.operands.size() > 1 ? g.operands[1] : 0;
        c.ok = c.type != 0 && !keeps_variable(c.type);
        privates[g.result] = c;
      }
    for (Function& fn : m_.functions) {
      if (fn.def.result == entry_function) continue;
      for (const Block& b : fn.blocks)
        for (const Instruction& in : b.body)
          for (uint16_t k : in.id_operands)
            if (auto it = privates.find(in.operands[k]); it != privates.end()) it->second.ok = false;
    }
    for (Function& fn : m_.functions)
      promoted += promote_function(fn, fn.def.result == entry_function ? &privates : nullptr);
    if (promoted || changed_) rebuild_defs(m_);
    return promoted;
  }

 private:
  // Cooperative matrices stay in their variables. Their values never decide control flow,
  // and a multiply-add that reads C from a variable and whose result is stored back there
  // runs in place on the variable's memory (lower_coopmat.cpp): promoted, the accumulator
  // of `acc = coopMatMulAdd(a, b, acc)` in a K loop becomes a loop-carried value of many
  // vector registers that every iteration copies out to the kernel and back.
  bool keeps_variable(Id type) const {
    const Instruction* t = m_.global(type);
    return t && (is_op(*t, spv::Op::OpTypeCooperativeMatrixKHR) || is_op(*t, spv::Op::OpTypeCooperativeMatrixNV));
  }

  Id pointee(Id pointer_type) const {
    const Instruction* t = m_.global(pointer_type);
    return t && is_op(*t, spv::Op::OpTypePointer) && t->operands.size() > 1 ? t->operands[1] : 0;
  }

  Id fresh_id() {
    Id id = m_.bound++;
    m_.defs.resize(m_.bound);
    return id;
  }

  Id undef_of(Id type) {
    auto it = undefs_.find(type);
    if (it != undefs_.end()) return it->second;
    Instruction u;
    u.opcode = uint16_t(spv::Op::OpUndef);
    u.result_type = type;
    u.result = fresh_id();
    m_.globals.push_back(u);
    undefs_[type] = u.result;
    return u.result;
  }

  // Scalar components of a small composite type made of scalars and vectors (arrays and
  // structs of them), or 0 when it holds anything else or more than kSmallComponents.
  static constexpr uint32_t kSmallComponents = 16;
  uint32_t small_components(Id type, int depth = 0) const {
    const Instruction* t = m_.global(type);
    if (!t || depth > 4) return 0;
    switch (static_cast<spv::Op>(t->opcode)) {
      case spv::Op::OpTypeBool: case spv::Op::OpTypeInt: case spv::Op::OpTypeFloat:
        return 1;
      case spv::Op::OpTypeVector:
        return t->operands.size() > 1 && small_components(t->operands[0], depth + 1) == 1 ? t->operands[1] : 0;
      case spv::Op::OpTypeArray: {
        uint64_t len = 0;
        if (t->operands.size() < 2 || !constant_index(t->operands[1], &len)) return 0;
        uint64_t n = uint64_t(small_components(t->operands[0], depth + 1)) * len;
        return n <= kSmallComponents ? uint32_t(n) : 0;
      }
      case spv::Op::OpTypeStruct: {
        uint64_t n = 0;
        for (Id member : t->operands) {
          uint32_t c = small_components(member, depth + 1);
          if (!c) return 0;
          n += c;
        }
        return n <= kSmallComponents ? uint32_t(n) : 0;
      }
      default:
        return 0;
    }
  }
  // The type `indices` select inside `type` (OpCompositeExtract's rule), or 0 if one is out
  // of range.
  Id indexed_type(Id type, const std::vector<uint32_t>& indices) const {
    for (uint32_t i : indices) {
      const Instruction* t = m_.global(type);
      if (!t) return 0;
      uint64_t len = 0;
      switch (static_cast<spv::Op>(t->opcode)) {
        case spv::Op::OpTypeVector:
          if (t->operands.size() < 2 || i >= t->operands[1]) return 0;
          type = t->operands[0];
          break;
        case spv::Op::OpTypeArray:
          if (t->operands.size() < 2 || !constant_index(t->operands[1], &len) || i >= len) return 0;
          type = t->operands[0];
          break;
        case spv::Op::OpTypeStruct:
          if (i >= t->operands.size()) return 0;
          type = t->operands[i];
          break;
        default:
          return 0;
      }
    }
    return type;
  }
  bool constant_index(Id id, uint64_t* out) const {
    const Instruction* c = m_.global(id);
    if (!c || !is_op(*c, spv::Op::OpConstant) || c->operands.empty()) return false;
    *out = c->operands[0];
    return true;
  }

  // A small composite variable read and written through access chains with constant
  // indices (`uvec2 tile = ...; tile.y`, a local array indexed by constants) is rewritten to
  // whole-value accesses: a load through the chain becomes a load of the variable and an
  // OpCompositeExtract, a store a load, an OpCompositeInsert and a store, so that the
  // promotion below turns it into SSA values like any other (what spirv-opt's scalar
  // replacement achieves). Other variables are left as they are.
  void split_constant_chains(Function& fn, const std::unordered_map<Id, Candidate>& vars) {
    struct Chain { Id var, type; std::vector<uint32_t> indices; };
    std::unordered_map<Id, Chain> chains;
    std::unordered_map<Id, bool> var_ok;
    for (const auto& [var, c] : vars)
      if (small_components(c.type)) var_ok[var] = true;
    if (var_ok.empty()) return;
    for (const Block& b : fn.blocks)
      for (const Instruction& in : b.body) {
        if (!is_op(in, spv::Op::OpAccessChain) && !is_op(in, spv::Op::OpInBoundsAccessChain)) continue;
        if (in.operands.empty() || !var_ok.count(in.operands[0])) continue;
        Chain ch{in.operands[0], pointee(in.result_type), {}};
        bool constant = ch.type != 0 && in.operands.size() > 1;
        for (size_t k = 1; k < in.operands.size() && constant; ++k) {
          uint64_t v = 0;
          constant = constant_index(in.operands[k], &v) && v < kSmallComponents;
          ch.indices.push_back(uint32_t(v));
        }
        if (constant && indexed_type(vars.at(in.operands[0]).type, ch.indices) != ch.type) constant = false;
        if (constant) chains[in.result] = ch;
        else var_ok[in.operands[0]] = false;
      }
    // Every use of a chain is the pointer of a load or store; every other use of the
    // variable is a whole-value load or store.
    for (const Block& b : fn.blocks)
      for (const Instruction& in : b.body) {
        if (is_non_semantic(m_, in)) continue;
        const bool chain_def = (is_op(in, spv::Op::OpAccessChain) || is_op(in, spv::Op::OpInBoundsAccessChain)) &&
                               chains.count(in.result);
        for (uint16_t k : in.id_operands) {
          Id id = in.operands[k];
          const bool pointer_use = (is_op(in, spv::Op::OpLoad) || is_op(in, spv::Op::OpStore)) && k == 0;
          if (auto it = chains.find(id); it != chains.end() && !pointer_use) var_ok[it->second.var] = false;
          if (auto it = var_ok.find(id); it != var_ok.end() && !pointer_use && !(chain_def && k == 0)) it->second = false;
        }
      }
    for (Block& b : fn.blocks) {
      std::vector<Instruction> body;
      for (Instruction& in : b.body) {
        const bool is_chain = (is_op(in, spv::Op::OpAccessChain) || is_op(in, spv::Op::OpInBoundsAccessChain)) &&
                              chains.count(in.result) && var_ok[chains[in.result].var];
        if (is_chain) {
          changed_ = true;
          continue;
        }
        const Chain* ch = nullptr;
        if ((is_op(in, spv::Op::OpLoad) || is_op(in, spv::Op::OpStore)) && !in.operands.empty())
          if (auto it = chains.find(in.operands[0]); it != chains.end() && var_ok[it->second.var]) ch = &it->second;
        if (!ch) {
          body.push_back(std::move(in));
          continue;
        }
        const Id whole_type = vars.at(ch->var).type;
        Instruction whole;
        whole.opcode = uint16_t(spv::Op::OpLoad);
        whole.result_type = whole_type;
        whole.result = fresh_id();
        whole.operands = {ch->var};
        whole.id_operands = {0};
        whole.offset = in.offset;
        body.push_back(whole);
        if (is_op(in, spv::Op::OpLoad)) {
          Instruction ex;
          ex.opcode = uint16_t(spv::Op::OpCompositeExtract);
          ex.result_type = in.result_type;
          ex.result = in.result;
          ex.operands = {whole.result};
          ex.operands.insert(ex.operands.end(), ch->indices.begin(), ch->indices.end());
          ex.id_operands = {0};
          ex.offset = in.offset;
          body.push_back(ex);
        } else {
          Instruction ins;
          ins.opcode = uint16_t(spv::Op::OpCompositeInsert);
          ins.result_type = whole_type;
          ins.result = fresh_id();
          ins.operands = {in.operands.at(1), whole.result};
          ins.operands.insert(ins.operands.end(), ch->indices.begin(), ch->indices.end());
          ins.id_operands = {0, 1};
          ins.offset = in.offset;
          body.push_back(ins);
          Instruction st;
          st.opcode = uint16_t(spv::Op::OpStore);
          st.operands = {ch->var, ins.result};
          st.id_operands = {0, 1};
          st.offset = in.offset;
          body.push_back(st);
        }
      }
      b.body = std::move(body);
    }
  }

  uint32_t promote_function(Function& fn, const std::unordered_map<Id, Candidate>* privates) {
    FunctionCfg g;
    std::string error;
    if (!build_cfg(fn, &g, &error)) return 0;
    std::unordered_map<Id, Candidate> vars;
    if (privates)
      for (const auto& [id, c] : *privates)
        if (c.ok) vars[id] = c;
    for (const Instruction& in : fn.blocks[0].body)
      if (is_op(in, spv::Op::OpVariable) && in.operands.at(0) == uint32_t(spv::StorageClass::Function)) {
        Candidate c;
        c.type = pointee(in.result_type);
        c.initial = in.operands.size() > 1 ? in.operands[1] : 0;
        c.ok = c.type != 0 && !keeps_variable(c.type);
        vars[in.result] = c;
      }
    if (vars.empty()) return 0;
    split_constant_chains(fn, vars);
    // Whole-value loads and stores through the variable itself are the only uses allowed.
    for (uint32_t bi = 0; bi < fn.blocks.size(); ++bi)
      for (const Instruction& in : fn.blocks[bi].body) {
        if (is_non_semantic(m_, in)) continue;  // debug info names variables; it carries no behaviour
        for (uint16_t k : in.id_operands) {
          auto it = vars.find(in.operands[k]);
          if (it == vars.end()) continue;
          bool load = is_op(in, spv::Op::OpLoad) && k == 0;
          bool store = is_op(in, spv::Op::OpStore) && k == 0;
          if (!load && !store) it->second.ok = false;
          if (store) it->second.store_blocks.push_back(bi);
        }
      }
    for (auto it = vars.begin(); it != vars.end();)
      it = it->second.ok ? std::next(it) : vars.erase(it);
    if (vars.empty()) return 0;

    const size_t n = fn.blocks.size();
    std::vector<std::vector<uint32_t>> frontier(n), children(n);
    for (uint32_t b = 0; b < n; ++b) {
      if (!g.reachable(b)) continue;
      if (b != 0) children[g.idom[b]].push_back(b);
      if (g.pred[b].size() < 2) continue;
      for (uint32_t p : g.pred[b]) {
        if (!g.reachable(p)) continue;
        for (uint32_t r = p; r != g.idom[b]; r = g.idom[r]) {
          if (std::find(frontier[r].begin(), frontier[r].end(), b) == frontier[r].end()) frontier[r].push_back(b);
          if (r == g.idom[r]) break;
        }
      }
    }
    // Phi placement at the iterated dominance frontier of each variable's stores.
    std::vector<std::vector<std::pair<Id, Id>>> phis(n);  // block -> (variable, phi id)
    for (auto& [var, c] : vars) {
      std::vector<uint8_t> has(n, 0), queued(n, 0);
      std::vector<uint32_t> work;
      for (uint32_t b : c.store_blocks)
        if (!queued[b]) queued[b] = 1, work.push_back(b);
      while (!work.empty()) {
        uint32_t b = work.back();
        work.pop_back();
        for (uint32_t f : frontier[b]) {
          if (has[f]) continue;
          has[f] = 1;
          phis[f].push_back({var, fresh_id()});
          if (!queued[f]) queued[f] = 1, work.push_back(f);
        }
      }
    }
    // Renaming over the dominator tree.
    std::unordered_map<Id, std::vector<Id>> stack;
    for (auto& [var, c] : vars) stack[var].push_back(c.initial ? c.initial : undef_of(c.type));
    std::unordered_map<Id, std::vector<std::pair<Id, Id>>> incoming;  // phi -> (value, label)
    std::unordered_map<Id, Id> replace;  // load result -> the value it reads
    std::vector<std::vector<uint8_t>> erase(n);
    for (uint32_t b = 0; b < n; ++b) erase[b].assign(fn.blocks[b].body.size(), 0);
    std::function<void(uint32_t)> rename = [&](uint32_t b) {
      std::vector<Id> pushed;
      for (auto& [var, phi] : phis[b]) {
        stack[var].push_back(phi);
        pushed.push_back(var);
      }
      Block& blk = fn.blocks[b];
      for (uint32_t k = 0; k < blk.body.size(); ++k) {
        Instruction& in = blk.body[k];
        if (is_op(in, spv::Op::OpVariable) && vars.count(in.result)) {
          erase[b][k] = 1;
        } else if (is_op(in, spv::Op::OpLoad) && vars.count(in.operands.at(0))) {
          replace[in.result] = stack[in.operands[0]].back();
          erase[b][k] = 1;
        } else if (is_op(in, spv::Op::OpStore) && vars.count(in.operands.at(0))) {
          stack[in.operands[0]].push_back(in.operands.at(1));
          pushed.push_back(in.operands[0]);
          erase[b][k] = 1;
        }
      }
      for (uint32_t s : g.succ[b])
        for (auto& [var, phi] : phis[s]) incoming[phi].push_back({stack[var].back(), blk.label});
      for (uint32_t c : children[b]) rename(c);
      for (Id var : pushed) stack[var].pop_back();
    };
    rename(0);
    // Blocks no branch reaches never run: their loads read undef and their stores go.
    for (uint32_t b = 0; b < n; ++b) {
      if (g.reachable(b)) continue;
      for (uint32_t k = 0; k < fn.blocks[b].body.size(); ++k) {
        Instruction& in = fn.blocks[b].body[k];
        if (is_op(in, spv::Op::OpLoad) && vars.count(in.operands.at(0))) {
          replace[in.result] = undef_of(vars[in.operands[0]].type);
          erase[b][k] = 1;
        } else if (is_op(in, spv::Op::OpStore) && vars.count(in.operands.at(0))) {
          erase[b][k] = 1;
        }
      }
    }
    for (uint32_t b = 0; b < n; ++b) {
      Block& blk = fn.blocks[b];
      std::vector<Instruction> body;
      for (auto& [var, phi] : phis[b]) {
        Instruction p;
        p.opcode = uint16_t(spv::Op::OpPhi);
        p.result_type = vars[var].type;
        p.result = phi;
        p.offset = blk.body.empty() ? 0 : blk.body.front().offset;
        // One entry per predecessor; an edge from a block no branch reaches carries undef.
        for (uint32_t pr : g.pred[b]) {
          Id val = undef_of(vars[var].type);
          for (auto& [v, label] : incoming[phi])
            if (label == fn.blocks[pr].label) val = v;
          p.id_operands.push_back(uint16_t(p.operands.size()));
          p.operands.push_back(val);
          p.id_operands.push_back(uint16_t(p.operands.size()));
          p.operands.push_back(fn.blocks[pr].label);
        }
        body.push_back(std::move(p));
      }
      for (uint32_t k = 0; k < blk.body.size(); ++k)
        if (!erase[b][k]) body.push_back(std::move(blk.body[k]));
      blk.body = std::move(body);
    }
    // Every use of a load now reads the value itself (a value may be another load's
    // result, so follow the chain; it ends, as each link goes to an earlier definition).
    auto resolve = [&](Id id) {
      for (auto it = replace.find(id); it != replace.end(); it = replace.find(id)) id = it->second;
      return id;
    };
    for (Block& blk : fn.blocks)
      for (Instruction& in : blk.body)
        for (uint16_t k : in.id_operands) in.operands[k] = resolve(in.operands[k]);
    return uint32_t(vars.size());
  }

  Module& m_;
  std::map<Id, Id> undefs_;
  bool changed_ = false;  // access chains rewritten (split_constant_chains)
};

}  // namespace

uint32_t promote_variables_to_ssa(Module& m, Id entry_function) { return Promoter(m).run(entry_function); }

}  // namespace coopvk::jit
