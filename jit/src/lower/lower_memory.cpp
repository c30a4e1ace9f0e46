// Variables, access chains, loads and stores (see lowerer.h for the memory model).
#include <cstring>

#include <llvm/IR/Constants.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

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
        if (sc == uint32_t(spv::StorageClass::Private) && is_uniform(g.result)) {
          // Rep layout: the variable's lane rep, at a 64-byte aligned offset.
          private_block_bytes = (private_block_bytes + 63) / 64 * 64;
          global_vars[g.result] = {sc, private_block_bytes, 0, true};
          rep_globals.insert(g.result);
          private_block_bytes += rep_size_bound(pointee);
          break;
        }
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
  if (shared > 65536) fail("the shader uses " + std::to_string(shared) + " bytes of workgroup memory; the limit is 65536");
  if (wg_scratch_bytes) {
    // Where split workgroup-scope matrices are gathered (lower_coopmat_workgroup.cpp).
    wg_scratch_offset = (shared + 63) / 64 * 64;
    shared = wg_scratch_offset + wg_scratch_bytes;
  }
  shared_memory_bytes = uint32_t(shared);
}

uint64_t Lowerer::rep_size_bound(Id t) {
  // The size LLVM gives the lane rep under any data layout is at most this: every leaf
  // vector rounded up to a power of two (its largest possible alignment).
  const TypeInfo& ti = type(t);
  if (ti.op == uint16_t(spv::Op::OpTypeStruct)) {
    uint64_t n = 0;
    for (Id mem : ti.members) n += rep_size_bound(mem);
    return n;
  }
  if (ti.op == uint16_t(spv::Op::OpTypeArray) || ti.op == uint16_t(spv::Op::OpTypeVector) ||
      ti.op == uint16_t(spv::Op::OpTypeMatrix))
    return uint64_t(ti.count) * rep_size_bound(ti.elem);
  if (is_coopvec(t)) return coopvec_buffer_bytes(t);
  if (is_matrix(t)) {
    // [rows x <cols x T>] (lower_coopmat.cpp), each row rounded up like a leaf vector.
    uint64_t row = uint64_t(ti.cols) * layout(ti.elem).size, p = 1;
    while (p < row) p <<= 1;
    return uint64_t(ti.rows) * p;
  }
  uint64_t bytes = ti.op == uint16_t(spv::Op::OpTypeBool) ? 1 : layout(t).size;
  uint64_t v = bytes * N, p = 1;
  while (p < v) p <<= 1;
  return p;
}

llvm::Value* Lowerer::offset_ptrs(llvm::Value* ptrs, llvm::Value* byte_offsets) {
  return B.CreateGEP(B.getInt8Ty(), ptrs, byte_offsets);
}

llvm::Value* Lowerer::offset_ptrs(llvm::Value* ptrs, uint64_t byte_offset) {
  if (!byte_offset) return ptrs;
  return B.CreateGEP(B.getInt8Ty(), ptrs, B.getInt64(byte_offset));
}

llvm::Value* Lowerer::index_to_i64(llvm::Value* idx) {
  if (idx->getType()->getScalarType()->getIntegerBitWidth() == 64) return idx;
  // Indices are treated as signed (SPIR-V: "Indexes are treated as signed"). A uniform
  // index stays scalar.
  llvm::Type* i64 = B.getInt64Ty();
  return B.CreateSExt(idx, idx->getType()->isVectorTy() ? lanes(i64) : i64);
}

Val Lowerer::descriptor_field(const Instruction& var, const Val* idx, bool range) {
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
  invariant(set_array);
  uint64_t field = range ? 8 : 0;
  llvm::Type* t = range ? static_cast<llvm::Type*>(B.getInt64Ty()) : B.getPtrTy();
  if (!idx) {
    llvm::Value* d = B.CreateLoad(t, B.CreateConstGEP1_64(B.getInt8Ty(), set_array, 16ull * bi.first + field));
    invariant(d);
    return {d, true};
  }
  // Descriptor arrays: the element index is clamped, so a bad index reads the last
  // descriptor instead of memory outside the set. A uniform index is one load.
  llvm::Value* i64 = index_to_i64(idx->v);
  auto k64 = [&](uint64_t v) -> llvm::Value* {
    return idx->uniform ? B.getInt64(v) : B.CreateVectorSplat(N, B.getInt64(v));
  };
  i64 = B.CreateSelect(B.CreateICmpULT(i64, k64(bi.count)), i64, k64(bi.count - 1));
  llvm::Value* offs = B.CreateAdd(B.CreateMul(i64, k64(16)), k64(16ull * bi.first + field));
  if (idx->uniform) {
    llvm::Value* d = B.CreateLoad(t, B.CreateGEP(B.getInt8Ty(), set_array, offs));
    invariant(d);
    return {d, true};
  }
  llvm::Value* addrs = B.CreateGEP(B.getInt8Ty(), B.CreateVectorSplat(N, set_array), offs);
  return {B.CreateMaskedGather(llvm::FixedVectorType::get(t, N), addrs, llvm::Align(8), mask), false};
}

llvm::Value* Lowerer::buffer_variable_pointer(const Instruction& var) {
  uint32_t sc = var.operands.at(0);
  if (sc == uint32_t(spv::StorageClass::PushConstant)) {
    llvm::Value* ds = ctx_field(kCtxDispatch);
    llvm::Value* p = B.CreateLoad(B.getPtrTy(), B.CreateConstGEP1_64(B.getInt8Ty(), ds, kDispatchPushOffset));
    invariant(p);
    return p;
  }
  Id pointee = type(var.result_type).elem;
  auto op = static_cast<spv::Op>(type(pointee).op);
  if (op == spv::Op::OpTypeArray || op == spv::Op::OpTypeRuntimeArray)
    fail("a descriptor array is used without selecting an element", &var);
  return descriptor_field(var, nullptr, false).v;
}

// ---- robust buffer access ----------------------------------------------------------------

std::optional<Lowerer::Bounds> Lowerer::bounds_of(Id pointer, bool matrix) {
  if (!opts.robust_buffer_access && !(matrix && opts.robust_matrix_access)) return std::nullopt;
  const Instruction* var = nullptr;
  Id index = 0;
  if (auto it = F.bounds.find(pointer); it != F.bounds.end()) {
    var = it->second.first;
    index = it->second.second;
  } else if (const Instruction* g = m.global(pointer);
             g && g->opcode == uint16_t(spv::Op::OpVariable) && !global_vars.count(pointer) &&
             (g->operands.at(0) == uint32_t(spv::StorageClass::StorageBuffer) ||
              g->operands.at(0) == uint32_t(spv::StorageClass::Uniform))) {
    var = g;  // the whole block through the variable itself
  }
  if (!var) return std::nullopt;
  Val idx;
  if (index) idx = value_v(index);
  return Bounds{descriptor_field(*var, index ? &idx : nullptr, false), descriptor_field(*var, index ? &idx : nullptr, true)};
}

llvm::Value* Lowerer::in_bounds(llvm::Value* addr, uint64_t size) {
  // Vulkan spec, "Robust Buffer Access": an access is out of bounds unless all its bytes
  // lie in [base, base + range). Unsigned: an address below base wraps to a huge offset.
  bool lanes_out = addr->getType()->isVectorTy() || !checking->base.uniform || !checking->range.uniform;
  auto widen = [&](llvm::Value* v) { return lanes_out && !v->getType()->isVectorTy() ? B.CreateVectorSplat(N, v) : v; };
  llvm::Type* i64 = B.getInt64Ty();
  llvm::Type* t = lanes_out ? llvm::FixedVectorType::get(i64, N) : i64;
  llvm::Value* a = B.CreatePtrToInt(widen(addr), t);
  llvm::Value* base = B.CreatePtrToInt(widen(checking->base.v), t);
  llvm::Value* range = widen(checking->range.v);
  llvm::Value* sz = lanes_out ? B.CreateVectorSplat(N, B.getInt64(size)) : static_cast<llvm::Value*>(B.getInt64(size));
  llvm::Value* off = B.CreateSub(a, base);
  return B.CreateAnd(B.CreateICmpUGE(range, sz), B.CreateICmpULE(off, B.CreateSub(range, sz)));
}

llvm::Value* Lowerer::safe_address(llvm::Value* addr, uint64_t size, bool store) {
  if (!checking) return addr;
  if (!F.zero_slot) {
    llvm::IRBuilder<> eb(F.entry, F.entry->begin());
    F.zero_slot = eb.CreateAlloca(llvm::ArrayType::get(B.getInt8Ty(), 16));
    F.zero_slot->setAlignment(llvm::Align(16));
    F.sink_slot = eb.CreateAlloca(llvm::ArrayType::get(B.getInt8Ty(), 16));
    F.sink_slot->setAlignment(llvm::Align(16));
    eb.SetInsertPoint(F.zero_slot->getNextNode()->getNextNode());
    eb.CreateStore(llvm::Constant::getNullValue(F.zero_slot->getAllocatedType()), F.zero_slot);
  }
  // An out-of-bounds lane reads zeros from, or writes into, a slot of the frame: the
  // access itself stays branch-free and can never touch memory outside the buffer.
  llvm::Value* other = store ? F.sink_slot : F.zero_slot;
  llvm::Value* ok = in_bounds(addr, size);
  if (addr->getType()->isVectorTy()) return B.CreateSelect(ok, addr, B.CreateVectorSplat(N, other));
  if (ok->getType()->isVectorTy()) ok = B.CreateAndReduce(ok);
  return B.CreateSelect(ok, addr, other);
}

// ---- loads and stores --------------------------------------------------------------------

namespace {
// Members, array elements or components of a composite type, with their byte offsets.
template <typename F>
void for_each_part(Lowerer& L, Id t, F f) {
  const TypeInfo& ti = L.type(t);
  uint32_t n = ti.op == uint16_t(spv::Op::OpTypeStruct) ? uint32_t(ti.members.size()) : ti.count;
  for (uint32_t i = 0; i < n; ++i) {
    if (ti.op == uint16_t(spv::Op::OpTypeStruct)) {
      Id et = ti.members[i];
      if (static_cast<spv::Op>(L.type(et).op) == spv::Op::OpTypeMatrix && L.matrix_stride(t, i) &&
          L.matrix_stride(t, i) != L.layout(L.type(et).elem).size)
        L.fail("matrix member with a MatrixStride other than its column size is not supported yet");
      f(i, et, L.member_offset(t, i));
    } else if (ti.op == uint16_t(spv::Op::OpTypeArray)) {
      f(i, ti.elem, i * L.array_stride(t));
    } else {
      f(i, ti.elem, i * L.layout(ti.elem).size);
    }
  }
}

bool is_composite(const TypeInfo& ti) {
  switch (static_cast<spv::Op>(ti.op)) {
    case spv::Op::OpTypeVector: case spv::Op::OpTypeMatrix: case spv::Op::OpTypeArray: case spv::Op::OpTypeStruct:
      return true;
    default:
      return false;
  }
}
}  // namespace

// Component by component: each part's own fast path or gather.
llvm::Value* Lowerer::load_parts(Id t, llvm::Value* ptrs, llvm::Value* m_lanes, uint32_t align_hint) {
  llvm::Value* out = llvm::PoisonValue::get(lane_rep_type(t));
  for_each_part(*this, t, [&](uint32_t i, Id et, uint64_t off) {
    out = B.CreateInsertValue(out, load_rep(et, offset_ptrs(ptrs, off), m_lanes, align_hint), i);
  });
  return out;
}

llvm::Value* Lowerer::load_rep(Id t, llvm::Value* ptrs, llvm::Value* m_lanes, uint32_t align_hint) {
  const TypeInfo& ti = type(t);
  if (is_composite(ti)) {
    if (ti.op == uint16_t(spv::Op::OpTypeVector))
      if (llvm::Value* v = load_window(t, ptrs, m_lanes, align_hint, [&] { return load_parts(t, ptrs, m_lanes, align_hint); }))
        return v;
    return load_parts(t, ptrs, m_lanes, align_hint);
  }
  switch (static_cast<spv::Op>(ti.op)) {
    case spv::Op::OpTypeBool: {
      ptrs = safe_address(ptrs, 1, false);
      llvm::Value* bytes = B.CreateMaskedGather(llvm::FixedVectorType::get(B.getInt8Ty(), N), ptrs, llvm::Align(1), m_lanes);
      return B.CreateICmpNE(bytes, llvm::Constant::getNullValue(bytes->getType()));
    }
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypePointer: {
      MemLayout l = layout(t);
      llvm::Align align(std::min<uint32_t>(l.align, align_hint ? align_hint : l.align));
      llvm::Type* rt = lane_rep_type(t);
      // Lanes a pattern apart other than consecutive: one window (the slow way is below).
      if (auto a = affine(ptrs); a && a->stride != 0 && uint64_t(a->stride) != l.size) {
        llvm::Value* raw = ptrs;
        if (llvm::Value* v = load_window(t, ptrs, m_lanes, align_hint, [&] {
              return load_lanes(scalar_type(t), checking ? safe_address(raw, l.size, false) : raw, align, m_lanes);
            }))
          return v;
      }
      if (checking) {
        if (auto a = affine(ptrs); a && uint64_t(a->stride) == l.size) {
          // Consecutive: one vector access over the lanes that are in bounds, zeros elsewhere.
          return if_exact(*a, [&] {
            llvm::Value* ok = B.CreateAnd(m_lanes, in_bounds(ptrs, l.size));
            return B.CreateSelect(ok, vector_load(rt, a->base, align, ok), llvm::Constant::getNullValue(rt));
          }, [&] { return load_lanes(scalar_type(t), safe_address(ptrs, l.size, false), align, m_lanes); });
        }
        ptrs = safe_address(ptrs, l.size, false);
      }
      if (auto a = affine(ptrs); a && (a->stride == 0 || uint64_t(a->stride) == l.size)) {
        return if_exact(*a, [&] {
          // Blocks run only with some lane active, so a uniform address is a valid one.
          if (a->stride == 0) return B.CreateVectorSplat(N, B.CreateAlignedLoad(scalar_type(t), a->base, align));
          return vector_load(rt, a->base, align, m_lanes);
        }, [&] { return load_lanes(scalar_type(t), ptrs, align, m_lanes); });
      }
      return load_lanes(scalar_type(t), ptrs, align, m_lanes);
    }
    default:
      fail("loads of type id " + std::to_string(t) + " are not supported");
  }
}

void Lowerer::store_rep(Id t, llvm::Value* ptrs, llvm::Value* v, llvm::Value* m_lanes, uint32_t align_hint) {
  const TypeInfo& ti = type(t);
  if (is_composite(ti)) {
    auto parts = [&] {
      for_each_part(*this, t, [&](uint32_t i, Id et, uint64_t off) {
        store_rep(et, offset_ptrs(ptrs, off), B.CreateExtractValue(v, i), m_lanes, align_hint);
      });
    };
    if (ti.op == uint16_t(spv::Op::OpTypeVector) && store_window(t, ptrs, v, m_lanes, align_hint, parts)) return;
    parts();
    return;
  }
  switch (static_cast<spv::Op>(ti.op)) {
    case spv::Op::OpTypeBool:
      ptrs = safe_address(ptrs, 1, true);
      B.CreateMaskedScatter(B.CreateZExt(v, llvm::FixedVectorType::get(B.getInt8Ty(), N)), ptrs, llvm::Align(1), m_lanes);
      return;
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypePointer: {
      MemLayout l = layout(t);
      llvm::Align align(std::min<uint32_t>(l.align, align_hint ? align_hint : l.align));
      // Lanes a pattern apart other than consecutive: one window (the slow way is below).
      if (auto a = affine(ptrs); a && a->stride != 0 && uint64_t(a->stride) != l.size) {
        llvm::Value* raw = ptrs;
        if (store_window(t, ptrs, v, m_lanes, align_hint, [&] {
              store_lanes(v, checking ? safe_address(raw, l.size, true) : raw, align, m_lanes);
            }))
          return;
      }
      if (checking) {
        if (auto a = affine(ptrs); a && a->stride > 0 && uint64_t(a->stride) == l.size) {
          if_exact(*a, [&] {
            vector_store(v, a->base, align, B.CreateAnd(m_lanes, in_bounds(ptrs, l.size)));
            return nullptr;
          }, [&] {
            store_lanes(v, safe_address(ptrs, l.size, true), align, m_lanes);
            return nullptr;
          });
          return;
        }
        ptrs = safe_address(ptrs, l.size, true);
      }
      if (auto a = affine(ptrs); a && a->stride > 0 && uint64_t(a->stride) == l.size) {
        if_exact(*a, [&] {
          vector_store(v, a->base, align, m_lanes);
          return nullptr;
        }, [&] {
          store_lanes(v, ptrs, align, m_lanes);
          return nullptr;
        });
        return;
      }
      store_lanes(v, ptrs, align, m_lanes);
      return;
    }
    default:
      fail("stores of type id " + std::to_string(t) + " are not supported");
  }
}

llvm::Value* Lowerer::load_urep(Id t, llvm::Value* ptr, uint32_t align_hint) {
  const TypeInfo& ti = type(t);
  if (is_composite(ti)) {
    llvm::Value* out = llvm::PoisonValue::get(urep_type(t));
    for_each_part(*this, t, [&](uint32_t i, Id et, uint64_t off) {
      out = B.CreateInsertValue(out, load_urep(et, B.CreateConstGEP1_64(B.getInt8Ty(), ptr, off), align_hint), i);
    });
    return out;
  }
  switch (static_cast<spv::Op>(ti.op)) {
    case spv::Op::OpTypeBool:
      return B.CreateICmpNE(B.CreateLoad(B.getInt8Ty(), safe_address(ptr, 1, false)), B.getInt8(0));
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypePointer: {
      MemLayout l = layout(t);
      llvm::Align align(std::min<uint32_t>(l.align, align_hint ? align_hint : l.align));
      return B.CreateAlignedLoad(scalar_type(t), safe_address(ptr, l.size, false), align);
    }
    default:
      fail("loads of type id " + std::to_string(t) + " are not supported");
  }
}

void Lowerer::store_urep(Id t, llvm::Value* ptr, llvm::Value* v, uint32_t align_hint) {
  const TypeInfo& ti = type(t);
  if (is_composite(ti)) {
    for_each_part(*this, t, [&](uint32_t i, Id et, uint64_t off) {
      store_urep(et, B.CreateConstGEP1_64(B.getInt8Ty(), ptr, off), B.CreateExtractValue(v, i), align_hint);
    });
    return;
  }
  switch (static_cast<spv::Op>(ti.op)) {
    case spv::Op::OpTypeBool:
      B.CreateStore(B.CreateZExt(v, B.getInt8Ty()), safe_address(ptr, 1, true));
      return;
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypePointer: {
      MemLayout l = layout(t);
      llvm::Align align(std::min<uint32_t>(l.align, align_hint ? align_hint : l.align));
      B.CreateAlignedStore(v, safe_address(ptr, l.size, true), align);
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
    return o.size() > k ? o[k] : 0;
  }
  return 0;
}
}  // namespace

Val Lowerer::load_through(Id pointer, Id result_type, uint32_t align_hint) {
  if (F.rep_ptrs.count(pointer) || rep_globals.count(pointer)) {
    llvm::Type* rt = lane_rep_type(result_type);
    return {B.CreateLoad(rt, value_v(pointer).v), false};
  }
  CheckingScope scope(*this, pointer);
  Val p = value_v(pointer);
  if (p.uniform) {
    bool push = type(type_of(pointer)).storage == uint32_t(spv::StorageClass::PushConstant);
    llvm::BasicBlock* bb = B.GetInsertBlock();
    auto before = bb->empty() ? bb->end() : std::prev(bb->end());
    llvm::Value* v = load_urep(result_type, p.v, align_hint);
    if (push)  // the dispatch's snapshot of the push constants never changes under it
      for (auto it = before == bb->end() ? bb->begin() : std::next(before); it != bb->end(); ++it) invariant(&*it);
    return {v, true};
  }
  const uint32_t storage = type(type_of(pointer)).storage;
  streaming = storage == uint32_t(spv::StorageClass::StorageBuffer) ||
              storage == uint32_t(spv::StorageClass::PhysicalStorageBuffer) ||
              storage == uint32_t(spv::StorageClass::Uniform);
  Val v{load_rep(result_type, p.v, mask, align_hint), false};
  streaming = false;
  return v;
}

void Lowerer::store_through(Id pointer, Id value_type, Id value_id, uint32_t align_hint) {
  // constant_table_var(): every store to the table stores its initializer again.
  if (F.constant_tables.count(pointer)) return;
  if (F.rep_ptrs.count(pointer) || rep_globals.count(pointer)) {
    // Lanes not running this store keep their own contents.
    llvm::Value* p = value_v(pointer).v;
    llvm::Type* rt = lane_rep_type(value_type);
    llvm::Value* old = B.CreateLoad(rt, p);
    B.CreateStore(merge_rep(value_type, mask, value(value_id), old), p);
    refresh_packed(pointer, value_type);
    return;
  }
  CheckingScope scope(*this, pointer);
  Val p = value_v(pointer);
  if (!p.uniform) {
    store_rep(value_type, p.v, value(value_id), mask, align_hint);
    return;
  }
  // One address for every lane: one store. When the lanes' values differ, one of them
  // lands (SPIR-V orders nothing between the invocations); the last active lane's, as a
  // scatter would leave it.
  Val v = value_v(value_id);
  llvm::Value* u = v.v;
  if (!v.uniform) {
    llvm::Value* bits = B.CreateBitCast(mask, B.getIntNTy(N));
    llvm::Value* last = B.CreateSub(B.getIntN(N, N - 1), B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, bits, B.getTrue()));
    llvm::Value* lane = B.CreateZExtOrTrunc(last, B.getInt32Ty());
    u = map_leaves(v.v, [&](llvm::Value* x) { return B.CreateExtractElement(x, lane); });
  }
  store_urep(value_type, p.v, u, align_hint);
}

bool Lowerer::constant_table_var(const Instruction& var) {
  // A Function variable with a constant initializer whose pointer (and every access chain
  // made from it) is only loaded through, and only ever stored to whole with that same
  // constant (glslang writes `const T table[] = {...}` indexed at run time this way).
  const auto& vo = var.operands;
  if (vo.size() < 2 || !is_constant(vo[1])) return false;
  const Instruction* init = m.global(vo[1]);
  if (!init || init->opcode == uint16_t(spv::Op::OpSpecConstantOp)) return false;
  std::unordered_set<Id> ptrs{var.result};
  for (bool grew = true; grew;) {
    grew = false;
    for (const Block& b : F.fn->blocks)
      for (const Instruction& in : b.body) {
        for (uint16_t k : in.id_operands) {
          if (!ptrs.count(in.operands[k])) continue;
          auto op = static_cast<spv::Op>(in.opcode);
          bool chain = op == spv::Op::OpAccessChain || op == spv::Op::OpInBoundsAccessChain;
          if (chain && k == 0) {
            if (ptrs.insert(in.result).second) grew = true;
          } else if (op == spv::Op::OpLoad && k == 0) {
          } else if (op == spv::Op::OpStore && k == 0 && in.operands[0] == var.result && in.operands.size() > 1 &&
                     in.operands[1] == vo[1]) {
          } else {
            return false;
          }
        }
      }
  }
  return true;
}

void Lowerer::constant_bytes(llvm::Constant* c, Id type_id, uint8_t* out) {
  const TypeInfo& t = type(type_id);
  switch (static_cast<spv::Op>(t.op)) {
    case spv::Op::OpTypeBool:
      out[0] = c->isNullValue() ? 0 : 1;
      return;
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat: {
      uint64_t bits = 0;
      if (auto* ci = llvm::dyn_cast<llvm::ConstantInt>(c)) bits = ci->getZExtValue();
      else if (auto* cf = llvm::dyn_cast<llvm::ConstantFP>(c)) bits = cf->getValueAPF().bitcastToAPInt().getZExtValue();
      else if (!c->isNullValue() && !llvm::isa<llvm::UndefValue>(c)) fail("constant table element does not fold");
      std::memcpy(out, &bits, t.width / 8);
      return;
    }
    case spv::Op::OpTypeVector:
    case spv::Op::OpTypeMatrix: {
      uint64_t step = layout(t.elem).size;
      for (uint32_t i = 0; i < t.count; ++i) constant_bytes(c->getAggregateElement(i), t.elem, out + i * step);
      return;
    }
    case spv::Op::OpTypeArray: {
      uint64_t step = array_stride(type_id);
      for (uint32_t i = 0; i < t.count; ++i) constant_bytes(c->getAggregateElement(i), t.elem, out + i * step);
      return;
    }
    case spv::Op::OpTypeStruct:
      for (uint32_t i = 0; i < t.members.size(); ++i)
        constant_bytes(c->getAggregateElement(i), t.members[i], out + member_offset(type_id, i));
      return;
    default:
      fail("constant table of a type without a memory layout");
  }
}

bool Lowerer::lower_memory_op(const Instruction& in) {
  const auto& o = in.operands;
  switch (static_cast<spv::Op>(in.opcode)) {
    case spv::Op::OpVariable: {
      uint32_t sc = o.at(0);
      if (sc != uint32_t(spv::StorageClass::Function)) fail("local variable outside Function storage", &in);
      if (type(in.result_type).op != uint16_t(spv::Op::OpTypePointer) || !type(in.result_type).elem)
        fail("OpVariable's result type is not a typed pointer", &in);
      Id pointee = type(in.result_type).elem;
      if (o.size() > 1 && type_of(o[1]) != pointee) fail("OpVariable's initializer is not of its pointee type", &in);
      if (is_uniform(in.result)) {
        // Rep layout (lowerer.h): one lane vector per scalar, reached by uniform indices.
        llvm::AllocaInst* mem = entry_alloca(lane_rep_type(pointee));
        if (o.size() > 1) {
          llvm::Value* init = value(o[1]);
          llvm::IRBuilder<> eb(mem->getNextNode());
          eb.CreateStore(init, mem);
        }
        F.rep_ptrs.insert(in.result);
        define_v(in.result, {mem, true});
        // Packed copies are made by stores (refresh_packed()); the initializer is the first.
        if (o.size() > 1) refresh_packed(in.result, pointee);
        return true;
      }
      MemLayout l = layout(pointee);
      if (constant_table_var(in)) {
        // A table indexed per lane (ggml's iq2s_grid, 8 KiB): one read-only copy for all
        // lanes instead of N copies, each initialized by N-lane scatters.
        std::vector<uint8_t> bytes(l.size);
        bool saved = scalar_mode;
        scalar_mode = true;
        constant_bytes(llvm::cast<llvm::Constant>(constant(o[1])), pointee, bytes.data());
        scalar_mode = saved;
        auto* gv = new llvm::GlobalVariable(*M, llvm::ArrayType::get(B.getInt8Ty(), bytes.size()), true,
                                            llvm::GlobalValue::InternalLinkage,
                                            llvm::ConstantDataArray::get(C, bytes), "const_table");
        gv->setAlignment(llvm::Align(std::max<uint32_t>(l.align, 16)));
        F.constant_tables.insert(in.result);
        define_v(in.result, {gv, true});
        return true;
      }
      uint64_t lane_size = std::max<uint64_t>((l.size + 15) / 16 * 16, 16);
      llvm::AllocaInst* mem = entry_alloca(B.getInt8Ty(), lane_size * N, 64);
      llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), N);
      llvm::Value* offs = B.CreateMul(B.CreateZExt(lane_index(), i64v), B.CreateVectorSplat(N, B.getInt64(lane_size)));
      llvm::Value* ptrs = B.CreateGEP(B.getInt8Ty(), B.CreateVectorSplat(N, mem), offs);
      if (o.size() > 1) store_rep(pointee, ptrs, value(o[1]), mask, 0);
      define_v(in.result, {ptrs, false});
      return true;
    }
    case spv::Op::OpAccessChain:
    case spv::Op::OpInBoundsAccessChain:
    case spv::Op::OpPtrAccessChain:
    case spv::Op::OpInBoundsPtrAccessChain:
      lower_access_chain(in);
      return true;
    case spv::Op::OpLoad: {
      if (llvm::Value* direct = direct_builtin_load(o.at(0), in.result_type)) {
        define_v(in.result, {direct, false});
        return true;
      }
      define_v(in.result, load_through(o.at(0), in.result_type, aligned_operand(o, 1)));
      return true;
    }
    case spv::Op::OpStore: {
      Id ptr = o.at(0);
      // SPIR-V, OpStore: "The type of Object must be the same as the type Pointer points to".
      const TypeInfo& pt = type(type_of(ptr));
      if (pt.op != uint16_t(spv::Op::OpTypePointer) || !pt.elem || type_of(o.at(1)) != pt.elem)
        fail("OpStore of an object whose type is not the pointer's pointee type", &in);
      if (!store_packed_from_buffer(in)) store_through(ptr, type(type_of(ptr)).elem, o.at(1), aligned_operand(o, 2));
      return true;
    }
    case spv::Op::OpArrayLength: {
      // Length of the runtime array member of a buffer block: (range - offset) / stride.
      const Instruction* var = m.global(o.at(0));
      Val range;
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
              Val idx = value_v(d.operands[1]);
              range = descriptor_field(*arr, &idx, true);
              block_type = type(d.result_type).elem;
            }
          }
      }
      if (!range.v) fail("OpArrayLength of a pointer that is not a buffer block variable", &in);
      uint32_t member = o.at(1);
      const TypeInfo& bt = type(block_type);
      if (member >= bt.members.size()) fail("OpArrayLength member out of range", &in);
      uint64_t off = member_offset(block_type, member);
      uint64_t stride = array_stride(bt.members[member]);
      auto k64 = [&](uint64_t v) -> llvm::Value* {
        return range.uniform ? B.getInt64(v) : B.CreateVectorSplat(N, B.getInt64(v));
      };
      llvm::Value* avail = B.CreateSub(range.v, k64(off));
      avail = B.CreateSelect(B.CreateICmpUGT(range.v, k64(off)), avail, k64(0));
      llvm::Value* len = B.CreateUDiv(avail, k64(stride));
      define_v(in.result, {B.CreateTrunc(len, range.uniform ? static_cast<llvm::Type*>(B.getInt32Ty())
                                                            : llvm::FixedVectorType::get(B.getInt32Ty(), N)),
                           range.uniform});
      return true;
    }
    case spv::Op::OpCopyMemory: {
      Id dst = o.at(0), src = o.at(1);
      auto pointee_of = [&](Id p) { return type(type_of(p)).elem; };
      // A load, then a store as OpStore would do it, of a value that has no id.
      Val v = load_through(src, pointee_of(src), 0);
      llvm::Value* lanes_v = v.uniform ? to_lanes(v.v) : v.v;
      if (F.rep_ptrs.count(dst) || rep_globals.count(dst)) {
        llvm::Value* p = value_v(dst).v;
        llvm::Value* old = B.CreateLoad(lane_rep_type(pointee_of(dst)), p);
        B.CreateStore(merge_rep(pointee_of(dst), mask, lanes_v, old), p);
      } else {
        Val p = value_v(dst);
        if (p.uniform && v.uniform) store_urep(pointee_of(dst), p.v, v.v, 0);
        else store_rep(pointee_of(dst), p.uniform ? B.CreateVectorSplat(N, p.v) : p.v, lanes_v, mask, 0);
      }
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

void Lowerer::lower_access_chain(const Instruction& in) {
  const auto& o = in.operands;
  bool ptr_chain = in.opcode == uint16_t(spv::Op::OpPtrAccessChain) ||
                   in.opcode == uint16_t(spv::Op::OpInBoundsPtrAccessChain);
  Id base_id = o.at(0);
  if (F.rep_ptrs.count(base_id) || rep_globals.count(base_id)) {
    // Into a rep-layout variable: a GEP over the rep type with the (uniform) indices.
    if (ptr_chain) fail("OpPtrAccessChain into a Function or Private variable", &in);
    Id cur = type(type_of(base_id)).elem;
    std::vector<llvm::Value*> idx{B.getInt32(0)};
    size_t k = 1;
    for (; k < o.size(); ++k) {
      const TypeInfo& t = type(cur);
      if (t.op == uint16_t(spv::Op::OpTypeCooperativeMatrixKHR)) break;  // into the matrix: below
      if (t.op == uint16_t(spv::Op::OpTypeStruct)) {
        uint64_t member = constant_u64(o[k]);
        if (member >= t.members.size()) fail("struct member index out of range", &in);
        idx.push_back(B.getInt32(uint32_t(member)));
        cur = t.members[member];
        continue;
      }
      if (!is_composite(t)) fail("access chain indexes into a non-composite", &in);
      Val iv = value_v(o[k]);
      llvm::Value* i = iv.uniform ? iv.v : to_uniform(iv.v);
      // An index past the end is undefined behaviour; clamp it so it stays in the variable.
      uint32_t n = t.count ? t.count : 1;
      i = B.CreateZExtOrTrunc(i, B.getInt64Ty());
      i = B.CreateSelect(B.CreateICmpULT(i, B.getInt64(n)), i, B.getInt64(n - 1));
      idx.push_back(i);
      cur = t.elem;
    }
    if (k < o.size()) {
      // A component of a matrix (lower_coopmat.cpp): lane l's component j is element
      // j * N + l of the row-major matrix; each lane gets its own address (past the
      // last element, a clamped one: undefined in SPIR-V, harmless here).
      if (k + 1 != o.size()) fail("access chain past a cooperative matrix component", &in);
      const TypeInfo& t = type(cur);
      uint64_t esz = layout(t.elem).size;
      // A row is a <cols x T>, whose allocation LLVM may pad (to a power of two).
      const uint64_t row_alloc = M->getDataLayout().getTypeAllocSize(matrix_type(cur)->getArrayElementType());
      llvm::Value* mat = B.CreateGEP(lane_rep_type(type(type_of(base_id)).elem), value_v(base_id).v, idx);
      Val jv = value_v(o[k]);
      llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), N);
      llvm::Value* j = jv.uniform ? B.CreateVectorSplat(N, B.CreateZExtOrTrunc(jv.v, B.getInt64Ty()))
                                  : B.CreateZExtOrTrunc(jv.v, i64v);
      llvm::Value* e = B.CreateAdd(B.CreateMul(j, B.CreateVectorSplat(N, B.getInt64(N))),
                                   B.CreateZExt(lane_index(), i64v));
      uint64_t last = uint64_t(t.rows) * t.cols - 1;
      e = B.CreateSelect(B.CreateICmpULE(e, B.CreateVectorSplat(N, B.getInt64(last))), e,
                         B.CreateVectorSplat(N, B.getInt64(last)));
      llvm::Value* off = B.CreateMul(e, B.CreateVectorSplat(N, B.getInt64(esz)));
      if (row_alloc != uint64_t(t.cols) * esz) {
        llvm::Value* cols = B.CreateVectorSplat(N, B.getInt64(t.cols));
        off = B.CreateAdd(B.CreateMul(B.CreateUDiv(e, cols), B.CreateVectorSplat(N, B.getInt64(row_alloc))),
                          B.CreateMul(B.CreateURem(e, cols), B.CreateVectorSplat(N, B.getInt64(esz))));
      }
      define_v(in.result, {B.CreateGEP(B.getInt8Ty(), B.CreateVectorSplat(N, mat), off), false});
      return;
    }
    llvm::Value* base = value_v(base_id).v;
    F.rep_ptrs.insert(in.result);
    define_v(in.result, {B.CreateGEP(lane_rep_type(type(type_of(base_id)).elem), base, idx), true});
    return;
  }

  size_t first_index = 1;
  Val ptrs;
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
      Val idx = value_v(o[1]);
      ptrs = descriptor_field(*g, &idx, false);
      cur = type(pointee).elem;
      first_index = 2;
      if (opts.robust_buffer_access || opts.robust_matrix_access) F.bounds[in.result] = {g, o[1]};
    } else {
      ptrs = {buffer_variable_pointer(*g), true};
      cur = pointee;
      if (opts.robust_buffer_access || opts.robust_matrix_access) F.bounds[in.result] = {g, 0};
    }
  } else {
    if (auto it = F.bounds.find(base_id); it != F.bounds.end()) F.bounds[in.result] = it->second;
    ptrs = value_v(base_id);
    Id base_type = type_of(base_id);
    cur = type(base_type).elem;
    if (ptr_chain) {
      // Element index over the pointer: ArrayStride of the pointer type.
      const Decoration* d = nullptr;
      uint64_t stride = m.has_decoration(base_type, uint32_t(spv::Decoration::ArrayStride), &d) && !d->args.empty()
                            ? d->args[0] : layout(cur).size;
      add_offset(ptrs, value_v(o.at(1)), stride);
      first_index = 2;
    }
  }
  uint64_t const_off = 0;
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
    if (is_constant(o[k])) const_off += constant_u64(o[k]) * stride;
    else add_offset(ptrs, value_v(o[k]), stride);
  }
  if (const_off) ptrs.v = B.CreateGEP(B.getInt8Ty(), ptrs.v, B.getInt64(const_off));
  define_v(in.result, ptrs);
}

// ptrs += index * stride, staying scalar while both are uniform.
void Lowerer::add_offset(Val& ptrs, Val index, uint64_t stride) {
  if (ptrs.uniform && index.uniform) {
    llvm::Value* i = index_to_i64(index.v);
    ptrs.v = B.CreateGEP(B.getInt8Ty(), ptrs.v, B.CreateMul(i, B.getInt64(stride)));
    return;
  }
  llvm::Value* p = ptrs.uniform ? B.CreateVectorSplat(N, ptrs.v) : ptrs.v;
  llvm::Value* i = index.uniform ? B.CreateVectorSplat(N, index_to_i64(index.v)) : index_to_i64(index.v);
  ptrs = {B.CreateGEP(B.getInt8Ty(), p, B.CreateMul(i, B.CreateVectorSplat(N, B.getInt64(stride)))), false};
}

}  // namespace coopvk::jit
