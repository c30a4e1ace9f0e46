// Cooperative vectors (SPV_NV_cooperative_vector): the frame-buffer representation of
// lowerer.h, the component loop, and the element-wise instructions the extension allows
// ("Arithmetic Instructions", "Bit Instructions", "Conversion Instructions" and the
// GLSL.std.450 list), which reuse the scalar lowering of each instruction on one lane
// vector per component (component_view).
#include <spirv/unified1/GLSL.std.450.h>

#include <llvm/IR/Constants.h>

#include <optional>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
// What the frame may hold in cooperative-vector buffers, over all functions: the
// workgroup runner's fiber stacks are 8 MiB (workgroup_runner.cpp), and the rest of the
// frame needs room too. Past kThreadStackFrameBytes the shader runs on those stacks only.
constexpr uint64_t kMaxCoopVecFrameBytes = 6u << 20;
}  // namespace

bool Lowerer::is_coopvec(Id type_id) const {
  auto it = types_.find(type_id);
  return it != types_.end() && it->second.op == uint16_t(Op::OpTypeCooperativeVectorNV);
}

Id Lowerer::value_type_of(Id id) const {
  if (auto it = F.value_types.find(id); it != F.value_types.end()) return it->second;
  const Instruction* g = m.global(id);
  return g && !spv_op_is_type(g->opcode) ? g->result_type : 0;
}

bool Lowerer::holds_object(Id type_id) { return holds_coopvec(type_id) || holds_matrix(type_id); }

bool Lowerer::holds_coopvec(Id type_id) {
  if (auto it = holds_coopvec_.find(type_id); it != holds_coopvec_.end()) return it->second;
  auto it = types_.find(type_id);
  if (it == types_.end()) return false;  // not (yet) a type: nothing is cached for it
  const TypeInfo& t = it->second;
  bool r = t.op == uint16_t(Op::OpTypeCooperativeVectorNV);
  if (t.op == uint16_t(Op::OpTypeArray) || t.op == uint16_t(Op::OpTypeRuntimeArray)) r = holds_coopvec(t.elem);
  if (t.op == uint16_t(Op::OpTypeStruct))
    for (Id mem : t.members) r = r || holds_coopvec(mem);
  holds_coopvec_[type_id] = r;
  return r;
}

llvm::Type* Lowerer::coopvec_buffer_type(Id type_id) {
  const TypeInfo& t = type(type_id);
  auto part = [&](Id e) { return holds_coopvec(e) ? coopvec_buffer_type(e) : lane_rep_type(e); };
  switch (static_cast<Op>(t.op)) {
    case Op::OpTypeCooperativeVectorNV:
      return llvm::ArrayType::get(llvm::FixedVectorType::get(scalar_type(t.elem), N), t.count);
    case Op::OpTypeArray:
      return llvm::ArrayType::get(part(t.elem), t.count);
    case Op::OpTypeStruct: {
      std::vector<llvm::Type*> members;
      for (Id mem : t.members) members.push_back(part(mem));
      return llvm::StructType::get(C, members);
    }
    default:
      fail("internal: type id " + std::to_string(type_id) + " holds no cooperative vector");
  }
}

uint64_t Lowerer::coopvec_buffer_bytes(Id type_id) {
  return M->getDataLayout().getTypeAllocSize(coopvec_buffer_type(type_id));
}

llvm::Value* Lowerer::coopvec_buffer(Id id, Id type_id) {
  if (auto it = F.coopvec_buffers.find(id); it != F.coopvec_buffers.end()) return it->second;
  const uint64_t bytes = coopvec_buffer_bytes(type_id);
  const bool local = F.coopvec_local.count(id) > 0;
  if (local) {
    // Local buffers count while live (definition to last use in the block): what stack
    // colouring can fold them into.
    F.coopvec_block_bytes += bytes;
    if (F.coopvec_block_bytes > F.coopvec_peak_bytes) {
      coopvec_frame_bytes += F.coopvec_block_bytes - F.coopvec_peak_bytes;
      F.coopvec_peak_bytes = F.coopvec_block_bytes;
    }
  } else {
    coopvec_frame_bytes += bytes;
  }
  if (coopvec_frame_bytes > kMaxCoopVecFrameBytes)
    fail("the shader's cooperative vectors need more than " + std::to_string(kMaxCoopVecFrameBytes >> 10) +
         " KiB of frame at subgroup size " + std::to_string(N) + " (fewer or shorter vectors, or a smaller subgroup)");
  llvm::AllocaInst* a = entry_alloca(coopvec_buffer_type(type_id), 1, 64);
  if (local) B.CreateLifetimeStart(a, B.getInt64(bytes));
  F.coopvec_buffers[id] = a;
  return a;
}

void Lowerer::plan_coopvec_lifetimes() {
  std::unordered_set<Id> elsewhere;  // used outside the defining block, by a phi or a terminator
  for (uint32_t b = 0; b < F.fn->blocks.size(); ++b)
    for (const Instruction& in : F.fn->blocks[b].body)
      for (uint16_t k : in.id_operands) {
        Id w = in.operands[k];
        auto it = F.block_of.find(w);
        if (it != F.block_of.end() && (it->second != b || is_block_terminator(in.opcode) || in.opcode == uint16_t(Op::OpPhi)))
          elsewhere.insert(w);
      }
  for (const Block& blk : F.fn->blocks)
    for (const Instruction& in : blk.body)
      if (in.result && in.result_type && holds_coopvec(in.result_type) && in.opcode != uint16_t(Op::OpPhi) &&
          !elsewhere.count(in.result))
        F.coopvec_local.insert(in.result);
}

std::vector<std::vector<Id>> Lowerer::coopvec_block_ends(const Block& blk) {
  F.coopvec_block_bytes = 0;
  std::unordered_map<Id, size_t> last;
  for (size_t j = 0; j < blk.body.size(); ++j)
    for (uint16_t k : blk.body[j].id_operands)
      if (F.coopvec_local.count(blk.body[j].operands[k])) last[blk.body[j].operands[k]] = j;
  std::vector<std::vector<Id>> ends(blk.body.size());
  for (const auto& [id, j] : last) ends[j].push_back(id);
  return ends;
}

void Lowerer::end_coopvec_lifetimes(const std::vector<Id>& ids) {
  for (Id id : ids)
    if (auto it = F.coopvec_buffers.find(id); it != F.coopvec_buffers.end()) {
      const uint64_t bytes = coopvec_buffer_bytes(value_type_of(id));
      B.CreateLifetimeEnd(it->second, B.getInt64(bytes));
      F.coopvec_block_bytes -= bytes;
    }
}

llvm::Value* Lowerer::coopvec_component(Id type_id, llvm::Value* buf, llvm::Value* i) {
  return B.CreateInBoundsGEP(coopvec_buffer_type(type_id), buf, {B.getInt32(0), i});
}

void Lowerer::for_each_component(uint32_t count, const std::function<void(llvm::Value*)>& body) {
  llvm::BasicBlock* pre = B.GetInsertBlock();
  llvm::Function* fn = pre->getParent();
  auto* loop = llvm::BasicBlock::Create(C, "cv.loop", fn);
  auto* done = llvm::BasicBlock::Create(C, "cv.done", fn);
  B.CreateBr(loop);
  B.SetInsertPoint(loop);
  llvm::PHINode* i = B.CreatePHI(B.getInt32Ty(), 2);
  i->addIncoming(B.getInt32(0), pre);
  body(i);
  llvm::Value* next = B.CreateAdd(i, B.getInt32(1));
  i->addIncoming(next, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpULT(next, B.getInt32(count)), loop, done);
  B.SetInsertPoint(done);
}

void Lowerer::coopvec_store_component(Id type_id, llvm::Value* buf, llvm::Value* i, llvm::Value* v) {
  llvm::Value* p = coopvec_component(type_id, buf, i);
  llvm::Value* old = B.CreateLoad(v->getType(), p);
  B.CreateStore(B.CreateSelect(mask, v, old), p);
}

void Lowerer::for_each_coopvec_leaf(Id type_id, const std::function<void(llvm::Type*, llvm::Value*)>& leaf) {
  const llvm::DataLayout& dl = M->getDataLayout();
  std::function<void(llvm::Type*, llvm::Value*)> walk = [&](llvm::Type* t, llvm::Value* off) {
    if (t->isVectorTy()) {
      leaf(t, off);
    } else if (auto* st = llvm::dyn_cast<llvm::StructType>(t)) {
      const llvm::StructLayout* sl = dl.getStructLayout(st);
      for (unsigned k = 0; k < st->getNumElements(); ++k)
        walk(st->getElementType(k), B.CreateAdd(off, B.getInt64(sl->getElementOffset(k))));
    } else if (auto* at = llvm::dyn_cast<llvm::ArrayType>(t)) {
      llvm::Type* e = at->getElementType();
      const uint64_t esz = dl.getTypeAllocSize(e);
      const uint64_t n = at->getNumElements();
      if (n <= 2) {
        for (uint64_t i = 0; i < n; ++i) walk(e, B.CreateAdd(off, B.getInt64(i * esz)));
      } else {
        for_each_component(uint32_t(n), [&](llvm::Value* i) {
          walk(e, B.CreateAdd(off, B.CreateMul(B.CreateZExt(i, B.getInt64Ty()), B.getInt64(esz))));
        });
      }
    } else {
      fail("internal: a cooperative vector buffer with a leaf that is not a lane vector");
    }
  };
  walk(coopvec_buffer_type(type_id), B.getInt64(0));
}

void Lowerer::coopvec_copy(Id type_id, llvm::Value* dst, llvm::Value* src, llvm::Value* lanes_mask) {
  if (dst == src) return;
  const bool dst_lanes = dst->getType()->isVectorTy(), src_lanes = src->getType()->isVectorTy();
  if (!lanes_mask && !dst_lanes && !src_lanes) {
    B.CreateMemCpy(dst, llvm::Align(16), src, llvm::Align(16), coopvec_buffer_bytes(type_id));
    return;
  }
  llvm::Value* m = lanes_mask ? lanes_mask : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(B.getInt1Ty(), N));
  llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), N);
  const llvm::DataLayout& dl = M->getDataLayout();
  for_each_coopvec_leaf(type_id, [&](llvm::Type* lane_t, llvm::Value* off) {
    llvm::Type* et = llvm::cast<llvm::VectorType>(lane_t)->getElementType();
    const uint64_t esz = dl.getTypeAllocSize(et);
    // Lane l of a lane vector in a lane's own object is l elements into it (lowerer.h).
    auto lane_addrs = [&](llvm::Value* bases) {
      if (et->isIntegerTy(1)) fail("a per-invocation pointer into an aggregate holding booleans beside cooperative vectors");
      llvm::Value* lane_off = B.CreateMul(B.CreateZExt(lane_index(), i64v), B.CreateVectorSplat(N, B.getInt64(esz)));
      return B.CreateGEP(B.getInt8Ty(), bases, B.CreateAdd(B.CreateVectorSplat(N, off), lane_off));
    };
    const llvm::Align ea(esz);
    llvm::Value* v;
    if (src_lanes) v = B.CreateMaskedGather(lane_t, lane_addrs(src), ea, m, llvm::PoisonValue::get(lane_t));
    else v = B.CreateLoad(lane_t, B.CreateGEP(B.getInt8Ty(), src, off));
    if (dst_lanes) {
      B.CreateMaskedScatter(v, lane_addrs(dst), ea, m);
    } else {
      llvm::Value* d = B.CreateGEP(B.getInt8Ty(), dst, off);
      B.CreateStore(B.CreateSelect(m, v, B.CreateLoad(lane_t, d)), d);
    }
  });
}

llvm::Constant* Lowerer::coopvec_constant(const Instruction& g) {
  llvm::Constant* init = coopvec_initializer(g);
  auto* gv = new llvm::GlobalVariable(*M, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init, "coopvec_const");
  gv->setAlignment(llvm::Align(64));
  return gv;
}

llvm::Constant* Lowerer::coopvec_initializer(const Instruction& g) {
  const TypeInfo& t = type(g.result_type);
  if (!is_coopvec(g.result_type)) {
    // An array or struct: its constituents' initializers in place (lowerer.h).
    llvm::Type* bt = coopvec_buffer_type(g.result_type);
    auto part = [&](Id c) -> llvm::Constant* {
      const Instruction* cg = m.global(c);
      if (!cg) fail("composite constant with a constituent that is not a constant", &g);
      if (holds_coopvec(cg->result_type)) return coopvec_initializer(*cg);
      bool saved = scalar_mode;
      scalar_mode = false;
      auto* k = llvm::dyn_cast<llvm::Constant>(constant(c));
      scalar_mode = saved;
      if (!k) fail("composite constant with a constituent that is not a constant", &g);
      return k;
    };
    std::vector<Id> parts;
    switch (static_cast<Op>(g.opcode)) {
      case Op::OpConstantNull:
      case Op::OpUndef:
        return llvm::Constant::getNullValue(bt);
      case Op::OpConstantComposite:
      case Op::OpSpecConstantComposite:
        parts = g.operands;
        break;
      case Op::OpConstantCompositeReplicateEXT:
      case Op::OpSpecConstantCompositeReplicateEXT:
        if (g.operands.size() != 1) fail("replicated composite constant with other than one constituent", &g);
        parts.assign(t.op == uint16_t(Op::OpTypeArray) ? t.count : t.members.size(), g.operands[0]);
        break;
      default:
        fail("constants of this kind holding cooperative vectors are not supported", &g);
    }
    const size_t want = t.op == uint16_t(Op::OpTypeArray) ? t.count : t.members.size();
    if (parts.size() != want) fail("composite constant with the wrong number of constituents", &g);
    std::vector<llvm::Constant*> ks;
    for (size_t k = 0; k < parts.size(); ++k) {
      Id want_t = t.op == uint16_t(Op::OpTypeArray) ? t.elem : t.members[k];
      if (type_of(parts[k]) != want_t) fail("composite constant with a constituent of the wrong type", &g);
      ks.push_back(part(parts[k]));
    }
    if (auto* at = llvm::dyn_cast<llvm::ArrayType>(bt)) return llvm::ConstantArray::get(at, ks);
    return llvm::ConstantStruct::get(llvm::cast<llvm::StructType>(bt), ks);
  }
  auto* bt = llvm::cast<llvm::ArrayType>(coopvec_buffer_type(g.result_type));
  llvm::Constant* init = nullptr;
  auto component = [&](Id id) {
    bool saved = scalar_mode;
    scalar_mode = true;
    auto* c = llvm::dyn_cast<llvm::Constant>(constant(id));
    scalar_mode = saved;
    if (!c || c->getType() != scalar_type(t.elem) || type_of(id) != t.elem)
      fail("cooperative vector constant with a constituent that is not a constant of its component type", &g);
    return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(N), c);
  };
  switch (static_cast<Op>(g.opcode)) {
    case Op::OpConstantNull:
    case Op::OpUndef:
      init = llvm::Constant::getNullValue(bt);
      break;
    case Op::OpConstantComposite:
    case Op::OpSpecConstantComposite: {
      if (g.operands.size() != t.count) fail("cooperative vector constant with the wrong number of constituents", &g);
      std::vector<llvm::Constant*> parts;
      for (Id c : g.operands) parts.push_back(component(c));
      init = llvm::ConstantArray::get(bt, parts);
      break;
    }
    case Op::OpConstantCompositeReplicateEXT:
    case Op::OpSpecConstantCompositeReplicateEXT:
      if (g.operands.size() != 1) fail("replicated composite constant with other than one constituent", &g);
      init = llvm::ConstantArray::get(bt, std::vector<llvm::Constant*>(t.count, component(g.operands[0])));
      break;
    default:
      fail("cooperative vector constants of this kind are not supported", &g);
  }
  return init;
}

// ---- the component view ---------------------------------------------------------------------

llvm::Value* Lowerer::component_view(const Instruction& sub, const std::vector<std::pair<Id, Val>>& bound) {
  // Each bound id temporarily reads as a value of its component type (sub names the
  // types: bound ids take the type of sub's result or of the scalar they stand for),
  // so check_types and the scalar lowering see an ordinary instruction on lane vectors.
  struct Saved {
    Id id;
    std::optional<Val> value;
    std::optional<Id> vtype;
  };
  std::vector<Saved> saved;
  auto save = [&](Id id) {
    Saved s{id, std::nullopt, std::nullopt};
    if (auto it = F.values.find(id); it != F.values.end()) s.value = it->second;
    if (auto it = F.value_types.find(id); it != F.value_types.end()) s.vtype = it->second;
    saved.push_back(s);
  };
  for (const auto& b : bound) save(b.first);
  save(sub.result);
  for (const auto& b : bound) {
    F.values[b.first] = b.second;
    Id t = type_of(b.first);
    F.value_types[b.first] = is_coopvec(t) ? type(t).elem : t;
  }
  F.value_types[sub.result] = sub.result_type;
  struct Modes {
    Lowerer& L;
    bool scalar, raw;
    ~Modes() {
      L.scalar_mode = scalar;
      L.raw_define = raw;
    }
  } modes{*this, scalar_mode, raw_define};
  scalar_mode = false;
  raw_define = true;  // define() records the lane vector and nothing else
  check_types(sub);
  bool ok = lower_arith(sub) || lower_conversion(sub) || lower_glsl(sub) || lower_composite(sub);
  if (!ok) fail("instruction is not supported on cooperative vectors", &sub);
  auto it = F.values.find(sub.result);
  if (it == F.values.end()) fail("internal: no result from the component view", &sub);
  llvm::Value* r = it->second.v;
  if (it->second.uniform) r = B.CreateVectorSplat(N, r);
  F.values.erase(it);
  for (const Saved& s : saved) {
    if (s.value) F.values[s.id] = *s.value;
    else F.values.erase(s.id);
    if (s.vtype) F.value_types[s.id] = *s.vtype;
    else F.value_types.erase(s.id);
  }
  F.splats.clear();  // some were made for the bound ids, or inside the loop
  return r;
}

void Lowerer::lower_coopvec_elementwise(const Instruction& in) {
  const Id rt = in.result_type;
  const TypeInfo& t = type(rt);
  Instruction sub = in;
  sub.result_type = t.elem;
  // OpVectorTimesScalar is an OpFMul of each component by the scalar.
  if (in.opcode == uint16_t(Op::OpVectorTimesScalar)) sub.opcode = uint16_t(Op::OpFMul);
  std::vector<std::pair<Id, llvm::Value*>> vec_operands;  // id, buffer
  for (uint16_t k : in.id_operands) {
    Id id = in.operands[k];
    if (is_coopvec(value_type_of(id))) vec_operands.push_back({id, value_v(id).v});
  }
  llvm::Value* out = coopvec_buffer(in.result, rt);
  for_each_component(t.count, [&](llvm::Value* i) {
    std::vector<std::pair<Id, Val>> bound;
    for (auto& [id, buf] : vec_operands) {
      Id vt = type_of(id);
      bound.push_back({id, {B.CreateLoad(coopvec_buffer_type(vt)->getArrayElementType(), coopvec_component(vt, buf, i)), false}});
    }
    coopvec_store_component(rt, out, i, component_view(sub, bound));
  });
  define_v(in.result, {out, true});
}

// ---- dispatch --------------------------------------------------------------------------------

namespace {
bool elementwise_opcode(uint16_t op) {
  switch (static_cast<Op>(op)) {
    case Op::OpSNegate: case Op::OpFNegate: case Op::OpIAdd: case Op::OpFAdd: case Op::OpISub: case Op::OpFSub:
    case Op::OpFMul: case Op::OpIMul: case Op::OpFDiv: case Op::OpSDiv: case Op::OpUDiv: case Op::OpVectorTimesScalar:
    case Op::OpShiftRightLogical: case Op::OpShiftRightArithmetic: case Op::OpShiftLeftLogical:
    case Op::OpBitwiseOr: case Op::OpBitwiseXor: case Op::OpBitwiseAnd: case Op::OpNot:
    case Op::OpConvertFToU: case Op::OpConvertFToS: case Op::OpConvertSToF: case Op::OpConvertUToF:
    case Op::OpUConvert: case Op::OpSConvert: case Op::OpFConvert: case Op::OpBitcast: case Op::OpSelect:
    case Op::OpExtInst:
      return true;
    default:
      return false;
  }
}
}  // namespace

bool Lowerer::lower_coopvec(const Instruction& in) {
  bool involved = in.result_type && holds_coopvec(in.result_type);
  for (uint16_t k : in.id_operands) involved = involved || holds_coopvec(value_type_of(in.operands[k]));
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpCooperativeVectorLoadNV: case Op::OpCooperativeVectorStoreNV:
      return lower_coopvec_memory(in);
    case Op::OpCooperativeVectorMatrixMulNV: case Op::OpCooperativeVectorMatrixMulAddNV:
    case Op::OpCooperativeVectorOuterProductAccumulateNV: case Op::OpCooperativeVectorReduceSumAccumulateNV:
      return lower_coopvec_matmul(in);
    case Op::OpVariable: case Op::OpAccessChain: case Op::OpInBoundsAccessChain: case Op::OpLoad: case Op::OpStore:
    case Op::OpCopyMemory:
      return lower_coopvec_variable(in);
    default:
      break;
  }
  if (!involved) return false;
  if (lower_coopvec_aggregate(in) || lower_coopvec_composite(in)) return true;
  if (!elementwise_opcode(in.opcode)) fail("instruction does not take cooperative vector operands", &in);
  lower_coopvec_elementwise(in);
  return true;
}

}  // namespace coopvk::jit
