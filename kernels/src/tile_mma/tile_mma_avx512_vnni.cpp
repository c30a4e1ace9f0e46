// Tile multiply-add for 8-bit integers with AVX512-VNNI (compiled with -mavx512vnni on top of
// the AVX-512 base; only called when the CPU has it): vpdpbusd on zmm, or on ymm with 32
// registers for narrow tiles, four k per instruction, with the sign fix-ups of QuadsFor
// (tile_mma_x86.hpp).
#define COOPVK_MMA_ISA avx512_vnni
#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_policies.hpp"
#include "tile_mma/tile_mma_avx512_ops.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
namespace mma::avx512_vnni {
namespace {

__m256i dp256(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
__m512i dp512(__m512i acc, __m512i u, __m512i s) { return _mm512_dpbusd_epi32(acc, u, s); }
template <bool AIsU>
using VnniX8 = VnniOps<MaddX8<32>, AIsU, dp256>;
template <bool AIsU>
using VnniX16 = VnniOps<MaddX16, AIsU, dp512>;

struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (!x86_int8(t))
      return nullptr;
    else
      return select_for<ByWidth<VnniPolicy<VnniX8, t>, VnniPolicy<VnniX16, t>>, t>();
  }
};

}  // namespace
}  // namespace mma::avx512_vnni

TileMmaFn tile_mma_avx512_vnni(int combo, const TileShape& shape, TileMmaPacked* packed) {
  return mma::select<mma::avx512_vnni::Entries>(combo, shape, packed);
}
#else
TileMmaFn tile_mma_avx512_vnni(int, const TileShape&, TileMmaPacked*) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
