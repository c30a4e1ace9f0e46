// Runtime symbols of compiled shaders (runtime_symbols.h).
#include "runtime/tensor_addressing.h"
#include "runtime/runtime_symbols.h"

#include <cstdio>
#include <cstring>

#include "coopvk/jit/shader_abi.h"
#include "coopvk/jit/tile_cache.h"
#include "coopvk/kernels/coopvec_batch.h"
#include "coopvk/kernels/coopvec_ops.h"
#include "coopvk/kernels/transpose.h"

namespace coopvk::jit {

namespace {

using kernels::NumberFormat;

constexpr NumberFormat kFormats[] = {
    NumberFormat::F32, NumberFormat::F16, NumberFormat::BF16, NumberFormat::E4M3, NumberFormat::E5M2,
    NumberFormat::F64, NumberFormat::I8,  NumberFormat::U8,   NumberFormat::I16,  NumberFormat::U16,
    NumberFormat::I32, NumberFormat::U32, NumberFormat::I64,  NumberFormat::U64,
};

std::optional<NumberFormat> format_named(const std::string& s) {
  for (NumberFormat f : kFormats)
    if (s == kernels::format_name(f)) return f;
  return std::nullopt;
}

extern "C" void coopvk_rt_convert(uint32_t src_format, const void* src, uint32_t dst_format, void* dst,
                                  uint64_t n, uint32_t saturate) {
  // The lowering only asks for pairs kernels::convert supports (checked at compile time).
  kernels::convert(static_cast<NumberFormat>(src_format), src, static_cast<NumberFormat>(dst_format), dst, n,
                   saturate ? kernels::Overflow::Saturate : kernels::Overflow::Ieee);
}

extern "C" void coopvk_rt_coopvec_matmul(const kernels::CoopVecMatMulDesc* d, const kernels::CoopVecMatMulArgs* a) {
  kernels::coopvec_matmul(*d, *a);
}
extern "C" void coopvk_rt_coopvec_matmul_lanes(const kernels::CoopVecMatMulDesc* d, const kernels::CoopVecMatMulArgs* a,
                                               uint32_t lanes, uint64_t cache_token) {
  kernels::coopvec_matmul_lanes(*d, *a, lanes, cache_token);
}
extern "C" void coopvk_rt_coopvec_outer(const kernels::CoopVecOuterDesc* d, const kernels::CoopVecOuterArgs* a) {
  kernels::coopvec_outer_product_accumulate(*d, *a);
}
extern "C" void coopvk_rt_coopvec_reduce(uint32_t format, uint32_t count, const kernels::CoopVecReduceArgs* a) {
  kernels::coopvec_reduce_sum_accumulate(static_cast<NumberFormat>(format), count, *a);
}

extern "C" void coopvk_rt_transpose(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, uint32_t rows,
                                    uint32_t cols, uint32_t esz) {
  kernels::transpose_elements(src, src_stride, dst, dst_stride, rows, cols, esz);
}

extern "C" void coopvk_rt_copy_rows(const void* src, int64_t src_stride, void* dst, uint64_t rows, uint64_t row_bytes) {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  for (uint64_t r = 0; r < rows; ++r) std::memcpy(d + r * row_bytes, s + int64_t(r) * src_stride, row_bytes);
}

}  // namespace

std::string mma_symbol(const kernels::TileMmaDesc& d) {
  return std::string("coopvk_mma.") + kernels::format_name(d.a) + "." + kernels::format_name(d.b) + "." +
         kernels::format_name(d.c) + "." + kernels::format_name(d.d) + ".s" + (d.saturate ? "1" : "0") + "." +
         std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k);
}

std::optional<kernels::TileMmaDesc> parse_mma_symbol(const std::string& name) {
  const std::string prefix = "coopvk_mma.";
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::string parts[6];  // a, b, c, d, saturate, shape
  size_t at = prefix.size();
  for (int i = 0; i < 6; ++i) {
    size_t dot = i < 5 ? name.find('.', at) : name.size();
    if (dot == std::string::npos) return std::nullopt;
    parts[i] = name.substr(at, dot - at);
    at = dot + 1;
  }
  kernels::TileMmaDesc d{};
  auto a = format_named(parts[0]), b = format_named(parts[1]), c = format_named(parts[2]), r = format_named(parts[3]);
  if (!a || !b || !c || !r || (parts[4] != "s0" && parts[4] != "s1")) return std::nullopt;
  d.a = *a;
  d.b = *b;
  d.c = *c;
  d.d = *r;
  d.saturate = parts[4] == "s1";
  unsigned m = 0, n = 0, k = 0;
  char tail = 0;
  if (std::sscanf(parts[5].c_str(), "%ux%ux%u%c", &m, &n, &k, &tail) != 3) return std::nullopt;
  d.m = m;
  d.n = n;
  d.k = k;
  return d;
}

namespace {
constexpr const char kMmaPrefix[] = "coopvk_mma.";
constexpr const char kSplitPrefix[] = "coopvk_mma_split.";

// The address of a split kernel's part named by mma_split_symbol(), or null.
void* split_part_address(const std::string& name) {
  const size_t prefix = sizeof(kSplitPrefix) - 1;
  if (name.compare(0, prefix, kSplitPrefix) != 0) return nullptr;
  const size_t part_end = name.find('.', prefix), sizes = name.rfind('.');
  if (part_end == std::string::npos || sizes <= part_end) return nullptr;
  const std::string part = name.substr(prefix, part_end - prefix);
  auto d = parse_mma_symbol(kMmaPrefix + name.substr(part_end + 1, sizes - part_end - 1));
  unsigned a_bytes = 0, b_bytes = 0;
  char tail = 0;
  if (!d || std::sscanf(name.c_str() + sizes + 1, "%ux%u%c", &a_bytes, &b_bytes, &tail) != 2) return nullptr;
  kernels::TileMmaPacked p;
  if (!kernels::tile_mma_packed(*d, &p) || p.a_bytes != a_bytes || p.b_bytes != b_bytes) return nullptr;
  if (part == "a") return reinterpret_cast<void*>(p.pack_a);
  if (part == "b") return reinterpret_cast<void*>(p.pack_b);
  if (part == "mma") return reinterpret_cast<void*>(p.mma);
  if (part == "mma2") return reinterpret_cast<void*>(p.mma2);
  return nullptr;
}
}  // namespace

std::string mma_split_symbol(const kernels::TileMmaDesc& d, const kernels::TileMmaPacked& p, const char* part) {
  return kSplitPrefix + std::string(part) + "." + mma_symbol(d).substr(sizeof(kMmaPrefix) - 1) + "." +
         std::to_string(p.a_bytes) + "x" + std::to_string(p.b_bytes);
}

void* runtime_symbol_address(const std::string& name) {
  if (void* p = split_part_address(name)) return p;
  if (name == "coopvk_jit_workgroup_barrier") return reinterpret_cast<void*>(&coopvk_jit_workgroup_barrier);
  if (name == "coopvk_jit_subgroup_yield") return reinterpret_cast<void*>(&coopvk_jit_subgroup_yield);
  if (name == kConvertSymbol) return reinterpret_cast<void*>(&coopvk_rt_convert);
  if (name == kCoopVecMatMulSymbol) return reinterpret_cast<void*>(&coopvk_rt_coopvec_matmul);
  if (name == kCoopVecMatMulLanesSymbol) return reinterpret_cast<void*>(&coopvk_rt_coopvec_matmul_lanes);
  if (name == kCoopVecOuterSymbol) return reinterpret_cast<void*>(&coopvk_rt_coopvec_outer);
  if (name == kCoopVecReduceSymbol) return reinterpret_cast<void*>(&coopvk_rt_coopvec_reduce);
  if (name == kTransposeSymbol) return reinterpret_cast<void*>(&coopvk_rt_transpose);
  if (name == kCopyRowsSymbol) return reinterpret_cast<void*>(&coopvk_rt_copy_rows);
  if (name == kTileCacheSymbol) return reinterpret_cast<void*>(&coopvk_rt_tile_cache_get);
  if (name == kTensorLoadSymbol) return reinterpret_cast<void*>(&coopvk_rt_tensor_load);
  if (name == kTensorStoreSymbol) return reinterpret_cast<void*>(&coopvk_rt_tensor_store);
  if (name == kTensorPlanSymbol) return reinterpret_cast<void*>(&coopvk_rt_tensor_plan);
  if (auto d = parse_mma_symbol(name)) return reinterpret_cast<void*>(kernels::tile_mma_kernel(*d));
  return nullptr;
}

}  // namespace coopvk::jit
