// Variables, access chains, loads and stores (see lowerer.h for the memory model).
#include <llvm/IR/Constants.h>

#include "lowerer.h"
#include "spirv_enums.h"

namespace coopvk::jit {

namespace {
constexpr uint64_t kDispatchSetsOffset = 0;   // DispatchState::sets
constexpr uint64_t kDispatchPushOffset = 64;  // DispatchState::push_constants
static_assert(offsetof(DispatchState, push_constants) == kDispatchPushOffset);
static_assert(offsetof(WorkgroupState, shared_memory) == 16);
}  // namespace

void Lowerer::plan_globals() {
  uint64_t shared = 0;
  for (const Instruction& g : m.globals) {
    if (g.opcode != uint16_t(spv::Op::OpVariable)) continue;
    uint32_t sc = g.operands.at(0);
    if (type(g.result_type).op != uint16_t(spv::Op::OpTypePointer) || type(g.result_type).storage != sc ||
        !type(g.result_type).elem)
      fail("variable whose type is not a pointer to its storage class", &g);
    Id pointee = type(g.result_type).elem;
    switch (static_cast<spv::StorageClass>(sc)) {
      case spv::StorageClass::Private:
      case spv::StorageClass::Input: {
        MemLayout l = layout(pointee);
        uint64_t lane = (l.size + 15) / 16 * 16;
        global_vars[g.result] = {sc, private_block_bytes, lane};
        private_block_bytes += lane * N;
        break;
      }
      case spv::StorageClass::Workgroup: {
        MemLayout l = layout(pointee);
        uint32_t align = std::max<uint32_t>(l.align, 16);
        shared = (shared + align - 1) / align * align;
        global_vars[g.result] = {sc, shared, 0};
        shared += l.size;
        break;
      }
      case spv::StorageClass::StorageBuffer:
      case spv::StorageClass::Uniform:
      case spv::StorageClass::PushConstant:
        break;  // reached through the DispatchState
      default:
        fail("variables in storage class " + std::to_string(sc) + " are not supported", &g);
    }
  }
  shared_memory_bytes = uint32_t(shared);
  if (shared > 65536) fail("the shader uses " + std::to_string(shared) + " bytes of workgroup memory; the limit is 65536");
}

llvm::Value* Lowerer::offset_ptrs(llvm::Value* ptrs, llvm::Value* byte_offsets) {
  return B.CreateGEP(B.getInt8Ty(), ptrs, byte_offsets);
}

llvm::Value* Lowerer::offset_ptrs(llvm::Value* ptrs, uint64_t byte_offset) {
  if (!byte_offset) return ptrs;
  return B.CreateGEP(B.getInt8Ty(), ptrs, B.getInt64(byte_offset));
}

llvm::Value* Lowerer::index_to_i64(llvm::Value* idx) {
  auto* vt = llvm::cast<llvm::VectorType>(idx->getType());
  if (vt->getElementType()->getIntegerBitWidth() == 64) return idx;
  // Indices are treated as signed (SPIR-V: "Indexes are treated as signed").
  return B.CreateSExt(idx, lanes(B.getInt64Ty()));
}

llvm::Value* Lowerer::descriptor_field(const Instruction& var, llvm::Value* idx, bool range) {
  const Decoration *ds_dec = nullptr, *bind_dec = nullptr;
  if (!m.has_decoration(var.result, uint32_t(spv::Decoration::DescriptorSet), &ds_dec) ||
      !m.has_decoration(var.result, uint32_t(spv::Decoration::Binding), &bind_dec) ||
      ds_dec->args.empty() || bind_dec->args.empty())
    fail("buffer variable without DescriptorSet/Binding", &var);
  uint32_t set = ds_dec->args[0], binding = bind_dec->args[0];
  if (set >= kMaxDescriptorSets || binding >= opts.layout.sets[set].bindings.size() ||
      !opts.layout.sets[set].bindings[binding].present)
    fail("set " + std::to_string(set) + " binding " + std::to_string(binding) +
         " is not in the pipeline layout", &var);
  const BindingInfo& bi = opts.layout.sets[set].bindings[binding];
  llvm::Value* ds = ctx_field(kCtxDispatch);
  llvm::Value* set_array = B.CreateLoad(B.getPtrTy(), B.CreateConstGEP1_64(B.getInt8Ty(), ds, kDispatchSetsOffset + 8 * set));
  uint64_t field = range ? 8 : 0;
  if (!idx) {
    llvm::Value* p = B.CreateConstGEP1_64(B.getInt8Ty(), set_array, 16ull * bi.first + field);
    llvm::Type* t = range ? static_cast<llvm::Type*>(B.getInt64Ty()) : B.getPtrTy();
    return splat(B.CreateLoad(t, p));
  }
  // Descriptor arrays: a per-lane element index (clamped so a bad index reads the last
  // descriptor instead of memory outside the set).
  llvm::Value* i64 = index_to_i64(idx);
  i64 = B.CreateSelect(B.CreateICmpULT(i64, splat(B.getInt64(bi.count))), i64, splat(B.getInt64(bi.count - 1)));
  llvm::Value* offs = B.CreateAdd(B.CreateMul(i64, splat(B.getInt64(16))), splat(B.getInt64(16ull * bi.first + field)));
  llvm::Value* addrs = offset_ptrs(splat(set_array), offs);
  llvm::Type* t = range ? static_cast<llvm::Type*>(lanes(B.getInt64Ty())) : lanes(B.getPtrTy());
  return B.CreateMaskedGather(t, addrs, llvm::Align(8), mask);
}

llvm::Value* Lowerer::buffer_variable_pointer(const Instruction& var) {
  uint32_t sc = var.operands.at(0);
  if (sc == uint32_t(spv::StorageClass::PushConstant)) {
    llvm::Value* ds = ctx_field(kCtxDispatch);
    return splat(B.CreateLoad(B.getPtrTy(), B.CreateConstGEP1_64(B.getInt8Ty(), ds, kDispatchPushOffset)));
  }
  Id pointee = type(var.result_type).elem;
  auto op = static_cast<spv::Op>(type(pointee).op);
  if (op == spv::Op::OpTypeArray || op == spv::Op::OpTypeRuntimeArray)
    fail("a descriptor array is used without selecting an element", &var);
  return descriptor_field(var, nullptr, false);
}

// ---- loads and stores --------------------------------------------------------------------

llvm::Value* Lowerer::load_rep(Id t, llvm::Value* ptrs, llvm::Value* m_lanes, uint32_t align_hint) {
  const TypeInfo& ti = type(t);
  switch (static_cast<spv::Op>(ti.op)) {
    case spv::Op::OpTypeBool: {
      llvm::Value* bytes = B.CreateMaskedGather(lanes(B.getInt8Ty()), ptrs, llvm::Align(1), m_lanes);
      return B.CreateICmpNE(bytes, llvm::Constant::getNullValue(bytes->getType()));
    }
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypePointer: {
      MemLayout l = layout(t);
      llvm::Align align(std::min<uint32_t>(l.align, align_hint ? align_hint : l.align));
      if (auto a = affine(ptrs)) {
        // Blocks run only with some lane active, so a uniform address is a valid one.
        if (a->stride == 0) return splat(B.CreateAlignedLoad(scalar_type(t), a->base, align));
        if (uint64_t(a->stride) == l.size)
          return B.CreateMaskedLoad(rep_type(t), a->base, align, m_lanes, llvm::PoisonValue::get(rep_type(t)));
      }
      return load_lanes(scalar_type(t), ptrs, align, m_lanes);
    }
    case spv::Op::OpTypeVector:
    case spv::Op::OpTypeMatrix:
    case spv::Op::OpTypeArray:
    case spv::Op::OpTypeStruct: {
      llvm::Value* out = llvm::PoisonValue::get(rep_type(t));
      uint32_t n = ti.op == uint16_t(spv::Op::OpTypeStruct) ? uint32_t(ti.members.size()) : ti.count;
      for (uint32_t i = 0; i < n; ++i) {
        Id et;
        uint64_t off;
        if (ti.op == uint16_t(spv::Op::OpTypeStruct)) {
          et = ti.members[i];
          off = member_offset(t, i);
          if (static_cast<spv::Op>(type(et).op) == spv::Op::OpTypeMatrix && matrix_stride(t, i) &&
              matrix_stride(t, i) != layout(type(et).elem).size)
            fail("matrix member with a MatrixStride other than its column size is not supported yet");
        } else if (ti.op == uint16_t(spv::Op::OpTypeArray)) {
          et = ti.elem;
          off = i * array_stride(t);
        } else {
          et = ti.elem;
          off = i * layout(et).size;
        }
        out = B.CreateInsertValue(out, load_rep(et, offset_ptrs(ptrs, off), m_lanes, align_hint), i);
      }
      return out;
    }
    default:
      fail("loads of type id " + std::to_string(t) + " are not supported");
  }
}

void Lowerer::store_rep(Id t, llvm::Value* ptrs, llvm::Value* v, llvm::Value* m_lanes, uint32_t align_hint) {
  const TypeInfo& ti = type(t);
  switch (static_cast<spv::Op>(ti.op)) {
    case spv::Op::OpTypeBool:
      B.CreateMaskedScatter(B.CreateZExt(v, lanes(B.getInt8Ty())), ptrs, llvm::Align(1), m_lanes);
      return;
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypePointer: {
      MemLayout l = layout(t);
      llvm::Align align(std::min<uint32_t>(l.align, align_hint ? align_hint : l.align));
      if (auto a = affine(ptrs); a && a->stride > 0 && uint64_t(a->stride) == l.size) {
        B.CreateMaskedStore(v, a->base, align, m_lanes);
        return;
      }
      store_lanes(v, ptrs, align, m_lanes);
      return;
    }
    case spv::Op::OpTypeVector:
    case spv::Op::OpTypeMatrix:
    case spv::Op::OpTypeArray:
    case spv::Op::OpTypeStruct: {
      uint32_t n = ti.op == uint16_t(spv::Op::OpTypeStruct) ? uint32_t(ti.members.size()) : ti.count;
      for (uint32_t i = 0; i < n; ++i) {
        Id et;
        uint64_t off;
        if (ti.op == uint16_t(spv::Op::OpTypeStruct)) {
          et = ti.members[i];
          off = member_offset(t, i);
        } else if (ti.op == uint16_t(spv::Op::OpTypeArray)) {
          et = ti.elem;
          off = i * array_stride(t);
        } else {
          et = ti.elem;
          off = i * layout(et).size;
        }
        store_rep(et, offset_ptrs(ptrs, off), B.CreateExtractValue(v, i), m_lanes, align_hint);
      }
      return;
    }
    default:
      fail("stores of type id " + std::to_string(t) + " are not supported");
  }
}

namespace {
// Memory operands: (mask, [Aligned literal], ...). Only the alignment matters here.
uint32_t aligned_operand(const std::vector<uint32_t>& o, size_t first) {
  if (o.size() <= first) return 0;
  uint32_t bits = o[first];
  if (bits & uint32_t(spv::MemoryAccessMask::Aligned)) {
    size_t k = first + 1;
    if (bits & uint32_t(spv::MemoryAccessMask::Volatile)) {}  // no operand
    return o.size() > k ? o[k] : 0;
  }
  return 0;
}
}  // namespace

bool Lowerer::lower_memory_op(const Instruction& in) {
  const auto& o = in.operands;
  switch (static_cast<spv::Op>(in.opcode)) {
    case spv::Op::OpVariable: {
      uint32_t sc = o.at(0);
      if (sc != uint32_t(spv::StorageClass::Function)) fail("local variable outside Function storage", &in);
      Id pointee = type(in.result_type).elem;
      if (auto it = F.promoted.find(in.result); it != F.promoted.end()) {
        if (o.size() > 1) {
          llvm::Value* old = B.CreateLoad(it->second->getAllocatedType(), it->second);
          B.CreateStore(select_rep(mask, value(o[1]), old), it->second);
        }
        return true;
      }
      MemLayout l = layout(pointee);
      uint64_t lane_size = std::max<uint64_t>((l.size + 15) / 16 * 16, 16);
      llvm::AllocaInst* mem = entry_alloca(B.getInt8Ty(), lane_size * N, 64);
      llvm::Value* offs = B.CreateMul(B.CreateZExt(lane_index(), lanes(B.getInt64Ty())), splat(B.getInt64(lane_size)));
      llvm::Value* ptrs = offset_ptrs(splat(mem), offs);
      if (o.size() > 1) store_rep(pointee, ptrs, value(o[1]), mask, 0);
      define(in.result, ptrs);
      return true;
    }
    case spv::Op::OpAccessChain:
    case spv::Op::OpInBoundsAccessChain:
    case spv::Op::OpPtrAccessChain:
    case spv::Op::OpInBoundsPtrAccessChain: {
      bool ptr_chain = in.opcode == uint16_t(spv::Op::OpPtrAccessChain) ||
                       in.opcode == uint16_t(spv::Op::OpInBoundsPtrAccessChain);
      Id base_id = o.at(0);
      size_t first_index = 1;
      llvm::Value* ptrs = nullptr;
      Id cur;
      const Instruction* g = m.global(base_id);
      if (g && g->opcode == uint16_t(spv::Op::OpVariable) && !global_vars.count(base_id) &&
          (g->operands.at(0) == uint32_t(spv::StorageClass::StorageBuffer) ||
           g->operands.at(0) == uint32_t(spv::StorageClass::Uniform))) {
        Id pointee = type(g->result_type).elem;
        auto pop = static_cast<spv::Op>(type(pointee).op);
        if (pop == spv::Op::OpTypeArray || pop == spv::Op::OpTypeRuntimeArray) {
          // Descriptor array: the first index picks the descriptor.
          if (o.size() < 2) fail("access chain into a descriptor array without an index", &in);
          ptrs = descriptor_field(*g, value(o[1]), false);
          cur = type(pointee).elem;
          first_index = 2;
        } else {
          ptrs = buffer_variable_pointer(*g);
          cur = pointee;
        }
      } else {
        ptrs = value(base_id);
        Id base_type = type_of(base_id);
        cur = type(base_type).elem;
        if (ptr_chain) {
          // Element index over the pointer: ArrayStride of the pointer type.
          const Decoration* d = nullptr;
          uint64_t stride = m.has_decoration(base_type, uint32_t(spv::Decoration::ArrayStride), &d) && !d->args.empty()
                                ? d->args[0] : layout(cur).size;
          llvm::Value* idx = index_to_i64(value(o.at(1)));
          ptrs = offset_ptrs(ptrs, B.CreateMul(idx, splat(B.getInt64(stride))));
          first_index = 2;
        }
      }
      uint64_t const_off = 0;
      llvm::Value* dyn_off = nullptr;
      for (size_t k = first_index; k < o.size(); ++k) {
        const TypeInfo& t = type(cur);
        auto top = static_cast<spv::Op>(t.op);
        if (top == spv::Op::OpTypeStruct) {
          uint64_t member = constant_u64(o[k]);
          if (member >= t.members.size()) fail("struct member index out of range", &in);
          const_off += member_offset(cur, uint32_t(member));
          cur = t.members[member];
          continue;
        }
        uint64_t stride;
        if (top == spv::Op::OpTypeArray || top == spv::Op::OpTypeRuntimeArray) stride = array_stride(cur);
        else if (top == spv::Op::OpTypeVector || top == spv::Op::OpTypeMatrix) stride = layout(t.elem).size;
        else fail("access chain indexes into a non-composite", &in);
        cur = t.elem;
        if (is_constant(o[k])) {
          const_off += constant_u64(o[k]) * stride;
        } else {
          llvm::Value* d = B.CreateMul(index_to_i64(value(o[k])), splat(B.getInt64(stride)));
          dyn_off = dyn_off ? B.CreateAdd(dyn_off, d) : d;
        }
      }
      if (dyn_off) ptrs = offset_ptrs(ptrs, dyn_off);
      define(in.result, offset_ptrs(ptrs, const_off));
      return true;
    }
    case spv::Op::OpLoad: {
      if (auto it = F.forwarded.find(o.at(0)); it != F.forwarded.end()) {
        define(in.result, value(it->second));
        return true;
      }
      if (auto it = F.promoted.find(o.at(0)); it != F.promoted.end()) {
        define(in.result, B.CreateLoad(it->second->getAllocatedType(), it->second));
        return true;
      }
      if (llvm::Value* direct = direct_builtin_load(o.at(0), in.result_type)) {
        define(in.result, direct);
        return true;
      }
      define(in.result, load_rep(in.result_type, value(o.at(0)), mask, aligned_operand(o, 1)));
      return true;
    }
    case spv::Op::OpStore: {
      Id ptr = o.at(0);
      if (auto it = F.promoted.find(ptr); it != F.promoted.end()) {
        // Inactive lanes keep their own values.
        llvm::Value* old = B.CreateLoad(it->second->getAllocatedType(), it->second);
        B.CreateStore(select_rep(mask, value(o.at(1)), old), it->second);
        return true;
      }
      Id ptr_type = type_of(ptr);
      store_rep(type(ptr_type).elem, value(ptr), value(o.at(1)), mask, aligned_operand(o, 2));
      return true;
    }
    case spv::Op::OpArrayLength: {
      // Length of the runtime array member of a buffer block: (range - offset) / stride.
      const Instruction* var = m.global(o.at(0));
      llvm::Value* range = nullptr;
      Id block_type = 0;
      if (var && var->opcode == uint16_t(spv::Op::OpVariable)) {
        range = descriptor_field(*var, nullptr, true);
        block_type = type(var->result_type).elem;
      } else if (auto it = F.block_of.find(o.at(0)); it != F.block_of.end()) {
        for (const Instruction& d : F.fn->blocks[it->second].body)
          if (d.result == o[0] && (d.opcode == uint16_t(spv::Op::OpAccessChain) ||
                                   d.opcode == uint16_t(spv::Op::OpInBoundsAccessChain)) &&
              d.operands.size() == 2) {
            const Instruction* arr = m.global(d.operands[0]);
            if (arr && arr->opcode == uint16_t(spv::Op::OpVariable)) {
              range = descriptor_field(*arr, value(d.operands[1]), true);
              block_type = type(d.result_type).elem;
            }
          }
      }
      if (!range) fail("OpArrayLength of a pointer that is not a buffer block variable", &in);
      uint32_t member = o.at(1);
      const TypeInfo& bt = type(block_type);
      if (member >= bt.members.size()) fail("OpArrayLength member out of range", &in);
      uint64_t off = member_offset(block_type, member);
      uint64_t stride = array_stride(bt.members[member]);
      llvm::Value* avail = B.CreateSub(range, splat(B.getInt64(off)));
      avail = B.CreateSelect(B.CreateICmpUGT(range, splat(B.getInt64(off))), avail, splat(B.getInt64(0)));
      define(in.result, B.CreateTrunc(B.CreateUDiv(avail, splat(B.getInt64(stride))), lanes(B.getInt32Ty())));
      return true;
    }
    case spv::Op::OpCopyMemory: {
      Id dst = o.at(0), src = o.at(1);
      auto pointee_of = [&](Id p) { return type(type_of(p)).elem; };
      Id t = pointee_of(src);
      store_rep(pointee_of(dst), value(dst), load_rep(t, value(src), mask, 0), mask, 0);
      return true;
    }
    case spv::Op::OpConvertUToPtr:
      define(in.result, B.CreateIntToPtr(value(o.at(0)), rep_type(in.result_type)));
      return true;
    case spv::Op::OpConvertPtrToU:
      define(in.result, B.CreatePtrToInt(value(o.at(0)), rep_type(in.result_type)));
      return true;
    default:
      return false;
  }
}

}  // namespace coopvk::jit
