// Cooperative matrices of workgroup scope (SPV_NV_cooperative_matrix2 with
// cooperativeMatrixWorkgroupScope): one matrix for the whole workgroup.
//
// The kernel function runs once per subgroup, so a workgroup-scope matrix is split by
// rows: with S subgroups in the workgroup, subgroup s holds rows [s * P, s * P + P) with
// P = ceil(rows / S), as the rep of a P-row matrix of lower_coopmat.cpp. Everything that
// works element by element or row by row then runs on that share unchanged: arithmetic,
// conversions, constants, component access (invocation l of subgroup s owns the share's
// elements j * N + l, so each invocation has ceil(P * cols / N) components, the same in
// every invocation, as OpCooperativeMatrixLengthKHR must say), row reductions, per-element
// operations (with the share's row offset), loads and stores (from the share's first row).
// Rows past the matrix's last (when S does not divide its rows) are padding: loads leave
// them 0, stores skip them, callbacks do not see them.
//
// What needs other rows goes through a scratch area of shared memory past the shader's
// own (cooperativeMatrixWorkgroupScopeReservedSharedMemory stays 0): each subgroup writes
// its rows there between two workgroup barriers and reads the whole matrix back. A
// multiply-add gathers B (its K rows are every subgroup's) and multiplies its own rows
// of A and C on the tile kernels; column and 2x2 reductions and transposes run the
// whole-matrix code of lower_coopmat_ext.cpp on the gathered matrix and keep their rows of
// the result. Cooperative instructions are in uniform control flow of the workgroup
// (SPV_KHR_cooperative_matrix: "executed ... by all invocations of the scope"), so every
// subgroup reaches each barrier.
#include <llvm/IR/Constants.h>

#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
constexpr uint32_t kScopeWorkgroup = 2;
bool pow2(uint64_t v) { return v && !(v & (v - 1)); }
}  // namespace

void Lowerer::plan_workgroup_matrices() {
  const uint64_t invocations = uint64_t(local_size[0]) * local_size[1] * local_size[2];
  bool any = false;
  for (auto& [id, t] : types_)
    any = any || (t.op == uint16_t(Op::OpTypeCooperativeMatrixKHR) && t.scope == kScopeWorkgroup);
  if (!any) return;
  // VUID-VkPipelineShaderStageCreateInfo-module-10169: the workgroup is a power-of-two
  // multiple of the effective subgroup size, as is its X size, and at most
  // cooperativeMatrixWorkgroupScopeMaxWorkgroupSize.
  uint32_t max_invocations = 0;
  for (const MatrixCombination& c : opts.matrix_combinations)
    if (c.scope == kScopeWorkgroup) max_invocations = std::max(max_invocations, c.max_invocations);
  const std::string size = std::to_string(local_size[0]) + "x" + std::to_string(local_size[1]) + "x" +
                           std::to_string(local_size[2]);
  if (!pow2(invocations) || invocations > max_invocations)
    fail("workgroup-scope cooperative matrices need a power-of-two workgroup of at most " +
         std::to_string(max_invocations) + " invocations (cooperativeMatrixWorkgroupScopeMaxWorkgroupSize); this one is " +
         size);
  if (invocations % N || local_size[0] % N)
    fail("VUID-VkPipelineShaderStageCreateInfo-module-10169: with workgroup-scope cooperative matrices the "
         "workgroup size in X and in all must be multiples of the effective subgroup size " + std::to_string(N) +
         "; this one is " + size);
  wg_subgroups = uint32_t(invocations / N);
  if (wg_subgroups == 1) return;  // the one subgroup holds every row: subgroup-scope code as it is
  for (auto& [id, t] : types_) {
    if (t.op != uint16_t(Op::OpTypeCooperativeMatrixKHR) || t.scope != kScopeWorkgroup) continue;
    t.full_rows = t.rows;
    t.rows = (t.rows + wg_subgroups - 1) / wg_subgroups;
    wg_scratch_bytes = std::max(wg_scratch_bytes, uint64_t(t.full_rows) * t.cols * layout(t.elem).size);
  }
  rep_cache_.clear();
  urep_cache_.clear();
  // Barriers make the workgroup run its subgroups as fibers, and no subgroup may run
  // ahead of the others (lower_interleave.cpp gives up on shaders with barriers).
  uses_barrier = true;
}

llvm::Value* Lowerer::wg_row0(const TypeInfo& t) {
  return B.CreateMul(ctx_field(kCtxSubgroup), B.getInt32(t.rows));
}

llvm::Value* Lowerer::wg_row_valid(const TypeInfo& t, uint32_t r) {
  if (!split_matrix(t) || uint64_t(t.rows) * wg_subgroups == t.full_rows) return B.getTrue();
  return B.CreateICmpULT(B.CreateAdd(wg_row0(t), B.getInt32(r)), B.getInt32(t.full_rows));
}

llvm::Value* Lowerer::wg_gather(llvm::Value* piece, const TypeInfo& t) {
  const uint64_t esz = layout(t.elem).size, line = uint64_t(t.cols) * esz;
  llvm::Value* ws = ctx_field(kCtxWorkgroup);
  llvm::Value* shared = B.CreateLoad(B.getPtrTy(), B.CreateConstGEP1_64(B.getInt8Ty(), ws, 16));
  llvm::Value* scratch = B.CreateConstGEP1_64(B.getInt8Ty(), shared, wg_scratch_offset);
  // The scratch may still be read by a subgroup finishing the previous gather.
  emit_workgroup_barrier();
  llvm::Value* first = B.CreateMul(B.CreateZExt(wg_row0(t), B.getInt64Ty()), B.getInt64(line));
  llvm::Value* mine = B.CreateGEP(B.getInt8Ty(), scratch, first);
  for (uint32_t r = 0; r < t.rows; ++r) {
    llvm::Value* row = B.CreateExtractValue(piece, r);
    llvm::Value* at = B.CreateConstGEP1_64(B.getInt8Ty(), mine, r * line);
    llvm::Value* ok = B.CreateVectorSplat(t.cols, wg_row_valid(t, r));
    B.CreateMaskedStore(row, at, llvm::Align(esz), ok);
  }
  emit_workgroup_barrier();
  return scratch;
}

llvm::Value* Lowerer::wg_whole(llvm::Value* piece, const TypeInfo& t) {
  llvm::Value* scratch = wg_gather(piece, t);
  const uint64_t esz = layout(t.elem).size;
  auto* row_t = llvm::cast<llvm::ArrayType>(piece->getType())->getElementType();
  llvm::Value* whole = llvm::PoisonValue::get(llvm::ArrayType::get(row_t, t.full_rows));
  for (uint32_t r = 0; r < t.full_rows; ++r)
    whole = B.CreateInsertValue(
        whole, B.CreateAlignedLoad(row_t, B.CreateConstGEP1_64(B.getInt8Ty(), scratch, r * t.cols * esz), llvm::Align(esz)),
        r);
  return whole;
}

llvm::Value* Lowerer::wg_slice(llvm::Value* whole, const TypeInfo& t) {
  // Through a frame buffer of S * P rows (padding rows past the matrix read zeros). The
  // components are the rep's, which may not be t's yet (a transpose converts after).
  auto* row_t = llvm::cast<llvm::ArrayType>(whole->getType())->getElementType();
  const uint64_t esz = row_t->getScalarSizeInBits() / 8, line = uint64_t(t.cols) * esz;
  const uint64_t rows = uint64_t(t.rows) * wg_subgroups;
  llvm::AllocaInst* buf = entry_alloca(B.getInt8Ty(), rows * line, 64);
  B.CreateMemSet(buf, B.getInt8(0), B.getInt64(rows * line), llvm::Align(64));
  for (uint32_t r = 0; r < t.full_rows; ++r)
    B.CreateAlignedStore(B.CreateExtractValue(whole, r), B.CreateConstGEP1_64(B.getInt8Ty(), buf, r * line),
                         llvm::Align(esz));
  llvm::Value* mine =
      B.CreateGEP(B.getInt8Ty(), buf, B.CreateMul(B.CreateZExt(wg_row0(t), B.getInt64Ty()), B.getInt64(line)));
  llvm::Value* piece = llvm::PoisonValue::get(llvm::ArrayType::get(row_t, t.rows));
  for (uint32_t r = 0; r < t.rows; ++r)
    piece = B.CreateInsertValue(
        piece, B.CreateAlignedLoad(row_t, B.CreateConstGEP1_64(B.getInt8Ty(), mine, r * line), llvm::Align(esz)), r);
  return piece;
}

Lowerer::WholeRows::WholeRows(Lowerer& l, std::initializer_list<Id> ids) : L(l) {
  for (Id id : ids) {
    auto it = L.types_.find(id);
    if (it == L.types_.end() || !split_matrix(it->second)) continue;
    bool seen = false;
    for (auto& [s, rows] : saved) seen = seen || s == id;
    if (seen) continue;
    saved.push_back({id, it->second.rows});
    it->second.rows = it->second.full_rows;
  }
}

Lowerer::WholeRows::~WholeRows() {
  for (auto& [id, rows] : saved) L.types_[id].rows = rows;
}

llvm::Value* Lowerer::transposed(Id src, Id src_t, Id res_t) {
  if (!split_matrix(type(src_t))) return matrix_transpose(value_v(src).v, type(src_t));
  llvm::Value* whole = wg_whole(value_v(src).v, type(src_t));
  llvm::Value* t;
  {
    WholeRows full(*this, {src_t, res_t});
    t = matrix_transpose(whole, type(src_t));
  }
  return wg_slice(t, type(res_t));
}

}  // namespace coopvk::jit
