// simplify_cfg: see simplify_cfg.h.
#include "spirv/simplify_cfg.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "spirv/cfg.h"
#include "spirv/spirv_enums.h"
#include "spirv/ssa_promote.h"

namespace coopvk::jit {
namespace {

bool is_op(const Instruction& in, spv::Op op) { return in.opcode == uint16_t(op); }
bool is_merge(const Instruction& in) { return is_op(in, spv::Op::OpSelectionMerge) || is_op(in, spv::Op::OpLoopMerge); }

class Simplifier {
 public:
  Simplifier(Module& m, const std::vector<SpecializationValue>& spec) : m_(m), spec_(spec) {}

  uint32_t run() {
    rebuild_defs(m_);
    uint32_t changes = 0;
    for (Function& fn : m_.functions) changes += simplify(fn);
    if (changes) rebuild_defs(m_);
    return changes;
  }

 private:
  // The value of a boolean constant as this pipeline specializes it, if it is one.
  std::optional<bool> constant_bool(Id id, int depth = 0) const {
    const Instruction* g = m_.global(id);
    if (!g || depth > 8) return std::nullopt;
    switch (static_cast<spv::Op>(g->opcode)) {
      case spv::Op::OpConstantTrue: return true;
      case spv::Op::OpConstantFalse: return false;
      case spv::Op::OpSpecConstantTrue:
      case spv::Op::OpSpecConstantFalse: {
        bool v = is_op(*g, spv::Op::OpSpecConstantTrue);
        const Decoration* d = nullptr;
        if (m_.has_decoration(id, uint32_t(spv::Decoration::SpecId), &d) && !d->args.empty())
          for (const SpecializationValue& sv : spec_)
            if (sv.constant_id == d->args[0]) {
              v = false;
              for (uint8_t b : sv.bytes) v |= b != 0;
            }
        return v;
      }
      case spv::Op::OpSpecConstantOp: {
        if (g->operands.size() < 2) return std::nullopt;
        auto a = constant_bool(g->operands[1], depth + 1);
        if (!a) return std::nullopt;
        if (g->operands[0] == uint32_t(spv::Op::OpLogicalNot)) return !*a;
        if (g->operands.size() < 3) return std::nullopt;
        auto b = constant_bool(g->operands[2], depth + 1);
        if (!b) return std::nullopt;
        switch (static_cast<spv::Op>(g->operands[0])) {
          case spv::Op::OpLogicalAnd: return *a && *b;
          case spv::Op::OpLogicalOr: return *a || *b;
          case spv::Op::OpLogicalEqual: return *a == *b;
          case spv::Op::OpLogicalNotEqual: return *a != *b;
          default: return std::nullopt;
        }
      }
      default:
        return std::nullopt;
    }
  }

  // Merge blocks and continue targets named by the merge instructions of the blocks (of
  // those marked in `only`, where given).
  static std::unordered_set<Id> named_by_merges(const Function& fn, const std::vector<bool>* only = nullptr) {
    std::unordered_set<Id> named;
    for (size_t i = 0; i < fn.blocks.size(); ++i) {
      if (only && !(*only)[i]) continue;
      for (const Instruction& in : fn.blocks[i].body)
        if (is_merge(in))
          for (size_t k = 0; k < in.operands.size() && k < (is_op(in, spv::Op::OpLoopMerge) ? 2u : 1u); ++k)
            named.insert(in.operands[k]);
    }
    return named;
  }

  uint32_t simplify(Function& fn) {
    uint32_t changes = 0;
    for (Block& b : fn.blocks) {
      if (b.body.size() < 2) continue;
      Instruction& t = b.body.back();
      Instruction& merge = b.body[b.body.size() - 2];
      if (!is_op(t, spv::Op::OpBranchConditional) || t.operands.size() < 3 || !is_op(merge, spv::Op::OpSelectionMerge))
        continue;
      auto c = constant_bool(t.operands[0]);
      if (!c) continue;
      Instruction br;
      br.opcode = uint16_t(spv::Op::OpBranch);
      br.operands = {t.operands[*c ? 1 : 2]};
      br.id_operands = {0};
      br.offset = t.offset;
      b.body.pop_back();
      b.body.pop_back();
      b.body.push_back(br);
      ++changes;
    }
    if (changes) remove_unreachable(fn);
    return changes + merge_chains(fn);
  }

  // Predecessor labels per block label, over the branches as they are now.
  static std::unordered_map<Id, std::vector<Id>> predecessors(const Function& fn) {
    std::unordered_map<Id, std::vector<Id>> pred;
    for (const Block& b : fn.blocks)
      if (!b.body.empty())
        for (Id s : branch_targets(b.body.back())) {
          auto& v = pred[s];
          if (std::find(v.begin(), v.end(), b.label) == v.end()) v.push_back(b.label);
        }
    return pred;
  }

  // Uses of `from` read `to` instead, everywhere in the function.
  static void replace_uses(Function& fn, Id from, Id to) {
    for (Block& b : fn.blocks)
      for (Instruction& in : b.body)
        for (uint16_t k : in.id_operands)
          if (in.operands[k] == from) in.operands[k] = to;
  }

  // Drops phi entries of edges that no longer exist and phis left with one entry.
  static void prune_phis(Function& fn, const std::unordered_map<Id, std::vector<Id>>& pred) {
    for (Block& b : fn.blocks) {
      auto it = pred.find(b.label);
      static const std::vector<Id> none;
      const std::vector<Id>& p = it == pred.end() ? none : it->second;
      for (size_t k = 0; k < b.body.size(); ++k) {
        Instruction& in = b.body[k];
        if (!is_op(in, spv::Op::OpPhi)) continue;
        std::vector<uint32_t> ops;
        for (size_t i = 0; i + 1 < in.operands.size(); i += 2)
          if (std::find(p.begin(), p.end(), in.operands[i + 1]) != p.end()) {
            ops.push_back(in.operands[i]);
            ops.push_back(in.operands[i + 1]);
          }
        in.operands = ops;
        in.id_operands.clear();
        for (size_t i = 0; i < ops.size(); ++i) in.id_operands.push_back(uint16_t(i));
        if (ops.size() == 2 && ops[0] != in.result) {
          Id result = in.result, value = ops[0];
          b.body.erase(b.body.begin() + long(k));
          --k;
          replace_uses(fn, result, value);
        }
      }
    }
  }

  static void remove_unreachable(Function& fn) {
    std::unordered_map<Id, size_t> index;
    for (size_t i = 0; i < fn.blocks.size(); ++i) index[fn.blocks[i].label] = i;
    std::vector<bool> seen(fn.blocks.size(), false);
    std::vector<size_t> work{0};
    seen[0] = true;
    while (!work.empty()) {
      size_t b = work.back();
      work.pop_back();
      if (fn.blocks[b].body.empty()) continue;
      for (Id s : branch_targets(fn.blocks[b].body.back()))
        if (auto it = index.find(s); it != index.end() && !seen[it->second]) {
          seen[it->second] = true;
          work.push_back(it->second);
        }
    }
    // Blocks a merge instruction names stay (the structure needs them), unreachable or not.
    const std::unordered_set<Id> named = named_by_merges(fn, &seen);
    std::vector<Block> kept;
    for (size_t i = 0; i < fn.blocks.size(); ++i)
      if (seen[i] || named.count(fn.blocks[i].label)) kept.push_back(std::move(fn.blocks[i]));
    fn.blocks = std::move(kept);
    prune_phis(fn, predecessors(fn));
  }

  static uint32_t merge_chains(Function& fn) {
    uint32_t merged = 0;
    auto pred = predecessors(fn);
    const std::unordered_set<Id> named = named_by_merges(fn);
    std::unordered_map<Id, size_t> index;
    for (size_t i = 0; i < fn.blocks.size(); ++i) index[fn.blocks[i].label] = i;
    std::vector<bool> gone(fn.blocks.size(), false);
    std::unordered_map<Id, Id> renamed_pred;  // a merged block's label -> the block it joined
    for (size_t a = 0; a < fn.blocks.size(); ++a) {
      if (gone[a]) continue;
      for (;;) {
        Block& A = fn.blocks[a];
        if (A.body.empty() || !is_op(A.body.back(), spv::Op::OpBranch) || A.body.back().operands.empty()) break;
        if (A.body.size() >= 2 && is_merge(A.body[A.body.size() - 2])) break;
        const Id target = A.body.back().operands[0];
        auto it = index.find(target);
        if (it == index.end() || it->second == 0 || it->second == a || gone[it->second] || named.count(target)) break;
        if (pred[target].size() != 1) break;
        Block& Bk = fn.blocks[it->second];
        std::vector<std::pair<Id, Id>> phis;  // B's phis have the one entry, from A
        A.body.pop_back();
        for (Instruction& in : Bk.body) {
          if (is_op(in, spv::Op::OpPhi) && in.operands.size() >= 2) phis.emplace_back(in.result, in.operands[0]);
          else A.body.push_back(std::move(in));
        }
        Bk.body.clear();
        gone[it->second] = true;
        renamed_pred[target] = A.label;
        for (auto& [r, v] : phis) replace_uses(fn, r, v);
        if (!A.body.empty())
          for (Id s : branch_targets(A.body.back()))
            for (Id& p : pred[s])
              if (p == target) p = A.label;
        ++merged;
      }
    }
    if (!merged) return 0;
    // Phis that named a merged block as predecessor name the block it joined.
    for (Block& s : fn.blocks)
      for (Instruction& in : s.body)
        if (is_op(in, spv::Op::OpPhi))
          for (size_t i = 1; i < in.operands.size(); i += 2)
            for (auto r = renamed_pred.find(in.operands[i]); r != renamed_pred.end(); r = renamed_pred.find(in.operands[i]))
              in.operands[i] = r->second;
    std::vector<Block> kept;
    for (size_t i = 0; i < fn.blocks.size(); ++i)
      if (!gone[i]) kept.push_back(std::move(fn.blocks[i]));
    fn.blocks = std::move(kept);
    return merged;
  }

  Module& m_;
  const std::vector<SpecializationValue>& spec_;
};

}  // namespace

uint32_t simplify_cfg(Module& m, const std::vector<SpecializationValue>& specialization) {
  return Simplifier(m, specialization).run();
}

}  // namespace coopvk::jit
