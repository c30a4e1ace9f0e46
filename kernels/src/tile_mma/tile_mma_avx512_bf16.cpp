// Tile multiply-add for bf16 inputs with AVX512-BF16 (compiled with -mavx512bf16 on top of the
// AVX-512 base; only called when the CPU has it): vdpbf16ps adds the products of two k into
// each f32 lane, so A and B are used as pairs of k - A's rows are pairs already, B's rows
// are interleaved two by two. By the instruction's definition denormal inputs count as zero
// and denormal results flush (tile_mma.h lists this departure).
#define COOPVK_MMA_ISA avx512_bf16
#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_policies.hpp"
#include "tile_mma/tile_mma_avx512_ops.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX512BF16__) && defined(__AVX512VL__)
namespace mma::avx512_bf16 {
namespace {

__m256 dp256(__m256 acc, __m256 a, __m256 b) { return _mm256_dpbf16_ps(acc, (__m256bh)a, (__m256bh)b); }
__m512 dp512(__m512 acc, __m512 a, __m512 b) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }
using Bf16X8 = Bf16PairOps<F32x8<32>, dp256>;
using Bf16X16 = Bf16PairOps<F32x16, dp512>;

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

TileMmaFn tile_mma_avx512_bf16(int combo, const TileShape& shape, TileMmaPacked* packed) {
  return mma::select<mma::avx512_bf16::Entries>(combo, shape, packed);
}
#else
TileMmaFn tile_mma_avx512_bf16(int, const TileShape&, TileMmaPacked*) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
