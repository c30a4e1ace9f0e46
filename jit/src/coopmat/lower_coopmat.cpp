// Cooperative matrices (SPV_KHR_cooperative_matrix) at subgroup scope.
//
// A matrix value belongs to the whole subgroup: its rep is one LLVM value in both modes
// of the lowering, [rows x <cols x T>] (T the component's LLVM scalar: an integer of the
// same width for bfloat16 and float8), row-major. Element-wise arithmetic therefore
// works on whole rows, and what walks reps leaf by leaf (map_leaves) sees one vector per
// row. A matrix operation runs once per subgroup.
//
// The per-invocation view (OpCooperativeMatrixLengthKHR, OpCompositeExtract/Insert,
// access chains into a matrix variable) follows one fixed rule: invocation l of the
// subgroup (N lanes) owns elements e = j * N + l of the row-major order, for component
// index j in [0, ceil(rows * cols / N)); e = r * cols + c is element (r, c). Components
// past rows * cols read 0 and ignore writes. So component j of every lane is one run of N
// consecutive elements: a slice of a row, or rows side by side.
//
// Loads and stores (SPV_KHR_cooperative_matrix, "Cooperative Matrix Layout"): element
// (r, c) of a row-major matrix is at Pointer + (r * Stride) pointee elements + c matrix
// components, column-major at Pointer + (c * Stride) pointee elements + r components. A
// row-major row is one vector access; column-major rows are strided gathers/scatters.
// OpCooperativeMatrixMulAddKHR calls the tile kernel of its combination from kernels/
// (runtime_symbols.h) on dense row-major copies of its operands.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
constexpr uint32_t kScopeSubgroup = 3, kScopeWorkgroup = 2;
}  // namespace

bool Lowerer::is_matrix(Id type_id) const {
  auto it = types_.find(type_id);
  return it != types_.end() && it->second.op == uint16_t(Op::OpTypeCooperativeMatrixKHR);
}

bool Lowerer::holds_matrix(Id type_id) {
  if (auto it = holds_matrix_.find(type_id); it != holds_matrix_.end()) return it->second;
  bool r = false;
  auto it = types_.find(type_id);
  if (it != types_.end()) {
    const TypeInfo& t = it->second;
    if (t.op == uint16_t(Op::OpTypeCooperativeMatrixKHR)) r = true;
    else if (t.op == uint16_t(Op::OpTypeArray) || t.op == uint16_t(Op::OpTypeRuntimeArray)) r = holds_matrix(t.elem);
    else if (t.op == uint16_t(Op::OpTypeStruct))
      for (Id mem : t.members) r = r || holds_matrix(mem);
  }
  holds_matrix_[type_id] = r;
  return r;
}

bool Lowerer::rep_pointer_type(Id type_id) {
  // uniformity.cpp keeps every Function / Private variable holding a matrix in rep
  // layout, so a pointer of this type always points into one.
  const TypeInfo& t = type(type_id);
  return t.op == uint16_t(Op::OpTypePointer) &&
         (t.storage == uint32_t(spv::StorageClass::Function) || t.storage == uint32_t(spv::StorageClass::Private)) &&
         holds_object(t.elem);
}

bool Lowerer::is_object(Id id) {
  auto vt = F.value_types.find(id);
  Id t = vt != F.value_types.end() ? vt->second : 0;
  if (!t)
    if (const Instruction* g = m.global(id)) t = g->result_type;
  return t && holds_object(t);
}

llvm::Type* Lowerer::matrix_type(Id type_id) {
  const TypeInfo& t = type(type_id);
  return llvm::ArrayType::get(llvm::FixedVectorType::get(scalar_type(t.elem), t.cols), t.rows);
}

uint32_t Lowerer::matrix_length(const TypeInfo& t) const { return (t.rows * t.cols + N - 1) / N; }

namespace {
// Same element kind and width, ignoring integer signedness (an operation's operands set it).
bool same_storage(kernels::NumberFormat x, kernels::NumberFormat y) {
  if (x == y) return true;
  if (kernels::format_is_float(x) || kernels::format_is_float(y)) return false;
  return kernels::format_size(x) == kernels::format_size(y);
}
}  // namespace

void Lowerer::check_coopmat_type(const TypeInfo& t, const Instruction* at) {
  const bool nv = t.use == TypeInfo::kUseNV;
  if (opts.matrix_combinations.empty() || (nv && !opts.nv_matrix))
    fail(nv ? "OpTypeCooperativeMatrixNV needs VK_NV_cooperative_matrix's cooperativeMatrix feature"
            : "cooperative matrix types need VK_KHR_cooperative_matrix's cooperativeMatrix feature",
         at);
  kernels::NumberFormat f = number_format(t.elem, true);
  bool listed = false;
  // A shape is a whole number of an entry's shapes for the use: reductions make such
  // matrices from listed ones (SPV_NV_cooperative_matrix2 / maintenance1, "Reduce": a Row
  // result "can have any supported number of columns", a 2x2 source is twice a listed
  // result; the CTS's reduce_*_changedim and *_2x2 cases use 3x and 2x shapes), and every
  // operation but the multiply-add works on any shape. Multiply-adds must match an entry
  // exactly (check_matrix_combination).
  auto fits = [&](uint32_t rows, uint32_t cols) { return rows && cols && t.rows % rows == 0 && t.cols % cols == 0; };
  if (t.scope != kScopeSubgroup && t.scope != kScopeWorkgroup)
    fail("cooperative matrices of scope " + std::to_string(t.scope) + " are not supported (subgroup or workgroup scope)", at);
  if (t.scope == kScopeWorkgroup && !opts.nv2.workgroup_scope)
    fail("workgroup-scope cooperative matrices need VK_NV_cooperative_matrix2's cooperativeMatrixWorkgroupScope feature",
         at);
  for (const MatrixCombination& c : opts.matrix_combinations) {
    if (c.scope != t.scope) continue;
    using U = spv::CooperativeMatrixUse;
    auto fmt = [](uint8_t v) { return static_cast<kernels::NumberFormat>(v); };
    const bool a = fits(c.m, c.k) && same_storage(f, fmt(c.a));
    const bool b = fits(c.k, c.n) && same_storage(f, fmt(c.b));
    const bool acc = fits(c.m, c.n) && (same_storage(f, fmt(c.c)) || same_storage(f, fmt(c.result)));
    // An NV matrix has no use: it may be any operand of some entry (NV entries never saturate).
    if (nv) listed |= !c.saturating && (a || b || acc);
    else if (t.use == uint32_t(U::MatrixAKHR)) listed |= a;
    else if (t.use == uint32_t(U::MatrixBKHR)) listed |= b;
    else listed |= acc;
  }
  static const char* const kUse[] = {"A", "B", "Accumulator"};
  if (!listed && (t.use <= 2 || nv))
    fail(std::string("cooperative matrix ") + std::to_string(t.rows) + "x" + std::to_string(t.cols) + " of " +
             kernels::format_name(f) + (nv ? std::string(" (NV)") : " for use " + std::string(kUse[t.use])) +
             (t.scope == kScopeWorkgroup ? " at workgroup scope" : "") + " is not in this device's cooperative matrix properties",
         at);
  if (t.rows == 0 || t.cols == 0 || t.rows > kMaxMatrixDimension || t.cols > kMaxMatrixDimension)
    fail("cooperative matrix of " + std::to_string(t.rows) + "x" + std::to_string(t.cols) + " is not supported", at);
  if (t.use > uint32_t(spv::CooperativeMatrixUse::MatrixAccumulatorKHR) && !nv)
    fail("cooperative matrix use " + std::to_string(t.use) + " is not valid", at);
}

llvm::Constant* Lowerer::matrix_constant(Id type_id, llvm::Constant* scalar) {
  auto* mt = llvm::cast<llvm::ArrayType>(matrix_type(type_id));
  auto* row_t = llvm::cast<llvm::FixedVectorType>(mt->getElementType());
  llvm::Constant* row = llvm::ConstantVector::getSplat(row_t->getElementCount(), scalar);
  return llvm::ConstantArray::get(mt, std::vector<llvm::Constant*>(mt->getNumElements(), row));
}

kernels::NumberFormat Lowerer::number_format(Id scalar_type_id, bool is_signed) const {
  const TypeInfo& t = type(scalar_type_id);
  using NF = kernels::NumberFormat;
  if (t.op == uint16_t(Op::OpTypeFloat)) {
    switch (t.fkind) {
      case TypeInfo::FloatKind::BFloat16: return NF::BF16;
      case TypeInfo::FloatKind::E4M3: return NF::E4M3;
      case TypeInfo::FloatKind::E5M2: return NF::E5M2;
      default: return t.width == 16 ? NF::F16 : t.width == 32 ? NF::F32 : NF::F64;
    }
  }
  switch (t.width) {
    case 8: return is_signed ? NF::I8 : NF::U8;
    case 16: return is_signed ? NF::I16 : NF::U16;
    case 32: return is_signed ? NF::I32 : NF::U32;
    default: return is_signed ? NF::I64 : NF::U64;
  }
}

void Lowerer::check_matrix_combination(const kernels::TileMmaDesc& d, uint32_t scope, const Instruction* at) {
  // An exact entry's shape, or with flexible dimensions (and at workgroup scope, where
  // entries are granularities) multiples of it (SPV_NV_cooperative_matrix2 /
  // VkCooperativeMatrixFlexibleDimensionsPropertiesNV: "M, N, K must be multiples of
  // MGranularity, NGranularity, KGranularity"), up to the largest dimension.
  auto shape_ok = [&](const MatrixCombination& c) {
    if (!c.flexible) return c.m == d.m && c.n == d.n && c.k == d.k;
    return c.m && c.n && c.k && d.m % c.m == 0 && d.n % c.n == 0 && d.k % c.k == 0 && d.m <= c.max_dimension &&
           d.n <= c.max_dimension && d.k <= c.max_dimension;
  };
  for (const MatrixCombination& c : opts.matrix_combinations)
    if (c.scope == scope && shape_ok(c) && c.a == uint8_t(d.a) && c.b == uint8_t(d.b) && c.c == uint8_t(d.c) &&
        c.result == uint8_t(d.d) && c.saturating == d.saturate)
      return;
  fail(std::string("cooperative matrix multiply-add ") + std::to_string(d.m) + "x" + std::to_string(d.n) + "x" +
           std::to_string(d.k) + " " + kernels::format_name(d.a) + " x " + kernels::format_name(d.b) + " + " +
           kernels::format_name(d.c) + " -> " + kernels::format_name(d.d) + (d.saturate ? " saturating" : "") +
           (scope == 2 ? " at workgroup scope" : "") + " is not in this device's cooperative matrix properties",
       at);
}

// ---- dense copies (for kernels) ----------------------------------------------------------

llvm::Value* Lowerer::matrix_to_memory(llvm::Value* mat, const TypeInfo& t) {
  uint64_t esz = layout(t.elem).size;
  llvm::AllocaInst* buf = entry_alloca(B.getInt8Ty(), uint64_t(t.rows) * t.cols * esz, 64);
  for (uint32_t r = 0; r < t.rows; ++r)
    B.CreateAlignedStore(B.CreateExtractValue(mat, r), B.CreateConstGEP1_64(B.getInt8Ty(), buf, r * t.cols * esz),
                         llvm::Align(esz));
  return buf;
}

bool writes_memory(const Instruction& in) {
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpStore: case Op::OpCopyMemory: case Op::OpCopyMemorySized: case Op::OpFunctionCall:
    case Op::OpControlBarrier: case Op::OpMemoryBarrier: case Op::OpCooperativeMatrixStoreKHR:
    case Op::OpCooperativeMatrixMulAddKHR: case Op::OpEmitVertex:
    case Op::OpCooperativeMatrixReduceEXT: case Op::OpCooperativeMatrixPerElementOpEXT:  // they call functions
      return true;
    default:
      return in.opcode >= uint16_t(Op::OpAtomicLoad) && in.opcode <= uint16_t(Op::OpAtomicXor);
  }
}
namespace {
bool touches_memory(const Instruction& in) {
  return writes_memory(in) || in.opcode == uint16_t(Op::OpLoad) || in.opcode == uint16_t(Op::OpCooperativeMatrixLoadKHR);
}
}  // namespace

// The body of the current block and the position of `in` in it (`in` is one of its
// instructions), or nullptr.
static const std::vector<Instruction>* body_of(const Function& fn, uint32_t block, const Instruction& in, size_t* at) {
  const auto& body = fn.blocks[block].body;
  if (body.empty() || &in < body.data() || &in >= body.data() + body.size()) return nullptr;
  *at = size_t(&in - body.data());
  return &body;
}

bool Lowerer::same_pointer(Id p, Id q) const {
  if (p == q) return true;
  const Instruction* a = m.local(p);
  const Instruction* b = m.local(q);
  auto chain = [](const Instruction* x) {
    return x && (x->opcode == uint16_t(Op::OpAccessChain) || x->opcode == uint16_t(Op::OpInBoundsAccessChain));
  };
  if (!chain(a) || !chain(b) || a->operands.size() != b->operands.size()) return false;
  for (size_t k = 1; k < a->operands.size(); ++k)
    if (a->operands[k] != b->operands[k]) return false;
  return same_pointer(a->operands[0], b->operands[0]);
}

llvm::Value* Lowerer::matrix_in_memory(Id value, const Instruction& use) {
  const Instruction* ld = m.local(value);
  if (!ld || ld->opcode != uint16_t(Op::OpLoad)) return nullptr;
  Id ptr = ld->operands.at(0);
  if (!F.rep_ptrs.count(ptr) || !is_matrix(ld->result_type)) return nullptr;
  // Rows without padding: the variable holds the dense row-major tile the kernels take.
  const TypeInfo& t = type(ld->result_type);
  llvm::Type* row = matrix_type(ld->result_type)->getArrayElementType();
  if (M->getDataLayout().getTypeAllocSize(row) != uint64_t(t.cols) * layout(t.elem).size) return nullptr;
  size_t at = 0;
  const auto* body = body_of(*F.fn, F.current_block, use, &at);
  if (!body) return nullptr;
  size_t from = size_t(ld - body->data());
  if (ld < body->data() || from >= at) return nullptr;  // not earlier in this block
  for (size_t i = from + 1; i < at; ++i)
    if (writes_memory((*body)[i])) return nullptr;
  return value_v(ptr).v;
}

bool Lowerer::result_stored_back(const Instruction& muladd, Id c_value) {
  // The next instruction of the block that touches memory stores the result where C was
  // loaded from: writing D there now is the same as that store.
  const Instruction* ld = m.local(c_value);
  size_t at = 0;
  const auto* body = body_of(*F.fn, F.current_block, muladd, &at);
  if (!ld || !body) return false;
  for (size_t i = at + 1; i < body->size(); ++i) {
    const Instruction& x = (*body)[i];
    if (!touches_memory(x)) continue;
    return x.opcode == uint16_t(Op::OpStore) && x.operands.size() >= 2 && x.operands[1] == muladd.result &&
           same_pointer(x.operands[0], ld->operands.at(0));
  }
  return false;
}

llvm::Value* Lowerer::matrix_from_memory(llvm::Value* buf, Id type_id) {
  const TypeInfo& t = type(type_id);
  uint64_t esz = layout(t.elem).size;
  llvm::Type* mt = matrix_type(type_id);
  llvm::Value* mat = llvm::PoisonValue::get(mt);
  for (uint32_t r = 0; r < t.rows; ++r)
    mat = B.CreateInsertValue(
        mat,
        B.CreateAlignedLoad(mt->getArrayElementType(), B.CreateConstGEP1_64(B.getInt8Ty(), buf, r * t.cols * esz),
                            llvm::Align(esz)),
        r);
  return mat;
}

// ---- the per-invocation view ------------------------------------------------------------

llvm::Value* Lowerer::matrix_component(llvm::Value* mat, const TypeInfo& t, llvm::Value* j) {
  // Lane l: element j * N + l (row-major), or 0 past the end.
  llvm::Type* et = scalar_type(t.elem);
  llvm::Type* lanes_t = llvm::FixedVectorType::get(et, N);
  const uint32_t total = t.rows * t.cols;
  if (auto* cj = llvm::dyn_cast<llvm::ConstantInt>(j)) {
    uint64_t base = cj->getZExtValue() * N;
    llvm::Value* out = llvm::Constant::getNullValue(lanes_t);
    for (uint32_t l = 0; l < N; ++l) {
      uint64_t e = base + l;
      if (e >= total) break;
      out = B.CreateInsertElement(out, B.CreateExtractElement(B.CreateExtractValue(mat, unsigned(e / t.cols)), e % t.cols), l);
    }
    return out;
  }
  // A run-time index (uniform): through a dense copy, one vector load.
  llvm::Value* buf = matrix_to_memory(mat, t);
  uint64_t esz = layout(t.elem).size;
  llvm::Value* padded = entry_alloca(B.getInt8Ty(), (uint64_t(matrix_length(t)) * N) * esz, 64);
  B.CreateMemSet(padded, B.getInt8(0), B.getInt64(uint64_t(matrix_length(t)) * N * esz), llvm::Align(64));
  B.CreateMemCpy(padded, llvm::Align(64), buf, llvm::Align(64), B.getInt64(uint64_t(total) * esz));
  llvm::Value* off = B.CreateMul(B.CreateZExtOrTrunc(j, B.getInt64Ty()), B.getInt64(uint64_t(N) * esz));
  llvm::Value* clamped = B.CreateSelect(B.CreateICmpULT(off, B.getInt64(uint64_t(matrix_length(t)) * N * esz)), off,
                                        B.getInt64(0));
  return B.CreateAlignedLoad(lanes_t, B.CreateGEP(B.getInt8Ty(), padded, clamped), llvm::Align(esz));
}

llvm::Value* Lowerer::matrix_set_component(llvm::Value* mat, const TypeInfo& t, uint64_t j, llvm::Value* lanes_v) {
  const uint32_t total = t.rows * t.cols;
  for (uint32_t l = 0; l < N; ++l) {
    uint64_t e = j * N + l;
    if (e >= total) break;
    unsigned r = unsigned(e / t.cols), c = unsigned(e % t.cols);
    llvm::Value* row = B.CreateExtractValue(mat, r);
    // An inactive lane (past the end of a partial subgroup) leaves its element alone.
    llvm::Value* v = B.CreateSelect(B.CreateExtractElement(mask, l), B.CreateExtractElement(lanes_v, l),
                                    B.CreateExtractElement(row, c));
    mat = B.CreateInsertValue(mat, B.CreateInsertElement(row, v, c), r);
  }
  return mat;
}

llvm::Value* Lowerer::matrix_splat(Id type_id, Val x) {
  const TypeInfo& t = type(type_id);
  llvm::Type* mt = matrix_type(type_id);
  llvm::Value* mat = llvm::PoisonValue::get(mt);
  if (x.uniform) {
    llvm::Value* row = B.CreateVectorSplat(t.cols, x.v);
    for (uint32_t r = 0; r < t.rows; ++r) mat = B.CreateInsertValue(mat, row, r);
    return mat;
  }
  // Each invocation's value goes to the elements it owns (the spec wants it uniform; this
  // keeps the per-invocation rule when it is not).
  for (uint32_t r = 0; r < t.rows; ++r) {
    std::vector<int> idx;
    for (uint32_t c = 0; c < t.cols; ++c) idx.push_back(int((uint64_t(r) * t.cols + c) % N));
    mat = B.CreateInsertValue(mat, B.CreateShuffleVector(x.v, x.v, idx), r);
  }
  return mat;
}

// ---- loads and stores ------------------------------------------------------------------

namespace {
struct MatrixAccess {
  llvm::Value* base;    // the pointer, uniform
  llvm::Value* stride;  // in bytes between rows (row-major) or columns (column-major), i64
  bool column_major;
};
}  // namespace

Lowerer::MatrixAddressing Lowerer::matrix_addressing(Id pointer, Id layout_id, Id stride_id, const Instruction& in) {
  MatrixAddressing a;
  if (type(type_of(pointer)).op != uint16_t(Op::OpTypePointer))
    fail("a cooperative matrix load or store needs a pointer", &in);
  if (stride_id) {
    const TypeInfo& st = type(type_of(stride_id));
    if (st.op != uint16_t(Op::OpTypeInt)) fail("a cooperative matrix stride must be a scalar integer", &in);
  }
  Val p = value_v(pointer);
  if (F.rep_ptrs.count(pointer) || rep_globals.count(pointer))
    fail("cooperative matrix load or store through a Function or Private variable is not supported", &in);
  a.base = p.uniform ? p.v : to_uniform(p.v);
  uint64_t lay = constant_u64(layout_id);
  if (lay > uint64_t(spv::CooperativeMatrixLayout::ColumnMajorKHR))
    fail("cooperative matrix layout " + std::to_string(lay) + " is not supported", &in);
  a.column_major = lay == uint64_t(spv::CooperativeMatrixLayout::ColumnMajorKHR);
  Id pointee = type(type_of(pointer)).elem;
  uint64_t psize = layout(pointee).size;
  llvm::Value* stride = B.getInt64(0);
  if (stride_id) {
    Val s = value_v(stride_id);
    llvm::Value* sv = s.uniform ? s.v : to_uniform(s.v);
    // Strides are integers of the shader's choosing, signed per SPIR-V's "treated as signed".
    stride = B.CreateSExtOrTrunc(sv, B.getInt64Ty());
  }
  a.stride = B.CreateMul(stride, B.getInt64(psize));
  a.bounds = bounds_of(pointer, true);
  return a;
}

void Lowerer::matrix_share_addressing(MatrixAddressing& a, const TypeInfo& t) {
  // A workgroup-scope matrix's share starts at its first row (lower_coopmat_workgroup.cpp):
  // row-major, that many strides on; column-major, that many components on.
  if (!split_matrix(t)) return;
  llvm::Value* row0 = B.CreateZExt(wg_row0(t), B.getInt64Ty());
  llvm::Value* off = a.column_major ? B.CreateMul(row0, B.getInt64(layout(t.elem).size)) : B.CreateMul(row0, a.stride);
  a.base = B.CreateGEP(B.getInt8Ty(), a.base, off);
}

llvm::Value* Lowerer::matrix_line_addresses(const MatrixAddressing& a, const TypeInfo& t, uint32_t r) {
  // Row r's elements: row-major, consecutive components from base + r * stride;
  // column-major, component r of each column c at base + c * stride.
  uint64_t esz = layout(t.elem).size;
  llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), t.cols);
  std::vector<llvm::Constant*> cs;
  for (uint32_t c = 0; c < t.cols; ++c) cs.push_back(B.getInt64(c));
  llvm::Value* col = llvm::ConstantVector::get(cs);
  llvm::Value* offs;
  if (a.column_major)
    offs = B.CreateAdd(B.CreateMul(col, B.CreateVectorSplat(t.cols, a.stride)), B.CreateVectorSplat(t.cols, B.getInt64(r * esz)));
  else
    offs = B.CreateAdd(B.CreateVectorSplat(t.cols, B.CreateMul(a.stride, B.getInt64(r))),
                       B.CreateMul(col, llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(t.cols), B.getInt64(esz))));
  (void)i64v;
  return B.CreateGEP(B.getInt8Ty(), B.CreateVectorSplat(t.cols, a.base), offs);
}

llvm::Value* Lowerer::matrix_line_in_bounds(const MatrixAddressing& a, llvm::Value* addrs, uint64_t esz) {
  // Robust access: each element checked against the bound range on its own (a matrix
  // row may straddle the end of the buffer).
  const Bounds& bd = *a.bounds;
  unsigned n = unsigned(llvm::cast<llvm::FixedVectorType>(addrs->getType())->getNumElements());
  auto widen = [&](const Val& v) {
    llvm::Value* x = v.uniform ? v.v : to_uniform(v.v);
    return B.CreateVectorSplat(n, x);
  };
  llvm::Type* i64v = llvm::FixedVectorType::get(B.getInt64Ty(), n);
  llvm::Value* off = B.CreateSub(B.CreatePtrToInt(addrs, i64v), B.CreatePtrToInt(widen(bd.base), i64v));
  llvm::Value* range = widen(bd.range);
  llvm::Value* sz = B.CreateVectorSplat(n, B.getInt64(esz));
  return B.CreateAnd(B.CreateICmpUGE(range, sz), B.CreateICmpULE(off, B.CreateSub(range, sz)));
}

void Lowerer::lower_matrix_load(const Instruction& in) {
  const auto& o = in.operands;
  if (!is_matrix(in.result_type) || o.size() < 2) fail("OpCooperativeMatrixLoadKHR must load a cooperative matrix", &in);
  const TypeInfo& t = type(in.result_type);
  MatrixAddressing a = matrix_addressing(o.at(0), o.at(1), o.size() > 2 ? o[2] : 0, in);
  matrix_share_addressing(a, t);
  uint64_t esz = layout(t.elem).size;
  llvm::Type* mt = matrix_type(in.result_type);
  auto* row_t = llvm::cast<llvm::FixedVectorType>(mt->getArrayElementType());
  llvm::Value* mat = llvm::PoisonValue::get(mt);
  llvm::Align align(esz);
  for (uint32_t r = 0; r < t.rows; ++r) {
    llvm::Value* row;
    llvm::Value* valid = wg_row_valid(t, r);  // padding rows of a workgroup-scope share read 0
    llvm::Value* row_start = B.CreateGEP(B.getInt8Ty(), a.base, B.CreateMul(a.stride, B.getInt64(r)));
    if (!a.column_major && !a.bounds && llvm::isa<llvm::Constant>(valid)) {
      row = B.CreateAlignedLoad(row_t, row_start, align);
    } else if (!a.column_major) {
      // A row-major row is contiguous: one masked vector load (masked-off elements are not
      // read), not a gather, whose code for wide rows takes LLVM minutes to allocate.
      llvm::Value* ok = B.CreateVectorSplat(t.cols, valid);
      if (a.bounds) ok = B.CreateAnd(ok, matrix_line_in_bounds(a, matrix_line_addresses(a, t, r), esz));
      row = B.CreateMaskedLoad(row_t, row_start, align, ok, llvm::Constant::getNullValue(row_t));
    } else {
      llvm::Value* addrs = matrix_line_addresses(a, t, r);
      llvm::Value* ok = a.bounds ? matrix_line_in_bounds(a, addrs, esz)
                                 : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(B.getInt1Ty(), t.cols));
      ok = B.CreateAnd(ok, B.CreateVectorSplat(t.cols, valid));
      // Out of bounds: zero, never a read outside the buffer.
      row = B.CreateMaskedGather(row_t, addrs, align, ok, llvm::Constant::getNullValue(row_t));
    }
    mat = B.CreateInsertValue(mat, row, r);
  }
  define_v(in.result, {mat, true});
}

void Lowerer::lower_matrix_store(const Instruction& in) {
  const auto& o = in.operands;
  if (o.size() < 3 || !is_matrix(type_of(o[1]))) fail("OpCooperativeMatrixStoreKHR must store a cooperative matrix", &in);
  Id obj = o.at(1);
  const TypeInfo& t = type(type_of(obj));
  MatrixAddressing a = matrix_addressing(o.at(0), o.at(2), o.size() > 3 ? o[3] : 0, in);
  matrix_share_addressing(a, t);
  uint64_t esz = layout(t.elem).size;
  llvm::Value* mat = value_v(obj).v;
  llvm::Align align(esz);
  for (uint32_t r = 0; r < t.rows; ++r) {
    llvm::Value* row = B.CreateExtractValue(mat, r);
    llvm::Value* valid = wg_row_valid(t, r);  // padding rows of a workgroup-scope share are not stored
    llvm::Value* row_start = B.CreateGEP(B.getInt8Ty(), a.base, B.CreateMul(a.stride, B.getInt64(r)));
    if (!a.column_major && !a.bounds && llvm::isa<llvm::Constant>(valid)) {
      B.CreateAlignedStore(row, row_start, align);
      continue;
    }
    if (!a.column_major) {  // contiguous: a masked vector store (see the load)
      llvm::Value* ok = B.CreateVectorSplat(t.cols, valid);
      if (a.bounds) ok = B.CreateAnd(ok, matrix_line_in_bounds(a, matrix_line_addresses(a, t, r), esz));
      B.CreateMaskedStore(row, row_start, align, ok);
      continue;
    }
    llvm::Value* addrs = matrix_line_addresses(a, t, r);
    llvm::Value* ok = a.bounds ? matrix_line_in_bounds(a, addrs, esz)
                               : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(B.getInt1Ty(), t.cols));
    ok = B.CreateAnd(ok, B.CreateVectorSplat(t.cols, valid));
    B.CreateMaskedScatter(row, addrs, align, ok);  // out of bounds: dropped
  }
}

// ---- multiply-add ----------------------------------------------------------------------

kernels::TileMmaDesc Lowerer::muladd_desc(const Instruction& in) {
  const auto& o = in.operands;
  const TypeInfo &ta = type(type_of(o.at(0))), &tb = type(type_of(o.at(1))), &tc = type(type_of(o.at(2)));
  const TypeInfo& tr = type(in.result_type);
  uint32_t ops = o.size() > 3 ? o[3] : 0;
  using M = spv::CooperativeMatrixOperandsMask;
  auto flag = [&](M bit) { return (ops & uint32_t(bit)) != 0; };
  kernels::TileMmaDesc d{};
  d.a = number_format(ta.elem, flag(M::MatrixASignedComponentsKHR));
  d.b = number_format(tb.elem, flag(M::MatrixBSignedComponentsKHR));
  d.c = number_format(tc.elem, flag(M::MatrixCSignedComponentsKHR));
  d.d = number_format(tr.elem, flag(M::MatrixResultSignedComponentsKHR));
  d.saturate = flag(M::SaturatingAccumulationKHR);
  d.m = ta.full_rows ? ta.full_rows : ta.rows;  // a workgroup-scope matrix's, not one subgroup's share
  d.k = ta.cols;
  d.n = tb.cols;
  return d;
}

void Lowerer::lower_matrix_muladd(const Instruction& in) {
  const auto& o = in.operands;
  if (o.size() < 3) fail("OpCooperativeMatrixMulAddKHR takes A, B and C", &in);
  Id ta_id = type_of(o.at(0)), tb_id = type_of(o.at(1)), tc_id = type_of(o.at(2));
  if (!is_matrix(ta_id) || !is_matrix(tb_id) || !is_matrix(tc_id) || !is_matrix(in.result_type))
    fail("cooperative matrix multiply-add of non-matrix operands", &in);
  const TypeInfo &ta = type(ta_id), &tb = type(tb_id), &tc = type(tc_id), &tr = type(in.result_type);
  const kernels::TileMmaDesc d = muladd_desc(in);
  auto whole = [](const TypeInfo& t) { return t.full_rows ? t.full_rows : t.rows; };
  if (whole(tb) != d.k || whole(tc) != d.m || tc.cols != d.n || whole(tr) != d.m || tr.cols != d.n)
    fail("cooperative matrix multiply-add with inconsistent M, N, K", &in);
  if (ta.scope != tb.scope || ta.scope != tc.scope || ta.scope != tr.scope)
    fail("cooperative matrix multiply-add of matrices of different scopes", &in);
  if (!kernels::tile_mma_supported(d))
    fail(std::string("cooperative matrix multiply-add ") + kernels::format_name(d.a) + " x " +
             kernels::format_name(d.b) + " + " + kernels::format_name(d.c) + " -> " + kernels::format_name(d.d) +
             (d.saturate ? " (saturating)" : "") + " is not supported",
         &in);
  check_matrix_combination(d, ta.scope, &in);
  // A workgroup-scope matrix split over the subgroups: this subgroup's rows of D are its
  // rows of A x all of B + its rows of C (A, C and D are split alike), so B is gathered
  // (lower_coopmat_workgroup.cpp) and the kernel runs on the share's rows.
  const bool split = split_matrix(ta);
  if (split && (ta.rows != tc.rows || tc.rows != tr.rows))
    fail("cooperative matrix multiply-add with inconsistent M", &in);
  kernels::TileMmaDesc share = d;
  share.m = ta.rows;
  // Operands just loaded from a matrix variable are read where they are; the others are
  // written out. The usual `acc = coopMatMulAdd(a, b, acc)` in a K loop then updates the
  // accumulator variable in place, with no copy in or out (at either scope).
  llvm::Value* a = matrix_in_memory(o[0], in);
  llvm::Value* b = split_matrix(tb) ? wg_gather(value_v(o[1]).v, tb) : matrix_in_memory(o[1], in);
  llvm::Value* c_src = matrix_in_memory(o[2], in);
  llvm::Value* dst = nullptr;
  llvm::Value* c = c_src;
  if (c_src && d.c == d.d && result_stored_back(in, o[2])) {
    dst = c_src;
  } else {
    if (!c) c = matrix_to_memory(value_v(o[2]).v, tc);
    // D in place of a copy of C when the formats agree (the kernels allow it), else its own buffer.
    dst = d.c == d.d && !c_src ? c : entry_alloca(B.getInt8Ty(), uint64_t(share.m) * d.n * layout(tr.elem).size, 64);
  }
  if (split || !packed_muladd(in, d, a, b, c, dst)) {
    if (!a) a = matrix_to_memory(value_v(o[0]).v, ta);
    if (!b) b = matrix_to_memory(value_v(o[1]).v, tb);
    call_tile_mma(share, a, b, c, dst);
  }
  define_v(in.result, {matrix_from_memory(dst, in.result_type), true});
}

void Lowerer::call_tile_mma(const kernels::TileMmaDesc& d, llvm::Value* a, llvm::Value* b, llvm::Value* c,
                            llvm::Value* dst) {
  llvm::Type* ptr = B.getPtrTy();
  llvm::Type* i32 = B.getInt32Ty();
  llvm::FunctionCallee f = M_get_function(
      mma_symbol(d), llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr, ptr, ptr, i32, i32, i32}, false), {0, 1, 2});
  B.CreateCall(f, {a, b, c, dst, B.getInt32(d.m), B.getInt32(d.n), B.getInt32(d.k)});
}

llvm::FunctionCallee Lowerer::M_get_function(const std::string& name, llvm::FunctionType* ft,
                                             std::initializer_list<unsigned> read_only) {
  llvm::FunctionCallee f = M->getOrInsertFunction(name, ft);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    fn->setDoesNotThrow();
    fn->addFnAttr(llvm::Attribute::NoRecurse);
    // The kernels' inputs, for LLVM's alias analysis: calls that read a buffer do not
    // make it forget what it knows of the memory.
    for (unsigned k : read_only) {
      fn->addParamAttr(k, llvm::Attribute::ReadOnly);
      fn->addParamAttr(k, llvm::Attribute::NoCapture);
    }
  }
  return f;
}

// ---- conversions -----------------------------------------------------------------------

llvm::Value* Lowerer::convert_via_kernels(llvm::Value* v, kernels::NumberFormat from, kernels::NumberFormat to,
                                          uint64_t count, llvm::Type* result_t, bool saturate) {
  // Through memory: v holds `count` values of `from` (a vector, or a matrix rep);
  // kernels::convert rounds and saturates exactly as the number-format tests check.
  llvm::Type* vt = v->getType();
  uint64_t fsz = kernels::format_size(from), tsz = kernels::format_size(to);
  llvm::AllocaInst* src = entry_alloca(B.getInt8Ty(), count * fsz, 64);
  llvm::AllocaInst* dst = entry_alloca(B.getInt8Ty(), count * tsz, 64);
  auto leaves = [&](llvm::Type* t) { return t->isArrayTy() ? unsigned(t->getArrayNumElements()) : 1u; };
  uint64_t per = count / leaves(vt);
  for (unsigned i = 0; i < leaves(vt); ++i) {
    llvm::Value* leaf = vt->isArrayTy() ? B.CreateExtractValue(v, i) : v;
    B.CreateAlignedStore(leaf, B.CreateConstGEP1_64(B.getInt8Ty(), src, i * per * fsz), llvm::Align(fsz));
  }
  llvm::Type* i32 = B.getInt32Ty();
  llvm::FunctionCallee f = M_get_function(
      kConvertSymbol,
      llvm::FunctionType::get(B.getVoidTy(), {i32, B.getPtrTy(), i32, B.getPtrTy(), B.getInt64Ty(), i32}, false));
  // (src_format, src, dst_format, dst, n, saturate) per runtime_symbols.h
  B.CreateCall(f, {B.getInt32(uint32_t(from)), src, B.getInt32(uint32_t(to)), dst, B.getInt64(count),
                   B.getInt32(saturate ? 1 : 0)});
  llvm::Value* out = llvm::PoisonValue::get(result_t);
  for (unsigned i = 0; i < leaves(result_t); ++i) {
    llvm::Type* lt = result_t->isArrayTy() ? result_t->getArrayElementType() : result_t;
    llvm::Value* leaf = B.CreateAlignedLoad(lt, B.CreateConstGEP1_64(B.getInt8Ty(), dst, i * per * tsz), llvm::Align(tsz));
    out = result_t->isArrayTy() ? B.CreateInsertValue(out, leaf, i) : leaf;
  }
  return out;
}

// ---- dispatch ----------------------------------------------------------------------------

bool Lowerer::lower_coopmat(const Instruction& in) {
  const auto& o = in.operands;
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpCooperativeMatrixLoadKHR:
      lower_matrix_load(in);
      return true;
    case Op::OpCooperativeMatrixStoreKHR:
      lower_matrix_store(in);
      return true;
    case Op::OpCooperativeMatrixMulAddKHR:
      lower_matrix_muladd(in);
      return true;
    case Op::OpCooperativeMatrixLengthKHR: {
      const TypeInfo& t = type(o.at(0));
      if (t.op != uint16_t(Op::OpTypeCooperativeMatrixKHR)) fail("OpCooperativeMatrixLengthKHR of a non-matrix type", &in);
      define_v(in.result, {B.getInt32(matrix_length(t)), true});
      return true;
    }
    case Op::OpCompositeConstruct:
      if (!is_matrix(in.result_type)) return false;
      if (o.size() != 1) fail("a cooperative matrix is constructed from exactly one scalar", &in);
      define_v(in.result, {matrix_splat(in.result_type, value_v(o[0])), true});
      return true;
    case Op::OpCompositeExtract: {
      Id src_t = type_of(o.at(0));
      if (!is_matrix(src_t)) return false;
      if (o.size() != 2) fail("OpCompositeExtract from a cooperative matrix takes one index", &in);
      const TypeInfo& t = type(src_t);
      if (o[1] >= matrix_length(t)) fail("cooperative matrix component index out of range", &in);
      define_v(in.result, {matrix_component(value_v(o[0]).v, t, B.getInt32(o[1])), false});
      return true;
    }
    case Op::OpCompositeInsert: {
      if (!is_matrix(in.result_type)) return false;
      if (o.size() != 3) fail("OpCompositeInsert into a cooperative matrix takes one index", &in);
      const TypeInfo& t = type(in.result_type);
      if (o[2] >= matrix_length(t)) fail("cooperative matrix component index out of range", &in);
      Val obj = value_v(o[0]);
      llvm::Value* lanes_v = obj.uniform ? B.CreateVectorSplat(N, obj.v) : obj.v;
      define_v(in.result, {matrix_set_component(value_v(o[1]).v, t, o[2], lanes_v), true});
      return true;
    }
    case Op::OpMatrixTimesScalar: {
      if (!is_matrix(in.result_type)) return false;
      const TypeInfo& t = type(in.result_type);
      // SPV_KHR_cooperative_matrix allows matrix types here without naming component
      // types; glslang emits it for `matrix * scalar` on integer matrices too (the CTS's
      // matrixtimesscalar cases), so integers multiply (wrapping) as OpIMul would.
      // bfloat16 / float8 are not among the instructions their extensions allow.
      const TypeInfo& et = type(t.elem);
      bool fp = et.op == uint16_t(Op::OpTypeFloat);
      if (fp && et.fkind != TypeInfo::FloatKind::Ieee)
        fail("OpMatrixTimesScalar on a matrix of bfloat16 or float8 (not allowed by SPV_KHR_bfloat16 / SPV_EXT_float8)", &in);
      Val s = value_v(o.at(1));
      llvm::Value* row_s = B.CreateVectorSplat(t.cols, s.uniform ? s.v : to_uniform(s.v));
      llvm::Value* mat = value_v(o[0]).v;
      for (uint32_t r = 0; r < t.rows; ++r) {
        llvm::Value* row = B.CreateExtractValue(mat, r);
        mat = B.CreateInsertValue(mat, fp ? B.CreateFMul(row, row_s) : B.CreateMul(row, row_s), r);
      }
      define_v(in.result, {mat, true});
      return true;
    }
    case Op::OpFConvert: case Op::OpSConvert: case Op::OpUConvert: case Op::OpConvertFToS:
    case Op::OpConvertFToU: case Op::OpConvertSToF: case Op::OpConvertUToF: case Op::OpBitcast: {
      if (!is_matrix(in.result_type)) return false;
      const TypeInfo& rt = type(in.result_type);
      const TypeInfo& st = type(type_of(o.at(0)));
      if (!is_matrix(type_of(o[0]))) fail("conversion of a cooperative matrix from a non-matrix", &in);
      // OpBitcast keeps its use and shape (SPV_EXT_cooperative_matrix_maintenance1 relaxes
      // only the value conversions); the others may change the use and transpose.
      if (in.opcode == uint16_t(Op::OpBitcast) &&
          (st.use != rt.use || m.has_decoration(in.result, uint32_t(spv::Decoration::CooperativeMatrixTransposeEXT))))
        fail("OpBitcast cannot change a cooperative matrix's use or transpose it", &in);
      llvm::Value* src = matrix_reshaped_source(in, st, rt);
      llvm::Type* dst_t = matrix_type(in.result_type);
      define_v(in.result, {convert_leaves(in, src, st.elem, rt.elem, dst_t, uint64_t(rt.rows) * rt.cols), true});
      return true;
    }
    default:
      return false;
  }
}

}  // namespace coopvk::jit
