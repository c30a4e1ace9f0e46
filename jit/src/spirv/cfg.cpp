// FunctionCfg: see cfg.h.
#include "spirv/cfg.h"

#include <algorithm>
#include <functional>

#include "spirv/spirv_enums.h"

namespace coopvk::jit {

bool is_block_terminator(uint16_t op) {
  switch (static_cast<spv::Op>(op)) {
    case spv::Op::OpBranch: case spv::Op::OpBranchConditional: case spv::Op::OpSwitch:
    case spv::Op::OpReturn: case spv::Op::OpReturnValue: case spv::Op::OpUnreachable:
    case spv::Op::OpKill: case spv::Op::OpTerminateInvocation:
      return true;
    default:
      return false;
  }
}

std::vector<Id> branch_targets(const Instruction& t) {
  const auto& o = t.operands;
  switch (static_cast<spv::Op>(t.opcode)) {
    case spv::Op::OpBranch:
      return {o.at(0)};
    case spv::Op::OpBranchConditional:
      return {o.at(1), o.at(2)};
    case spv::Op::OpSwitch: {
      // The grammar marks which words are labels; the literals between them may be one
      // or two words wide depending on the selector.
      std::vector<Id> s;
      for (size_t k = 1; k < t.id_operands.size(); ++k) s.push_back(o.at(t.id_operands[k]));
      return s;
    }
    default:
      return {};
  }
}

uint32_t FunctionCfg::block(Id label) const {
  auto it = index.find(label);
  return it == index.end() ? kNoBlock : it->second;
}

bool FunctionCfg::dominates(uint32_t a, uint32_t b) const {
  if (!reachable(a) || !reachable(b)) return false;
  for (uint32_t x = b;; x = idom[x]) {
    if (x == a) return true;
    if (idom[x] == x) return false;
  }
}

bool FunctionCfg::in_construct(uint32_t b, int32_t c) const {
  if (c < 0) return true;
  uint32_t p = position[b];
  return p != kNoBlock && p >= constructs[c].begin && p < constructs[c].end;
}

bool FunctionCfg::nested_in(int32_t inner, int32_t outer) const {
  if (outer < 0) return true;
  for (int32_t c = inner; c >= 0; c = constructs[c].parent)
    if (c == outer) return true;
  return false;
}

namespace {

const Instruction* merge_instruction(const Block& b) {
  if (b.body.size() < 2) return nullptr;
  const Instruction& m = b.body[b.body.size() - 2];
  if (m.opcode == uint16_t(spv::Op::OpSelectionMerge) || m.opcode == uint16_t(spv::Op::OpLoopMerge)) return &m;
  return nullptr;
}

// Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm": iterate over the
// reverse post-order of branch edges until the immediate dominators settle.
void compute_dominators(FunctionCfg& g) {
  const size_t n = g.succ.size();
  std::vector<uint32_t> rpo, post_index(n, kNoBlock);
  std::vector<uint8_t> seen(n, 0);
  std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};
  seen[0] = 1;
  while (!stack.empty()) {
    auto& [b, k] = stack.back();
    if (k < g.succ[b].size()) {
      uint32_t s = g.succ[b][k++];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, 0});
      }
      continue;
    }
    post_index[b] = uint32_t(rpo.size());
    rpo.push_back(b);
    stack.pop_back();
  }
  std::reverse(rpo.begin(), rpo.end());
  g.idom.assign(n, kNoBlock);
  g.idom[0] = 0;
  auto intersect = [&](uint32_t a, uint32_t b) {
    while (a != b) {
      while (post_index[a] < post_index[b]) a = g.idom[a];
      while (post_index[b] < post_index[a]) b = g.idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b : rpo) {
      if (b == 0) continue;
      uint32_t d = kNoBlock;
      for (uint32_t p : g.pred[b]) {
        if (g.idom[p] == kNoBlock) continue;
        d = d == kNoBlock ? p : intersect(p, d);
      }
      if (d != g.idom[b]) {
        g.idom[b] = d;
        changed = true;
      }
    }
  }
}

}  // namespace

bool build_cfg(const Function& fn, FunctionCfg* out, std::string* error) {
  FunctionCfg& g = *out;
  g = FunctionCfg{};
  g.fn = &fn;
  const size_t n = fn.blocks.size();
  if (n == 0) {
    *error = "function without blocks";
    return false;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Block& b = fn.blocks[i];
    if (b.body.empty() || !is_block_terminator(b.body.back().opcode)) {
      *error = "block %" + std::to_string(b.label) + " does not end with a terminator";
      return false;
    }
    g.index[b.label] = i;
  }
  g.succ.assign(n, {});
  g.pred.assign(n, {});
  for (uint32_t i = 0; i < n; ++i) {
    for (Id t : branch_targets(fn.blocks[i].body.back())) {
      uint32_t s = g.block(t);
      if (s == kNoBlock) {
        *error = "branch to %" + std::to_string(t) + ", which is not a block of this function";
        return false;
      }
      if (std::find(g.succ[i].begin(), g.succ[i].end(), s) == g.succ[i].end()) {
        g.succ[i].push_back(s);
        g.pred[s].push_back(i);
      }
    }
  }
  // Structured order (see cfg.h): merge and continue targets first, then the branches.
  std::vector<uint32_t> post;
  std::vector<uint8_t> state(n, 0);
  bool bad_label = false;
  std::function<void(uint32_t)> dfs = [&](uint32_t b) {
    state[b] = 1;
    std::vector<uint32_t> next;
    if (const Instruction* m = merge_instruction(fn.blocks[b])) {
      for (size_t k = 0; k < (m->opcode == uint16_t(spv::Op::OpLoopMerge) ? 2u : 1u); ++k) {
        uint32_t t = g.block(m->operands.at(k));
        if (t == kNoBlock) bad_label = true;
        else next.push_back(t);
      }
    }
    next.insert(next.end(), g.succ[b].begin(), g.succ[b].end());
    for (uint32_t s : next)
      if (!state[s]) dfs(s);
    post.push_back(b);
  };
  dfs(0);
  if (bad_label) {
    *error = "a merge instruction names a label that is not a block of this function";
    return false;
  }
  g.order.assign(post.rbegin(), post.rend());
  g.position.assign(n, kNoBlock);
  for (uint32_t p = 0; p < g.order.size(); ++p) g.position[g.order[p]] = p;

  compute_dominators(g);

  // Constructs, in order of their headers; spans nest, so a stack finds the parents.
  g.header_of.assign(n, -1);
  g.innermost.assign(n, -1);
  for (uint32_t p = 0; p < g.order.size(); ++p) {
    uint32_t b = g.order[p];
    const Instruction* m = merge_instruction(fn.blocks[b]);
    if (!m) continue;
    Construct c;
    c.header = b;
    c.loop = m->opcode == uint16_t(spv::Op::OpLoopMerge);
    c.merge = g.block(m->operands.at(0));
    if (c.loop) c.cont = g.block(m->operands.at(1));
    c.begin = p;
    c.end = g.position[c.merge];
    if (c.end <= c.begin) {
      *error = "the merge block of the construct headed by %" + std::to_string(fn.blocks[b].label) +
               " does not follow the construct";
      return false;
    }
    g.header_of[b] = int32_t(g.constructs.size());
    g.constructs.push_back(c);
  }
  std::vector<int32_t> open;
  uint32_t next_construct = 0;
  for (uint32_t p = 0; p < g.order.size(); ++p) {
    while (!open.empty() && p >= g.constructs[open.back()].end) open.pop_back();
    if (next_construct < g.constructs.size() && g.constructs[next_construct].begin == p) {
      Construct& c = g.constructs[next_construct];
      if (!open.empty() && c.end > g.constructs[open.back()].end) {
        *error = "the construct headed by %" + std::to_string(fn.blocks[c.header].label) +
                 " is not nested in the one around it";
        return false;
      }
      c.parent = open.empty() ? -1 : open.back();
      open.push_back(int32_t(next_construct++));
    }
    g.innermost[g.order[p]] = open.empty() ? -1 : open.back();
  }
  return true;
}

}  // namespace coopvk::jit
