// analyze_uniformity: the rules are in uniformity.h.
#include "spirv/uniformity.h"

#include <unordered_map>

#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {

using Op = spv::Op;

bool is_op(const Instruction& in, Op op) { return in.opcode == uint16_t(op); }

class Analysis {
 public:
  Analysis(const Module& m, const UniformityOptions& o, Uniformity& u) : m_(m), o_(o), u_(u) {}

  bool run(std::string* error) {
    u_.divergent.assign(m_.bound, 0);
    u_.functions.resize(m_.functions.size());
    for (size_t f = 0; f < m_.functions.size(); ++f) {
      FunctionUniformity& fu = u_.functions[f];
      if (!build_cfg(m_.functions[f], &fu.cfg, error)) return false;
      fu.construct_divergent.assign(fu.cfg.constructs.size(), 0);
      for (const Instruction& p : m_.functions[f].params) mark(p.result);
    }
    find_variables();
    for (bool again = true; again;) {
      changed_ = false;
      demote_variables();
      for (size_t f = 0; f < m_.functions.size(); ++f) step(m_.functions[f], u_.functions[f]);
      again = changed_;
    }
    for (size_t f = 0; f < m_.functions.size(); ++f) collect_temporal(m_.functions[f], u_.functions[f]);
    return true;
  }

 private:
  void mark(Id id) {
    if (id && id < u_.divergent.size() && !u_.divergent[id]) {
      u_.divergent[id] = 1;
      changed_ = true;
    }
  }
  bool div(Id id) const { return u_.is_divergent(id); }

  uint32_t storage_of_pointer(Id value) const {
    Id t = 0;
    if (const Instruction* d = m_.def(value)) t = d->result_type;
    const Instruction* pt = t ? m_.global(t) : nullptr;
    if (pt && (is_op(*pt, Op::OpTypePointer) || is_op(*pt, Op::OpTypeUntypedPointerKHR)) && !pt->operands.empty())
      return pt->operands[0];
    return UINT32_MAX;
  }

  // Function, Private and Input variables: which may be kept in rep layout, and the
  // access-chain indices that decide it.
  void find_variables() {
    std::unordered_map<Id, Id> root;  // pointer id -> its variable
    auto consider = [&](Id var, uint32_t sc) {
      if (sc == uint32_t(spv::StorageClass::Function) || sc == uint32_t(spv::StorageClass::Private))
        root[var] = var;
      else if (sc == uint32_t(spv::StorageClass::Input))
        mark(var);  // built-ins: per-lane memory when not loaded directly
    };
    for (const Instruction& g : m_.globals)
      if (is_op(g, Op::OpVariable)) consider(g.result, g.operands.at(0));
    for (const Function& fn : m_.functions)
      for (const Block& b : fn.blocks)
        for (const Instruction& in : b.body)
          if (is_op(in, Op::OpVariable)) consider(in.result, in.operands.at(0));
    // Uses in order: an access chain's base is defined before it (functions are in
    // module order, but a Private variable's chains may be in any function).
    for (bool grew = true; grew;) {
      grew = false;
      for (const Function& fn : m_.functions)
        for (const Block& b : fn.blocks)
          for (const Instruction& in : b.body) {
            bool chain = is_op(in, Op::OpAccessChain) || is_op(in, Op::OpInBoundsAccessChain);
            if (chain && !in.operands.empty() && root.count(in.operands[0]) && !root.count(in.result)) {
              root[in.result] = root[in.operands[0]];
              grew = true;
            }
          }
    }
    for (const Function& fn : m_.functions)
      for (const Block& b : fn.blocks)
        for (const Instruction& in : b.body) {
          if (is_non_semantic(in)) continue;
          bool chain = is_op(in, Op::OpAccessChain) || is_op(in, Op::OpInBoundsAccessChain);
          for (size_t n = 0; n < in.id_operands.size(); ++n) {
            uint16_t k = in.id_operands[n];
            auto it = root.find(in.operands[k]);
            if (it == root.end()) continue;
            bool ok = (k == 0 && (is_op(in, Op::OpLoad) || is_op(in, Op::OpStore) || chain));
            // A variable holding a cooperative matrix stays in rep layout whatever uses
            // it: a matrix has no per-lane form, and a pointer to it passed to a function
            // is a rep pointer there too (lower_module.cpp).
            if (!ok && !holds_matrix(pointee_of(it->second))) mark(it->second);
          }
          if (chain && root.count(in.result)) {
            // Indices up to a cooperative matrix pick the matrix; one into the matrix picks
            // each invocation's own component and never moves the variable.
            size_t into = matrix_index(in);
            for (size_t k = 1; k < in.operands.size() && k < into; ++k) chain_indices_[root[in.result]].push_back(in.operands[k]);
          }
        }
  }

  // The operand index of an access chain's first index into a cooperative matrix (its
  // component), or operands.size() if it never enters one.
  size_t matrix_index(const Instruction& chain) const {
    Id t = 0;
    if (const Instruction* b = m_.def(chain.operands.at(0)))
      if (const Instruction* pt = m_.global(b->result_type); pt && pt->operands.size() > 1) t = pt->operands[1];
    for (size_t k = 1; k < chain.operands.size(); ++k) {
      const Instruction* ti = m_.global(t);
      if (!ti) break;
      if (is_op(*ti, Op::OpTypeCooperativeMatrixKHR) || is_op(*ti, Op::OpTypeCooperativeMatrixNV) ||
          is_op(*ti, Op::OpTypeCooperativeVectorNV))
        return k;
      if (is_op(*ti, Op::OpTypeStruct)) {
        uint32_t member = 0;
        if (!constant_index(chain.operands[k], &member) || member >= ti->operands.size()) break;
        t = ti->operands[member];
      } else if (!ti->operands.empty()) {
        t = ti->operands[0];  // array, runtime array, vector, matrix: the element type
      } else {
        break;
      }
    }
    return chain.operands.size();
  }

  // A variable indexed by a divergent value leaves rep layout: each lane's copy is then
  // somewhere else, so its pointer (and everything made from it) becomes per-lane.
  void demote_variables() {
    for (auto& [var, indices] : chain_indices_) {
      if (div(var) || holds_matrix(pointee_of(var))) continue;
      for (Id i : indices)
        if (div(i)) {
          mark(var);
          break;
        }
    }
  }

  // Bit k set: component k of this built-in is the same for every lane of a subgroup.
  uint32_t builtin_uniform_components(uint32_t builtin) const {
    switch (static_cast<spv::BuiltIn>(builtin)) {
      case spv::BuiltIn::WorkgroupId: case spv::BuiltIn::NumWorkgroups: case spv::BuiltIn::WorkgroupSize:
      case spv::BuiltIn::SubgroupId: case spv::BuiltIn::NumSubgroups: case spv::BuiltIn::SubgroupSize:
        return ~0u;
      case spv::BuiltIn::LocalInvocationId:
      case spv::BuiltIn::GlobalInvocationId:
        return o_.subgroup_size && o_.local_size[0] % o_.subgroup_size == 0 ? 0x6u : 0u;
      default:
        return 0;
    }
  }

  // The built-in an Input variable is decorated with, or -1.
  int64_t builtin_of(Id var) const {
    const Decoration* d = nullptr;
    if (m_.has_decoration(var, uint32_t(spv::Decoration::BuiltIn), &d) && !d->args.empty()) return d->args[0];
    return -1;
  }

  bool constant_index(Id id, uint32_t* out) const {
    const Instruction* g = m_.global(id);
    if (!g || !is_op(*g, Op::OpConstant) || g->operands.empty()) return false;
    *out = g->operands[0];
    return true;
  }

  // Subgroup operations, by how their results vary across lanes.
  enum class GroupKind { NotGroup, Uniform, Divergent, DataFlow };
  GroupKind group_kind(const Instruction& in) const {
    switch (static_cast<Op>(in.opcode)) {
      case Op::OpGroupNonUniformElect:
      case Op::OpGroupNonUniformShuffle: case Op::OpGroupNonUniformShuffleXor:
      case Op::OpGroupNonUniformShuffleUp: case Op::OpGroupNonUniformShuffleDown:
      case Op::OpGroupNonUniformQuadBroadcast: case Op::OpGroupNonUniformQuadSwap:
      case Op::OpGroupNonUniformInverseBallot: case Op::OpGroupNonUniformRotateKHR:
        return GroupKind::Divergent;
      case Op::OpGroupNonUniformAll: case Op::OpGroupNonUniformAny: case Op::OpGroupNonUniformAllEqual:
      case Op::OpGroupNonUniformBroadcast: case Op::OpGroupNonUniformBroadcastFirst:
      case Op::OpGroupNonUniformBallot:
        return GroupKind::Uniform;
      case Op::OpGroupNonUniformBallotBitExtract: case Op::OpGroupNonUniformBallotFindLSB:
      case Op::OpGroupNonUniformBallotFindMSB:
        return GroupKind::DataFlow;
      case Op::OpGroupNonUniformBallotBitCount:
      case Op::OpGroupNonUniformIAdd: case Op::OpGroupNonUniformFAdd: case Op::OpGroupNonUniformIMul:
      case Op::OpGroupNonUniformFMul: case Op::OpGroupNonUniformSMin: case Op::OpGroupNonUniformUMin:
      case Op::OpGroupNonUniformFMin: case Op::OpGroupNonUniformSMax: case Op::OpGroupNonUniformUMax:
      case Op::OpGroupNonUniformFMax: case Op::OpGroupNonUniformBitwiseAnd:
      case Op::OpGroupNonUniformBitwiseOr: case Op::OpGroupNonUniformBitwiseXor:
      case Op::OpGroupNonUniformLogicalAnd: case Op::OpGroupNonUniformLogicalOr:
      case Op::OpGroupNonUniformLogicalXor: {
        // (scope, group operation, value[, cluster size])
        if (in.operands.size() < 2) return GroupKind::Divergent;
        uint32_t gop = in.operands[1];
        if (gop == uint32_t(spv::GroupOperation::Reduce)) return GroupKind::Uniform;
        if (gop == uint32_t(spv::GroupOperation::ClusteredReduce) && in.operands.size() > 3) {
          uint32_t cluster = 0;
          if (constant_index(in.operands[3], &cluster) && o_.subgroup_size && cluster >= o_.subgroup_size)
            return GroupKind::Uniform;
        }
        return GroupKind::Divergent;
      }
      default:
        return GroupKind::NotGroup;
    }
  }

  bool any_id_operand_divergent(const Instruction& in) const {
    for (uint16_t k : in.id_operands)
      if (div(in.operands[k])) return true;
    return false;
  }

  bool is_non_semantic(const Instruction& in) const {
    if (!is_op(in, Op::OpExtInst) || in.operands.empty()) return false;
    auto it = m_.ext_inst_imports.find(in.operands[0]);
    return it != m_.ext_inst_imports.end() && it->second.rfind("NonSemantic.", 0) == 0;
  }

  // Whether an edge from block `from` into block `to` leaves a divergent construct.
  bool edge_leaves_divergence(const FunctionUniformity& fu, uint32_t from, uint32_t to) const {
    const FunctionCfg& g = fu.cfg;
    if (g.position[from] == kNoBlock) return false;
    for (int32_t c = g.innermost[from]; c >= 0; c = g.constructs[c].parent)
      if (!g.in_construct(to, c) && fu.construct_divergent[c]) return true;
    return false;
  }

  void update_constructs(const Function& fn, FunctionUniformity& fu) {
    const FunctionCfg& g = fu.cfg;
    for (size_t c = 0; c < g.constructs.size(); ++c) {
      if (fu.construct_divergent[c]) continue;
      const Construct& k = g.constructs[c];
      bool d = false;
      if (!k.loop) {
        const Instruction& t = fn.blocks[k.header].body.back();
        if ((is_op(t, Op::OpBranchConditional) || is_op(t, Op::OpSwitch)) && div(t.operands.at(0))) d = true;
      } else {
        for (uint32_t p = k.begin; p < k.end && !d; ++p) {
          uint32_t x = g.order[p];
          const Instruction& t = fn.blocks[x].body.back();
          bool leaves = is_op(t, Op::OpReturn) || is_op(t, Op::OpReturnValue) || is_op(t, Op::OpKill) ||
                        is_op(t, Op::OpTerminateInvocation);
          bool stays = false;
          for (uint32_t s : g.succ[x]) (g.in_construct(s, int32_t(c)) ? stays : leaves) = true;
          if (!leaves) continue;
          // Lanes at x split between leaving and staying on a divergent condition ...
          bool conditional = (is_op(t, Op::OpBranchConditional) || is_op(t, Op::OpSwitch)) && stays;
          if (conditional && div(t.operands.at(0))) d = true;
          // ... or only some lanes of the loop reach x at all.
          for (int32_t in = g.innermost[x]; in >= 0 && in != int32_t(c); in = g.constructs[in].parent)
            if (fu.construct_divergent[in]) d = true;
        }
      }
      if (d) {
        fu.construct_divergent[c] = 1;
        changed_ = true;
      }
    }
  }

  void step(const Function& fn, FunctionUniformity& fu) {
    update_constructs(fn, fu);
    for (uint32_t b = 0; b < fn.blocks.size(); ++b)
      for (const Instruction& in : fn.blocks[b].body) {
        if (!in.result || div(in.result) || is_non_semantic(in)) continue;
        if (instruction_divergent(in, fu, b)) mark(in.result);
      }
    // Temporal divergence: a value from inside a divergent loop, read after it.
    for_each_temporal_use(fn, fu, [&](Id v) { mark(v); });
  }

  // Calls f(v) for each use, outside a divergent loop, of a value v defined inside it.
  template <class F>
  void for_each_temporal_use(const Function& fn, const FunctionUniformity& fu, F f) const {
    const FunctionCfg& g = fu.cfg;
    for (size_t c = 0; c < g.constructs.size(); ++c) {
      if (!g.constructs[c].loop || !fu.construct_divergent[c]) continue;
      auto inside = [&](Id v) {
        const Module::Def& d = v < m_.defs.size() ? m_.defs[v] : Module::Def{};
        return d.kind == Module::Def::Local && &m_.functions[d.a] == &fn && g.in_construct(d.b, int32_t(c));
      };
      for (uint32_t b = 0; b < fn.blocks.size(); ++b) {
        if (g.position[b] == kNoBlock) continue;
        for (const Instruction& in : fn.blocks[b].body) {
          if (in.opcode == uint16_t(Op::OpPhi)) {
            // A phi reads each operand at the end of its edge's source block: the phis
            // that close a loop (loop_close.h) read inside it.
            for (size_t k = 0; k + 1 < in.operands.size(); k += 2) {
              uint32_t from = g.block(in.operands[k + 1]);
              if (from != kNoBlock && !g.in_construct(from, int32_t(c)) && inside(in.operands[k])) f(in.operands[k]);
            }
            continue;
          }
          if (g.in_construct(b, int32_t(c))) continue;
          for (uint16_t k : in.id_operands)
            if (inside(in.operands[k])) f(in.operands[k]);
        }
      }
    }
  }

  // A cooperative matrix, or an array or struct with one inside; or a cooperative vector,
  // whose variables are frame buffers reached by uniform pointers (lowerer.h) too.
  bool holds_matrix(Id t) const {
    const Instruction* d = m_.global(t);
    if (!d) return false;
    if (is_op(*d, Op::OpTypeCooperativeMatrixKHR) || is_op(*d, Op::OpTypeCooperativeMatrixNV) ||
        is_op(*d, Op::OpTypeCooperativeVectorNV)) return true;
    if (is_op(*d, Op::OpTypeArray) || is_op(*d, Op::OpTypeRuntimeArray)) return !d->operands.empty() && holds_matrix(d->operands[0]);
    if (is_op(*d, Op::OpTypeStruct))
      for (Id mem : d->operands)
        if (holds_matrix(mem)) return true;
    return false;
  }
  // The type a variable (or pointer) points to, or 0.
  Id pointee_of(Id pointer) const {
    const Instruction* d = m_.def(pointer);
    const Instruction* pt = d ? m_.global(d->result_type) : nullptr;
    return pt && is_op(*pt, Op::OpTypePointer) && pt->operands.size() > 1 ? pt->operands[1] : 0;
  }

  bool is_matrix_type(Id t) const {
    const Instruction* d = m_.global(t);
    return d && (is_op(*d, Op::OpTypeCooperativeMatrixKHR) || is_op(*d, Op::OpTypeCooperativeMatrixNV));
  }
  Id type_of_value(Id v) const {
    const Instruction* d = m_.def(v);
    return d ? d->result_type : 0;
  }

  bool instruction_divergent(const Instruction& in, const FunctionUniformity& fu, uint32_t block) {
    const auto& o = in.operands;
    // A cooperative matrix belongs to the subgroup as a whole: one object, never per-lane
    // (its components, extracted, are per invocation).
    if (is_matrix_type(in.result_type)) return false;
    // A cooperative vector is per invocation, always (its buffer has a lane per invocation).
    if (const Instruction* d = m_.global(in.result_type); d && is_op(*d, Op::OpTypeCooperativeVectorNV)) return true;
    if (is_op(in, Op::OpCompositeExtract) && !o.empty() && is_matrix_type(type_of_value(o[0]))) return true;
    // A pointer to a component of a matrix: each invocation's component is its own.
    if ((is_op(in, Op::OpAccessChain) || is_op(in, Op::OpInBoundsAccessChain)) && matrix_index(in) < o.size())
      return true;
    switch (static_cast<Op>(in.opcode)) {
      case Op::OpPhi: {
        for (size_t k = 0; k + 1 < o.size(); k += 2) {
          if (div(o[k])) return true;
          uint32_t from = fu.cfg.block(o[k + 1]);
          if (from != kNoBlock && edge_leaves_divergence(fu, from, block)) return true;
        }
        return false;
      }
      case Op::OpVariable:
        return false;
      case Op::OpFunctionCall:
      case Op::OpCooperativeMatrixGetCoordinateEXT:  // each invocation's own component
        return true;
      case Op::OpLoad: {
        Id ptr = o.at(0);
        // A component of a built-in through an access chain, or the whole built-in: the
        // pointer into per-lane memory is divergent, the value may not be.
        uint32_t comp = 0;
        Id var = ptr;
        bool component = false;
        if (const Instruction* d = m_.def(ptr);
            d && (is_op(*d, Op::OpAccessChain) || is_op(*d, Op::OpInBoundsAccessChain)) && d->operands.size() == 2 &&
            constant_index(d->operands[1], &comp)) {
          var = d->operands[0];
          component = true;
        }
        const Instruction* g = m_.global(var);
        if (g && is_op(*g, Op::OpVariable) && g->operands.at(0) == uint32_t(spv::StorageClass::Input)) {
          int64_t bi = builtin_of(var);
          uint32_t mask = bi < 0 ? 0 : builtin_uniform_components(uint32_t(bi));
          if (component) return !(comp < 32 && (mask >> comp) & 1);
          if (mask == ~0u) return false;
          components_[in.result] = mask;
          return true;
        }
        if (div(ptr)) return true;
        switch (static_cast<spv::StorageClass>(storage_of_pointer(ptr))) {
          case spv::StorageClass::Uniform: case spv::StorageClass::StorageBuffer:
          case spv::StorageClass::PushConstant: case spv::StorageClass::Workgroup:
          case spv::StorageClass::PhysicalStorageBuffer: case spv::StorageClass::UniformConstant:
            return false;
          default:
            return true;  // per-invocation memory
        }
      }
      case Op::OpCompositeExtract: {
        if (!div(o.at(0))) return false;
        auto it = components_.find(o[0]);
        return !(it != components_.end() && o.size() == 2 && o[1] < 32 && (it->second >> o[1]) & 1);
      }
      case Op::OpCopyObject: {
        if (auto it = components_.find(o.at(0)); it != components_.end()) components_[in.result] = it->second;
        return div(o[0]);
      }
      default:
        break;
    }
    if (spv_op_is_atomic(in.opcode)) return true;
    switch (group_kind(in)) {
      case GroupKind::Divergent: return true;
      case GroupKind::Uniform: return false;
      default: break;
    }
    return any_id_operand_divergent(in);
  }

  void collect_temporal(const Function& fn, FunctionUniformity& fu) {
    std::vector<uint8_t> seen(m_.bound, 0);
    for_each_temporal_use(fn, fu, [&](Id v) {
      if (!seen[v]) {
        seen[v] = 1;
        fu.temporal.push_back(v);
      }
    });
  }

  const Module& m_;
  const UniformityOptions& o_;
  Uniformity& u_;
  bool changed_ = false;
  std::unordered_map<Id, uint32_t> components_;  // divergent vectors with some uniform components
  std::unordered_map<Id, std::vector<Id>> chain_indices_;  // rep-layout candidate -> its chains' indices
};

}  // namespace

bool analyze_uniformity(const Module& m, const UniformityOptions& options, Uniformity* out, std::string* error) {
  *out = Uniformity{};
  return Analysis(m, options, *out).run(error);
}

}  // namespace coopvk::jit
