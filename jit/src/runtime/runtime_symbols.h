// Functions compiled shader code calls, by name: the JIT links them in every process from
// their names (a generator in compiler.cpp), never by an address frozen into the code,
// so a pipeline cache blob from another run links to this run's kernels.
//
//   coopvk_jit_workgroup_barrier, coopvk_jit_subgroup_yield
//                                          the workgroup runner (shader_abi.h)
//   coopvk_rt_convert                      kernels::convert() for bfloat16 / float8 values
//   coopvk_rt_coopvec_matmul / _outer / _reduce
//                                          kernels/coopvec_ops.h, one invocation per call
//   coopvk_mma.<a>.<b>.<c>.<d>.s<0|1>.<m>x<n>x<k>
//                                          kernels::tile_mma_kernel() of that combination:
//                                          void(const void* a, const void* b, const void* c,
//                                               void* d, uint32_t m, uint32_t n, uint32_t k)
//   coopvk_mma_split.<part>.<a>.<b>.<c>.<d>.s<0|1>.<m>x<n>x<k>.<a_bytes>x<b_bytes>
//                                          a part of kernels::tile_mma_packed() of that
//                                          combination, whose packed operands have those
//                                          sizes (else the symbol is not found): part a or
//                                          b is void(const void* src, size_t ld, void* packed), mma
//                                          void(const void* ap, const void* bp,
//                                               const void* c, void* d), mma2 two mma
//                                          calls sharing ap (pair_muladds.h)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coopvk/kernels/number_formats.h"
#include "coopvk/kernels/tile_mma.h"

namespace coopvk::jit {

// void coopvk_rt_convert(uint32_t src_format, const void* src, uint32_t dst_format,
//                        void* dst, uint64_t n, uint32_t saturate)
// with kernels::NumberFormat values; saturate selects Overflow::Saturate.
// The calling conventions of the symbols below, as compiled code expects them: part of
// host_signature(), so code serialized by a build with other conventions (in a
// VkPipelineCache) is compiled again rather than linked. Bump with any change of one.
// 2: the split-form packers take the source's row stride.
// 3: serialized shaders say whether they need the runner's fiber stacks.
// 4: the split form has mma2 (two multiply-adds sharing A), which compiled code calls.
// 5: coopvk_rt_copy_rows, which compiled code calls.
// 6: WorkgroupState::pack_epoch and pack_memo, coopvk_jit_subgroup_yield; serialized
//    shaders say whether they interleave their subgroups, and their pack sites.
// 7: DispatchState::tile_cache and coopvk_rt_tile_cache_get, which compiled code calls.
// 8: coopvk_rt_tile_cache_get takes the load site's TileSite.
// 9: serialized shaders say whether they walk the tile cache.
// 10: coopvk_rt_tensor_load / _store, which compiled code calls.
constexpr int kRuntimeAbi = 10;
// More pack sites than this in one shader share nothing beyond (lower_interleave.cpp).
constexpr uint32_t kMaxPackSites = 256;

constexpr const char* kConvertSymbol = "coopvk_rt_convert";
// void (const kernels::CoopVecMatMulDesc*, const kernels::CoopVecMatMulArgs*)
constexpr const char* kCoopVecMatMulSymbol = "coopvk_rt_coopvec_matmul";
// void (const kernels::CoopVecMatMulDesc*, const kernels::CoopVecMatMulArgs* (lane 0's),
//       uint32_t lanes, uint64_t cache_token): every lane at once (coopvec_batch.h)
constexpr const char* kCoopVecMatMulLanesSymbol = "coopvk_rt_coopvec_matmul_lanes";
// void (const kernels::CoopVecOuterDesc*, const kernels::CoopVecOuterArgs*)
constexpr const char* kCoopVecOuterSymbol = "coopvk_rt_coopvec_outer";
// void (uint32_t number_format, uint32_t count, const kernels::CoopVecReduceArgs*)
constexpr const char* kCoopVecReduceSymbol = "coopvk_rt_coopvec_reduce";
// void (const void* src, int64_t src_stride, void* dst, int64_t dst_stride, uint32_t rows,
//       uint32_t cols, uint32_t esz): kernels::transpose_elements
constexpr const char* kTransposeSymbol = "coopvk_rt_transpose";
// void (const void* src, int64_t src_stride, void* dst, uint64_t rows, uint64_t row_bytes):
// rows row_bytes long, src_stride bytes apart (any sign), to dst back to back
constexpr const char* kCopyRowsSymbol = "coopvk_rt_copy_rows";
// const void* (TileCache*, TileSite*, const void* src, uint64_t ld, void* local):
// TileCache::get (coopvk/jit/tile_cache.h declares it)
constexpr const char* kTileCacheSymbol = "coopvk_rt_tile_cache_get";
// void (void* dense, const void* base, const uint32_t* layout, const uint32_t* view,
//       const TensorAccess*) and the store's (const void* dense, void* base, ...):
// runtime/tensor_addressing.h
constexpr const char* kTensorLoadSymbol = "coopvk_rt_tensor_load";
constexpr const char* kTensorStoreSymbol = "coopvk_rt_tensor_store";
// void (uint32_t* status, uint64_t* addresses, uint32_t* coords, uint64_t n, const void* base,
//       const uint32_t* layout, const uint32_t* view, const TensorAccess*): decode-function loads
constexpr const char* kTensorPlanSymbol = "coopvk_rt_tensor_plan";

std::string mma_symbol(const kernels::TileMmaDesc& d);
std::optional<kernels::TileMmaDesc> parse_mma_symbol(const std::string& name);
// part: "a", "b" or "mma".
std::string mma_split_symbol(const kernels::TileMmaDesc& d, const kernels::TileMmaPacked& p, const char* part);

// The address of a runtime symbol by name (any of the above), or null.
void* runtime_symbol_address(const std::string& name);

}  // namespace coopvk::jit
