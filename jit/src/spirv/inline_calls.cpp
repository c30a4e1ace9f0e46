// inline_calls: see inline_calls.h.
#include "spirv/inline_calls.h"

#include <optional>
#include <unordered_map>

#include "spirv/cfg.h"
#include "spirv/spirv_enums.h"
#include "spirv/ssa_promote.h"

namespace coopvk::jit {
namespace {

bool is_op(const Instruction& in, spv::Op op) { return in.opcode == uint16_t(op); }
bool is_return(const Instruction& in) { return is_op(in, spv::Op::OpReturn) || is_op(in, spv::Op::OpReturnValue); }

// Cloned instructions allowed over the whole module: far more than any real shader inlines
// (llama.cpp's largest come to a few thousand), small enough that a module calling itself
// cannot exhaust memory.
constexpr size_t kCloneBudget = 1u << 20;

class Inliner {
 public:
  explicit Inliner(Module& m) : m_(m) {}

  uint32_t run() {
    rebuild_defs(m_);
    for (size_t f = 0; f < m_.functions.size(); ++f) inline_into(f);
    if (inlined_) rebuild_defs(m_);
    return inlined_;
  }

 private:
  // Whether calls to functions[f] can be inlined (see the header); computed once, from the
  // function as the reader gave it (calls inside it are inlined where it is cloned to).
  bool inlinable(size_t f) {
    if (auto it = inlinable_.find(f); it != inlinable_.end()) return it->second;
    const Function& fn = m_.functions[f];
    bool ok = !fn.blocks.empty();
    uint32_t returns = 0, return_block = kNoBlock;
    for (uint32_t b = 0; ok && b < fn.blocks.size(); ++b) {
      const auto& body = fn.blocks[b].body;
      if (body.empty()) ok = false;
      else if (is_return(body.back())) ++returns, return_block = b;
    }
    if (ok && returns == 1) {
      FunctionCfg cfg;
      std::string err;
      ok = build_cfg(fn, &cfg, &err) && cfg.reachable(return_block) && cfg.innermost[return_block] < 0;
    } else {
      ok = false;
    }
    inlinable_[f] = ok;
    return ok;
  }

  std::optional<size_t> function_index(Id id) const {
    if (id >= m_.defs.size() || m_.defs[id].kind != Module::Def::FunctionDef) return std::nullopt;
    return m_.defs[id].a;
  }

  Id fresh() {
    Id id = m_.bound++;
    return id;
  }

  void inline_into(size_t f) {
    // Blocks are scanned in order; an inlined body is inserted right after the calling
    // block, so calls inside it are met (and inlined) next.
    for (size_t b = 0; b < m_.functions[f].blocks.size(); ++b) {
      for (size_t k = 0; k < m_.functions[f].blocks[b].body.size(); ++k) {
        const Instruction& in = m_.functions[f].blocks[b].body[k];
        if (!is_op(in, spv::Op::OpFunctionCall) || in.operands.empty()) continue;
        auto callee = function_index(in.operands[0]);
        if (!callee || *callee == f || !inlinable(*callee)) continue;
        if (m_.functions[*callee].params.size() + 1 != in.operands.size()) continue;
        // A call must be followed by at least the block's terminator (the reader keeps
        // malformed blocks for the lowering to report).
        if (k + 1 >= m_.functions[f].blocks[b].body.size()) continue;
        if (!is_block_terminator(m_.functions[f].blocks[b].body.back().opcode)) continue;
        if (splits_structure(f, b)) continue;
        if (cloned_ + count_instructions(*callee) > kCloneBudget) return;
        inline_call(f, b, k, *callee);
        ++inlined_;
        break;  // the rest of this block moved to the continuation block
      }
    }
  }

  // A loop header keeps its OpLoopMerge with the back edge's target, and a continue target
  // is named by its loop's OpLoopMerge; splitting either would move what names them.
  bool splits_structure(size_t f, size_t b) const {
    const Block& blk = m_.functions[f].blocks[b];
    for (const Instruction& in : blk.body)
      if (is_op(in, spv::Op::OpLoopMerge)) return true;
    for (const Block& other : m_.functions[f].blocks)
      for (const Instruction& in : other.body)
        if (is_op(in, spv::Op::OpLoopMerge) && in.operands.size() > 1 && in.operands[1] == blk.label) return true;
    return false;
  }

  size_t count_instructions(size_t f) const {
    size_t n = 0;
    for (const Block& b : m_.functions[f].blocks) n += b.body.size() + 1;
    return n;
  }

  void copy_decorations(Id from, Id to) {
    auto it = m_.decorations.find(from);
    if (it == m_.decorations.end()) return;
    std::vector<Decoration> copy = it->second;  // the map may rehash on insertion
    m_.decorations[to] = std::move(copy);
  }

  void inline_call(size_t f, size_t b, size_t k, size_t callee_index) {
    // Copies: inserting blocks and instructions into the caller invalidates references,
    // and the callee may be the function being cloned into elsewhere later.
    const Function callee = m_.functions[callee_index];
    Instruction call = m_.functions[f].blocks[b].body[k];

    std::unordered_map<Id, Id> rename;
    for (size_t p = 0; p < callee.params.size(); ++p) rename[callee.params[p].result] = call.operands[p + 1];
    for (const Block& cb : callee.blocks) {
      rename[cb.label] = fresh();
      for (const Instruction& in : cb.body)
        if (in.result) rename[in.result] = fresh();
    }
    for (const auto& [from, to] : rename)
      if (m_.defs.size() <= from || m_.defs[from].kind != Module::Def::Param) copy_decorations(from, to);
    auto map_ids = [&](Instruction& in) {
      for (uint16_t i : in.id_operands)
        if (auto it = rename.find(in.operands[i]); it != rename.end()) in.operands[i] = it->second;
      if (in.result) in.result = rename.at(in.result);
    };

    Function& fn = m_.functions[f];
    Block& head = fn.blocks[b];
    Block cont;
    cont.label = fresh();
    cont.body.assign(head.body.begin() + long(k) + 1, head.body.end());
    head.body.resize(k);

    std::vector<Instruction> moved_vars;
    std::vector<Instruction> initial_stores;
    std::vector<Block> body;
    Id result_value = 0;
    for (const Block& cb : callee.blocks) {
      Block nb;
      nb.label = rename.at(cb.label);
      for (const Instruction& src : cb.body) {
        Instruction in = src;
        map_ids(in);
        in.offset = src.offset;
        if (is_op(in, spv::Op::OpVariable)) {
          if (in.operands.size() > 1) {
            Instruction st;
            st.opcode = uint16_t(spv::Op::OpStore);
            st.operands = {in.result, in.operands[1]};
            st.id_operands = {0, 1};
            st.offset = in.offset;
            initial_stores.push_back(st);
            in.operands.resize(1);
            in.id_operands.clear();
          }
          moved_vars.push_back(std::move(in));
          continue;
        }
        if (is_return(in)) {
          if (is_op(in, spv::Op::OpReturnValue) && !in.operands.empty()) result_value = in.operands[0];
          Instruction br;
          br.opcode = uint16_t(spv::Op::OpBranch);
          br.operands = {cont.label};
          br.id_operands = {0};
          br.offset = in.offset;
          nb.body.push_back(br);
          continue;
        }
        nb.body.push_back(std::move(in));
      }
      cloned_ += nb.body.size() + 1;
      body.push_back(std::move(nb));
    }
    if (!body.empty()) body[0].body.insert(body[0].body.begin(), initial_stores.begin(), initial_stores.end());

    Instruction br;
    br.opcode = uint16_t(spv::Op::OpBranch);
    br.operands = {body.at(0).label};
    br.id_operands = {0};
    br.offset = call.offset;
    head.body.push_back(br);

    // The calling block's successors now come from the continuation block.
    Id old_label = head.label;
    for (Id t : branch_targets(cont.body.back()))
      for (Block& s : fn.blocks)
        if (s.label == t)
          for (Instruction& in : s.body)
            if (is_op(in, spv::Op::OpPhi))
              for (size_t i = 1; i < in.operands.size(); i += 2)
                if (in.operands[i] == old_label) in.operands[i] = cont.label;

    body.push_back(std::move(cont));
    fn.blocks.insert(fn.blocks.begin() + long(b) + 1, std::make_move_iterator(body.begin()),
                     std::make_move_iterator(body.end()));

    // Variables go at the start of the caller's entry block, after its own.
    auto& entry = fn.blocks[0].body;
    size_t at = 0;
    while (at < entry.size() && is_op(entry[at], spv::Op::OpVariable)) ++at;
    entry.insert(entry.begin() + long(at), moved_vars.begin(), moved_vars.end());

    // Uses of the call's result read the returned value.
    if (call.result && result_value) {
      for (Block& blk : fn.blocks)
        for (Instruction& in : blk.body)
          for (uint16_t i : in.id_operands)
            if (in.operands[i] == call.result) in.operands[i] = result_value;
    }
    // Later lookups (function_index) read defs of functions only, which did not move.
  }

  Module& m_;
  std::unordered_map<size_t, bool> inlinable_;
  size_t cloned_ = 0;
  uint32_t inlined_ = 0;
};

}  // namespace

uint32_t inline_calls(Module& m) { return Inliner(m).run(); }

}  // namespace coopvk::jit
