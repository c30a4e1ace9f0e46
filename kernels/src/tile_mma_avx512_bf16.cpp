// Tile multiply-add for bf16 inputs with AVX512-BF16 (compiled with -mavx512bf16 on top of the
// AVX-512 base; only called when the CPU has it): vdpbf16ps adds the products of two k into
// each f32 lane, so A and B are used as pairs of k - A's rows are pairs already, B's rows
// are interleaved two by two. By the instruction's definition denormal inputs count as zero
// and denormal results flush (tile_mma.h lists this departure).
#define COOPVK_MMA_ISA avx512_bf16
#include "tile_mma_arch.h"
#include "tile_mma_policies.hpp"
#include "tile_mma_x86.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX512BF16__) && defined(__AVX512VL__)
namespace mma::avx512_bf16 {
namespace {

// Units are bf16 pairs; the vectors hold f32 accumulators, and pairs as the same bits.
struct Bf16X8 {
  using V = __m256;
  using Acc = float;
  using Unit = uint32_t;
  static constexpr int L = 8;
  static constexpr int kMaxRows1 = max_rows(32, 1), kMaxRows2 = max_rows(32, 2);
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V bload(const uint32_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static V bcast(const uint32_t* p) { return _mm256_castsi256_ps(_mm256_set1_epi32(int(load_u32(p)))); }
  static V mac(V acc, V a, V b) { return _mm256_dpbf16_ps(acc, (__m256bh)a, (__m256bh)b); }
  static V add(V x, V y) { return _mm256_add_ps(x, y); }
};

struct Bf16X16 {
  using V = __m512;
  using Acc = float;
  using Unit = uint32_t;
  static constexpr int L = 16;
  static constexpr int kMaxRows1 = max_rows(32, 1), kMaxRows2 = max_rows(32, 2);
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V bload(const uint32_t* p) { return _mm512_loadu_ps(reinterpret_cast<const float*>(p)); }
  static V bcast(const uint32_t* p) { return _mm512_castsi512_ps(_mm512_set1_epi32(int(load_u32(p)))); }
  static V mac(V acc, V a, V b) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }
  static V add(V x, V y) { return _mm512_add_ps(x, y); }
};

struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (t.a != NumberFormat::BF16)
      return nullptr;
    else
      return select_for<ByWidth<Bf16Policy<Bf16X8, t.c>, Bf16Policy<Bf16X16, t.c>>, t>();
  }
};

}  // namespace
}  // namespace mma::avx512_bf16

TileMmaFn tile_mma_avx512_bf16(int combo, const TileShape& shape) {
  return mma::select<mma::avx512_bf16::Entries>(combo, shape);
}
#else
TileMmaFn tile_mma_avx512_bf16(int, const TileShape&) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
