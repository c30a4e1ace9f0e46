// Packed-operand caches for cooperative-matrix multiply-adds.
//
// A K loop over a block of accumulator tiles loads each step's A tiles and B tiles into
// matrix variables (`coopmat<...> ma[BM], mb[BN]`) and multiplies every A tile with every
// B tile. The kernel must widen and repack its operands before it multiplies (f16 to f32,
// 8-bit pairs or quads for vpmaddwd / vpdpbusd, with sign fix-ups), and doing that inside
// each multiply-add does it BN times for every A tile and BM times for every B tile: a
// quarter of a 2x2-blocked GEMM's time went there.
//
// So a Function variable of matrices (or arrays of them) whose loads feed the A (or B)
// operand of multiply-adds of one kernel combination gets, beside its contents, a packed
// copy per matrix (kernels::tile_mma_packed()), packed by every store to the variable (of
// the matrices it writes): a multiply-add whose operand was just loaded from the variable
// calls the kernel's packed entry on the copy, with nothing to test. (Packing at the first
// multiply-add after a store instead needs a flag per matrix, and a load loop LLVM does not
// unroll leaves those tests in the code between the multiply-adds, which keeps
// pair_muladds() from fusing them.) A store that is never multiplied packs for nothing;
// in the shaders this is for, every stored tile is.
//
// Only variables whose pointers are used by nothing but loads, stores and access chains to
// whole matrices take part: nothing else can write them behind the packed copies' back (no function
// call, no copy, no pointer to a component). The packed bytes depend on the kernel arch and
// CPU features, which are part of the compiled code's host signature (compiler.cpp), and
// the runtime symbols carry their sizes, so code linked against a different layout fails
// to link instead of reading it wrong.
#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

using spv::Op;

namespace {

bool is_chain(const Instruction* in) {
  return in && (in->opcode == uint16_t(Op::OpAccessChain) || in->opcode == uint16_t(Op::OpInBoundsAccessChain));
}

// Room for a shared packed copy's tag (lower_interleave.cpp), keeping the copy 64-byte aligned.
constexpr uint64_t kTagBytes = 64;

bool same_desc(const kernels::TileMmaDesc& x, const kernels::TileMmaDesc& y) {
  return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d && x.m == y.m && x.n == y.n && x.k == y.k &&
         x.saturate == y.saturate;
}

}  // namespace

Id Lowerer::root_variable(Id pointer) const {
  const Instruction* in = m.local(pointer);
  while (is_chain(in)) {
    pointer = in->operands.at(0);
    in = m.local(pointer);
  }
  return in && in->opcode == uint16_t(Op::OpVariable) ? pointer : 0;
}

void Lowerer::plan_packed_operands() {
  const Function& fn = *F.fn;
  // The matrix type inside each candidate: a Function variable whose pointer is uniform
  // (the rep layout, lower_memory.cpp) holding a matrix of use A or B, or arrays of one.
  std::unordered_map<Id, Id> matrix_of;
  std::unordered_map<Id, Id> root;  // pointer into a candidate -> the variable
  std::unordered_set<Id> excluded;
  auto whole_matrices = [&](Id pointee) {
    while (type(pointee).op == uint16_t(Op::OpTypeArray)) pointee = type(pointee).elem;
    // A workgroup-scope share multiplies on the plain path (lower_coopmat_workgroup.cpp).
    return is_matrix(pointee) && !split_matrix(type(pointee)) ? pointee : 0;
  };
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body) {
      if (in.opcode == uint16_t(Op::OpVariable) && is_uniform(in.result)) {
        Id mt = whole_matrices(type(in.result_type).elem);
        using U = spv::CooperativeMatrixUse;
        if (mt && (type(mt).use == uint32_t(U::MatrixAKHR) || type(mt).use == uint32_t(U::MatrixBKHR))) {
          matrix_of[in.result] = mt;
          root[in.result] = in.result;
        }
      } else if (is_chain(&in) && root.count(in.operands.at(0))) {
        Id v = root[in.operands[0]];
        root[in.result] = v;
        if (whole_matrices(type(in.result_type).elem) != matrix_of[v]) excluded.insert(v);  // into a matrix
      }
    }
  if (matrix_of.empty()) return;
  // Every other use of such a pointer could write the variable unseen.
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body)
      for (uint16_t k : in.id_operands) {
        auto it = root.find(in.operands[k]);
        if (it == root.end()) continue;
        bool plain = k == 0 && (in.opcode == uint16_t(Op::OpLoad) || in.opcode == uint16_t(Op::OpStore) || is_chain(&in));
        if (!plain) excluded.insert(it->second);
      }
  // One combination and role per variable, from the multiply-adds its loads feed.
  struct Use {
    kernels::TileMmaDesc desc;
    uint32_t role;
  };
  std::unordered_map<Id, Use> uses;
  for (const Block& b : fn.blocks)
    for (const Instruction& in : b.body) {
      if (in.opcode != uint16_t(Op::OpCooperativeMatrixMulAddKHR) || in.operands.size() < 3) continue;
      bool matrices = is_matrix(in.result_type);
      for (int i = 0; i < 3; ++i) matrices = matrices && is_matrix(type_of(in.operands[i]));
      if (!matrices) continue;  // lower_matrix_muladd() says what is wrong
      const kernels::TileMmaDesc d = muladd_desc(in);
      for (uint32_t role = 0; role < 2; ++role) {
        const Instruction* ld = m.local(in.operands[role]);
        if (!ld || ld->opcode != uint16_t(Op::OpLoad)) continue;
        auto it = root.find(ld->operands.at(0));
        if (it == root.end()) continue;
        auto [u, fresh] = uses.try_emplace(it->second, Use{d, role});
        if (!fresh && (u->second.role != role || !same_desc(u->second.desc, d))) excluded.insert(it->second);
      }
    }
  // The variables not to keep whole (store_packed_from_buffer()) are those every load of
  // which feeds, in its own block and with nothing that writes memory in between, the
  // operand of the variable's role of such multiply-adds and nothing else, through uniform
  // pointers only: their contents are then never read but through the packed copies.
  std::unordered_set<Id> keep_whole;
  std::unordered_map<Id, std::pair<size_t, size_t>> load_at;  // load -> block, position
  std::unordered_map<Id, Id> load_var;                        // load -> variable
  for (size_t bi = 0; bi < fn.blocks.size(); ++bi)
    for (size_t i = 0; i < fn.blocks[bi].body.size(); ++i) {
      const Instruction& in = fn.blocks[bi].body[i];
      if (is_chain(&in) && root.count(in.result) && !is_uniform(in.result)) keep_whole.insert(root[in.result]);
      if (in.opcode != uint16_t(Op::OpLoad)) continue;
      auto r = root.find(in.operands.at(0));
      if (r == root.end()) continue;
      load_at[in.result] = {bi, i};
      load_var[in.result] = r->second;
    }
  for (size_t bi = 0; bi < fn.blocks.size(); ++bi)
    for (size_t i = 0; i < fn.blocks[bi].body.size(); ++i) {
      const Instruction& in = fn.blocks[bi].body[i];
      for (uint16_t k : in.id_operands) {
        auto lv = load_var.find(in.operands[k]);
        if (lv == load_var.end()) continue;
        auto u = uses.find(lv->second);
        bool ok = u != uses.end() && in.opcode == uint16_t(Op::OpCooperativeMatrixMulAddKHR) &&
                  in.operands.size() >= 3 && k == u->second.role && same_desc(muladd_desc(in), u->second.desc);
        const auto [lb, li] = load_at.at(in.operands[k]);
        ok = ok && lb == bi && li < i;
        for (size_t x = li + 1; ok && x < i; ++x) ok = !writes_memory(fn.blocks[bi].body[x]);
        if (!ok) keep_whole.insert(lv->second);
      }
    }
  const llvm::DataLayout& dl = M->getDataLayout();
  for (const auto& [var, use] : uses) {
    if (excluded.count(var)) continue;
    FunctionState::PackedCache c;
    c.desc = use.desc;
    c.role = use.role;
    if (!kernels::tile_mma_packed(c.desc, &c.parts)) continue;  // this kernel packs in each call
    c.matrix_bytes = dl.getTypeAllocSize(matrix_type(matrix_of.at(var)));
    c.matrices = dl.getTypeAllocSize(lane_rep_type(type(type_of(var)).elem)) / c.matrix_bytes;
    const uint64_t bytes = c.role == 0 ? c.parts.a_bytes : c.parts.b_bytes;
    c.stride = bytes;
    // The packers read dense rows, which the variable's matrices must then have too.
    llvm::Type* row = matrix_type(matrix_of.at(var))->getArrayElementType();
    const TypeInfo& mt = type(matrix_of.at(var));
    c.direct = !keep_whole.count(var) && dl.getTypeAllocSize(row) == uint64_t(mt.cols) * layout(mt.elem).size;
    c.shared = c.direct && interleaves_subgroups;
    if (c.shared) c.stride = kTagBytes + (bytes + 63) / 64 * 64;  // 64-byte aligned copies
    c.packed = entry_alloca(B.getInt8Ty(), c.matrices * c.stride, 64);
    if (c.direct) {
      // Each matrix's packed form starts in its packed copy (a load before any store reads
      // an undefined value, not a wild pointer).
      c.pointers = entry_alloca(B.getPtrTy(), c.matrices, 8);
      for (uint64_t i = 0; i < c.matrices; ++i)
        B.CreateStore(B.CreateConstGEP1_64(B.getInt8Ty(), c.packed, i * c.stride + (c.shared ? kTagBytes : 0)),
                      B.CreateConstGEP1_64(B.getPtrTy(), c.pointers, i));
    }
    F.packed_caches.emplace(var, c);
  }
}

llvm::Value* Lowerer::packed_slot(Id variable, llvm::Value* at) {
  // Which matrix of the variable `at` points to: the variable is matrices back to back.
  llvm::Type* i64 = B.getInt64Ty();
  llvm::Value* off = B.CreateSub(B.CreatePtrToInt(at, i64), B.CreatePtrToInt(value_v(variable).v, i64));
  return B.CreateUDiv(off, B.getInt64(F.packed_caches.at(variable).matrix_bytes));
}

void Lowerer::refresh_packed(Id pointer, Id value_type) {
  if (F.packed_caches.empty()) return;
  auto it = F.packed_caches.find(root_variable(pointer));
  if (it == F.packed_caches.end()) return;
  const FunctionState::PackedCache& c = it->second;
  // The matrices written, back to back from `at`, each packed from its dense rows.
  llvm::Value* at = value_v(pointer).v;
  llvm::Value* first = packed_slot(it->first, at);
  const uint64_t count = M->getDataLayout().getTypeAllocSize(lane_rep_type(value_type)) / c.matrix_bytes;
  llvm::FunctionCallee pack = packer(c.desc, c.parts, c.role);
  llvm::Value* dense = B.getInt64(c.role == 0 ? c.desc.k : c.desc.n);
  auto pack_one = [&](llvm::Value* i) {  // i (i64): index among the matrices written
    llvm::Value* src = B.CreateGEP(B.getInt8Ty(), at, B.CreateMul(i, B.getInt64(c.matrix_bytes)));
    llvm::Value* slot = B.CreateAdd(first, i);
    B.CreateCall(pack, {src, dense, packed_copy(c, slot)});
    clear_pack_tag(c, slot);
    set_packed_operand(c, slot, packed_copy(c, slot));
  };
  if (count == 1)
    pack_one(B.getInt64(0));
  else
    for_each_component(uint32_t(count), [&](llvm::Value* i) { pack_one(B.CreateZExt(i, B.getInt64Ty())); });
}

bool Lowerer::packed_muladd(const Instruction& in, const kernels::TileMmaDesc& d, llvm::Value* a, llvm::Value* b,
                             llvm::Value* c, llvm::Value* dst) {
  if (F.packed_caches.empty()) return false;
  const auto& o = in.operands;
  // The operands' caches, where the operand was just loaded (a, b: in place) from a cached
  // variable.
  const FunctionState::PackedCache* cache[2] = {nullptr, nullptr};
  Id var[2] = {0, 0};
  llvm::Value* mem[2] = {a, b};
  for (uint32_t role = 0; role < 2; ++role) {
    const Instruction* ld = m.local(o[role]);
    if (!ld || ld->opcode != uint16_t(Op::OpLoad)) continue;
    var[role] = root_variable(ld->operands.at(0));
    auto it = F.packed_caches.find(var[role]);
    if (it == F.packed_caches.end() || it->second.role != role || !same_desc(it->second.desc, d)) continue;
    // A variable kept only packed is always read through its cache (its contents may be
    // stale), at the pointer the load used; the planner made sure that one is uniform and
    // nothing wrote memory since the load.
    if (it->second.direct)
      mem[role] = value_v(ld->operands[0]).v;
    else if (!mem[role])
      continue;
    cache[role] = &it->second;
  }
  if (!cache[0] && !cache[1]) return false;
  const kernels::TileMmaPacked& parts = (cache[0] ? cache[0] : cache[1])->parts;
  llvm::Type* ptr = B.getPtrTy();
  llvm::Value* packed[2];
  for (uint32_t role = 0; role < 2; ++role) {
    llvm::Value* src = mem[role] ? mem[role] : matrix_to_memory(value_v(o[role]).v, type(type_of(o[role])));
    if (cache[role]) {
      packed[role] = packed_operand(*cache[role], packed_slot(var[role], src));
      continue;
    }
    // An operand of its own: packed for this call.
    packed[role] = entry_alloca(B.getInt8Ty(), role == 0 ? parts.a_bytes : parts.b_bytes, 64);
    B.CreateCall(packer(d, parts, role), {src, B.getInt64(role == 0 ? d.k : d.n), packed[role]});
  }
  llvm::FunctionCallee mma = M_get_function(mma_split_symbol(d, parts, "mma"),
                                            llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr, ptr, ptr}, false), {0, 1, 2});
  B.CreateCall(mma, {packed[0], packed[1], c, dst});
  return true;
}

llvm::FunctionCallee Lowerer::packer(const kernels::TileMmaDesc& d, const kernels::TileMmaPacked& parts,
                                     uint32_t role) {
  // (source, elements between its rows, packed out), TileMmaPacked::pack_a / pack_b
  llvm::Type* ptr = B.getPtrTy();
  return M_get_function(mma_split_symbol(d, parts, role == 0 ? "a" : "b"),
                        llvm::FunctionType::get(B.getVoidTy(), {ptr, B.getInt64Ty(), ptr}, false), {0});
}

llvm::Value* Lowerer::packed_operand(const FunctionState::PackedCache& c, llvm::Value* slot) {
  if (!c.pointers) return packed_copy(c, slot);
  return B.CreateLoad(B.getPtrTy(), B.CreateGEP(B.getPtrTy(), c.pointers, slot));
}

void Lowerer::set_packed_operand(const FunctionState::PackedCache& c, llvm::Value* slot, llvm::Value* at) {
  if (c.pointers) B.CreateStore(at, B.CreateGEP(B.getPtrTy(), c.pointers, slot));
}

llvm::Value* Lowerer::packed_copy(const FunctionState::PackedCache& c, llvm::Value* slot) {
  llvm::Value* at = B.CreateMul(slot, B.getInt64(c.stride));
  if (c.shared) at = B.CreateAdd(at, B.getInt64(kTagBytes));
  return B.CreateGEP(B.getInt8Ty(), c.packed, at);
}

bool Lowerer::store_packed_from_buffer(const Instruction& store) {
  if (F.packed_caches.empty() || store.operands.size() < 2) return false;
  auto it = F.packed_caches.find(root_variable(store.operands[0]));
  if (it == F.packed_caches.end() || !it->second.direct) return false;
  const FunctionState::PackedCache& c = it->second;
  const Instruction* ld = m.local(store.operands[1]);
  if (!ld || ld->opcode != uint16_t(Op::OpCooperativeMatrixLoadKHR) || ld->operands.size() < 2) return false;
  // The buffer must still hold what the load read: the load earlier in this block, nothing
  // that writes memory in between. And the store must be whole, as merge_rep() makes a
  // matrix store under a per-lane mask (a matrix is the whole subgroup's); under a uniform
  // condition only when that is known true.
  const auto& body = F.fn->blocks[F.current_block].body;
  if (body.empty() || &store < body.data() || &store >= body.data() + body.size() || ld < body.data() || ld >= &store)
    return false;
  for (const Instruction* x = ld + 1; x < &store; ++x)
    if (writes_memory(*x)) return false;
  auto* known = llvm::dyn_cast<llvm::Constant>(mask);
  if (!mask->getType()->isVectorTy() && !(known && known->isAllOnesValue())) return false;
  const TypeInfo& t = type(ld->result_type);
  MatrixAddressing a = matrix_addressing(ld->operands[0], ld->operands[1], ld->operands.size() > 2 ? ld->operands[2] : 0, *ld);
  if (a.column_major || a.bounds) return false;  // the packers read rows; robust loads check each
  // The packers take the row stride in elements, not negative: other strides gather the
  // rows densely first. (Storing the matrix plainly there instead emitted one address per
  // row, which LLVM computed ahead of the branch, in every iteration of a K loop.)
  const uint64_t esz = layout(t.elem).size;
  llvm::Value* ok = B.CreateAnd(B.CreateICmpSGE(a.stride, B.getInt64(0)),
                                B.CreateICmpEQ(B.CreateSRem(a.stride, B.getInt64(int64_t(esz))), B.getInt64(0)));
  llvm::BasicBlock* pack_bb = llvm::BasicBlock::Create(C, "pack.buffer", F.llvm_fn);
  llvm::BasicBlock* gather_bb = llvm::BasicBlock::Create(C, "pack.gathered", F.llvm_fn);
  llvm::BasicBlock* cont_bb = llvm::BasicBlock::Create(C, "stored", F.llvm_fn);
  llvm::Value* slot = packed_slot(it->first, value_v(store.operands[0]).v);
  // The binding the tile comes from, where the dispatch's tile cache may hold it.
  const Instruction* binding = cacheable_binding(ld->operands[0]);
  B.CreateCondBr(ok, pack_bb, gather_bb);
  B.SetInsertPoint(pack_bb);
  llvm::Value* ld_elems = B.CreateUDiv(a.stride, B.getInt64(esz));
  if (binding) {
    set_packed_operand(c, slot, emit_cached_pack(c, slot, a.base, ld_elems, *binding, esz));
  } else {
    emit_pack(c, slot, a.base, ld_elems);
    set_packed_operand(c, slot, packed_copy(c, slot));
  }
  B.CreateBr(cont_bb);
  B.SetInsertPoint(gather_bb);
  const uint32_t rows = c.role == 0 ? c.desc.m : c.desc.k, cols = c.role == 0 ? c.desc.k : c.desc.n;
  llvm::Value* dense = entry_alloca(B.getInt8Ty(), uint64_t(rows) * cols * esz, 64);
  llvm::Type* ptr = B.getPtrTy();
  llvm::Type* i64 = B.getInt64Ty();
  llvm::FunctionCallee copy =
      M_get_function(kCopyRowsSymbol, llvm::FunctionType::get(B.getVoidTy(), {ptr, i64, ptr, i64, i64}, false), {0});
  B.CreateCall(copy, {a.base, a.stride, dense, B.getInt64(rows), B.getInt64(cols * esz)});
  B.CreateCall(packer(c.desc, c.parts, c.role), {dense, B.getInt64(cols), packed_copy(c, slot)});
  clear_pack_tag(c, slot);
  set_packed_operand(c, slot, packed_copy(c, slot));
  B.CreateBr(cont_bb);
  B.SetInsertPoint(cont_bb);
  return true;
}

}  // namespace coopvk::jit
