// close_loops: see loop_close.h.
#include "spirv/loop_close.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "spirv/cfg.h"
#include "spirv/spirv_enums.h"
#include "spirv/ssa_promote.h"

namespace coopvk::jit {

namespace {

bool is_op(const Instruction& in, spv::Op op) { return in.opcode == uint16_t(op); }

class LoopCloser {
 public:
  explicit LoopCloser(Module& m) : m_(m) {}

  uint32_t run() {
    uint32_t added = 0;
    for (Function& fn : m_.functions) added += close_function(fn);
    if (added) rebuild_defs(m_);
    return added;
  }

 private:
  // Plain data the lowering keeps in its value reps: scalars, vectors, OpTypeMatrix, and
  // arrays and structs of them.
  bool closable(Id type, int depth = 0) {
    if (depth > 16) return false;
    if (auto it = closable_.find(type); it != closable_.end()) return it->second;
    const Instruction* t = m_.global(type);
    bool ok = false;
    if (t) switch (static_cast<spv::Op>(t->opcode)) {
        case spv::Op::OpTypeBool: case spv::Op::OpTypeInt: case spv::Op::OpTypeFloat:
          ok = true;
          break;
        case spv::Op::OpTypeVector: case spv::Op::OpTypeMatrix: case spv::Op::OpTypeArray:
          ok = !t->operands.empty() && closable(t->operands[0], depth + 1);
          break;
        case spv::Op::OpTypeStruct:
          ok = true;
          for (Id mem : t->operands) ok = ok && closable(mem, depth + 1);
          break;
        default:
          break;
      }
    closable_[type] = ok;
    return ok;
  }

  uint32_t close_function(Function& fn) {
    FunctionCfg g;
    std::string error;
    if (!build_cfg(fn, &g, &error)) return 0;  // the lowering reports it
    const uint32_t n = uint32_t(fn.blocks.size());
    // Where each value is defined, and its type.
    std::unordered_map<Id, uint32_t> def_block;
    std::unordered_map<Id, Id> def_type;
    for (uint32_t b = 0; b < n; ++b)
      for (const Instruction& in : fn.blocks[b].body)
        if (in.result && in.result_type) {
          def_block[in.result] = b;
          def_type[in.result] = in.result_type;
        }
    // Innermost loops first, so that a value leaving two loops is closed at the inner
    // merge and that phi again at the outer one.
    std::vector<int32_t> loops;
    for (size_t c = 0; c < g.constructs.size(); ++c)
      if (g.constructs[c].loop) loops.push_back(int32_t(c));
    auto depth = [&](int32_t c) {
      int d = 0;
      for (; c >= 0; c = g.constructs[c].parent) ++d;
      return d;
    };
    std::stable_sort(loops.begin(), loops.end(), [&](int32_t a, int32_t b) { return depth(a) > depth(b); });

    uint32_t added = 0;
    for (int32_t c : loops) {
      const uint32_t merge = g.constructs[c].merge;
      if (merge == kNoBlock || !g.reachable(merge)) continue;
      // Every edge into the merge block must leave the loop from a block that runs (a phi
      // needs an entry for each, and a value from the loop is available on each).
      bool ok = !g.pred[merge].empty();
      for (uint32_t p : g.pred[merge]) ok = ok && g.reachable(p) && g.in_construct(p, c);
      if (!ok) continue;
      std::unordered_map<Id, Id> closed;  // value -> its phi at the merge block
      std::vector<Instruction> phis;
      auto close = [&](Id v) -> Id {
        if (auto it = closed.find(v); it != closed.end()) return it->second;
        Instruction p;
        p.opcode = uint16_t(spv::Op::OpPhi);
        p.result_type = def_type.at(v);
        p.result = m_.bound++;
        p.offset = fn.blocks[merge].body.empty() ? 0 : fn.blocks[merge].body.front().offset;
        for (uint32_t pr : g.pred[merge]) {
          p.id_operands.push_back(uint16_t(p.operands.size()));
          p.operands.push_back(v);
          p.id_operands.push_back(uint16_t(p.operands.size()));
          p.operands.push_back(fn.blocks[pr].label);
        }
        closed[v] = p.result;
        def_block[p.result] = merge;
        def_type[p.result] = p.result_type;
        phis.push_back(std::move(p));
        return closed[v];
      };
      // A value from inside the loop read where the loop has ended. An OpPhi reads its
      // operands at the end of the edge's source block, so that is where they count.
      auto from_loop = [&](Id v) {
        auto it = def_block.find(v);
        return it != def_block.end() && g.in_construct(it->second, c) && closable(def_type.at(v));
      };
      for (uint32_t b = 0; b < n; ++b) {
        if (!g.reachable(b)) continue;
        for (Instruction& in : fn.blocks[b].body) {
          if (is_op(in, spv::Op::OpPhi)) {
            for (size_t k = 0; k + 1 < in.operands.size(); k += 2) {
              uint32_t from = g.block(in.operands[k + 1]);
              if (from == kNoBlock || g.in_construct(from, c)) continue;
              if (from_loop(in.operands[k])) in.operands[k] = close(in.operands[k]);
            }
            continue;
          }
          if (g.in_construct(b, c)) continue;
          for (uint16_t k : in.id_operands)
            if (from_loop(in.operands[k])) in.operands[k] = close(in.operands[k]);
        }
      }
      if (phis.empty()) continue;
      m_.defs.resize(m_.bound);
      std::vector<Instruction>& body = fn.blocks[merge].body;
      body.insert(body.begin(), std::make_move_iterator(phis.begin()), std::make_move_iterator(phis.end()));
      added += uint32_t(phis.size());
    }
    return added;
  }

  Module& m_;
  std::unordered_map<Id, bool> closable_;
};

}  // namespace

uint32_t close_loops(Module& m) { return LoopCloser(m).run(); }

}  // namespace coopvk::jit
