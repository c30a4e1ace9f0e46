// The control-flow graph of one SPIR-V function, with what the passes after the reader
// need: successors and predecessors, the structured block order the lowering emits in,
// dominators, and the structured constructs (selections and loops) with the span of
// that order each one covers.
//
// Structured order: a reverse post-order of a depth-first search that visits a header's
// merge block (and a loop's continue target) before its other successors. Every
// construct then occupies one contiguous run of positions: its header first, then all
// blocks of the construct, and its merge block right after the run (SPIR-V 1.6, 2.11
// "Structured Control Flow": a construct can be entered only through its header, and its
// merge block is not inside it). This is what lets the lowering reason about "the blocks
// between here and there" (lower_control_flow.cpp) and the uniformity analysis about
// "inside this construct" (uniformity.h).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

constexpr uint32_t kNoBlock = UINT32_MAX;

struct Construct {
  uint32_t header = kNoBlock;    // block index
  uint32_t merge = kNoBlock;     // block index of the merge block
  uint32_t cont = kNoBlock;      // loops: the continue target
  bool loop = false;
  int32_t parent = -1;           // enclosing construct (index), -1 at function level
  // Positions in FunctionCfg::order: [begin, end) are the header and the construct's
  // blocks; the merge block is at position `end` when it is reachable in the order.
  uint32_t begin = 0, end = 0;
};

struct FunctionCfg {
  const Function* fn = nullptr;
  std::unordered_map<Id, uint32_t> index;   // label -> block index
  std::vector<std::vector<uint32_t>> succ;  // branch targets (block indexes), deduplicated
  std::vector<std::vector<uint32_t>> pred;
  std::vector<uint32_t> order;              // structured order (block indexes)
  std::vector<uint32_t> position;           // block -> position in order, kNoBlock if absent
  // Immediate dominator over branch edges (the entry is its own); kNoBlock for blocks no
  // branch reaches (a merge block after two returns, say).
  std::vector<uint32_t> idom;
  std::vector<Construct> constructs;
  std::vector<int32_t> header_of;  // block -> construct it heads, or -1
  std::vector<int32_t> innermost;  // block -> innermost construct containing it, or -1

  uint32_t block(Id label) const;  // kNoBlock if not a label of this function
  bool reachable(uint32_t b) const { return idom[b] != kNoBlock; }
  bool dominates(uint32_t a, uint32_t b) const;
  // Whether block b lies in construct c (its header included, its merge excluded).
  bool in_construct(uint32_t b, int32_t c) const;
  // Whether construct `inner` is `outer` or nested inside it.
  bool nested_in(int32_t inner, int32_t outer) const;
};

// Builds the CFG; on malformed structure (a branch to a label of another function, a
// block without terminator) returns false with a message in *error.
bool build_cfg(const Function& fn, FunctionCfg* out, std::string* error);

// The blocks an instruction can transfer control to (OpBranch, OpBranchConditional,
// OpSwitch); empty for returns and the like.
std::vector<Id> branch_targets(const Instruction& terminator);
bool is_block_terminator(uint16_t opcode);

}  // namespace coopvk::jit
