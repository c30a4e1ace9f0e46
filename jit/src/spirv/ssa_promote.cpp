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
        c.ok = c.type != 0;
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
    if (promoted) rebuild_defs(m_);
    return promoted;
  }

 private:
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
        c.ok = c.type != 0;
        vars[in.result] = c;
      }
    if (vars.empty()) return 0;
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
};

}  // namespace

uint32_t promote_variables_to_ssa(Module& m, Id entry_function) { return Promoter(m).run(entry_function); }

}  // namespace coopvk::jit
