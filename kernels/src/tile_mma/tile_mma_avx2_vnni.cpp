// Tile multiply-add for 8-bit integers with AVX-VNNI (compiled with -mavxvnni on top of
// AVX2; only called when the CPU has it): VEX vpdpbusd on ymm, four k per instruction, with
// the sign fix-ups of QuadsFor (tile_mma_x86.hpp).
#define COOPVK_MMA_ISA avx2_vnni
#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_policies.hpp"
#include "tile_mma/tile_mma_x86.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVXVNNI__)
namespace mma::avx2_vnni {
namespace {

__m256i dp_vex(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
template <bool AIsU>
using VnniX8 = VnniOps<MaddX8<16>, AIsU, dp_vex>;

struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (!x86_int8(t))
      return nullptr;
    else
      return select_for<VnniPolicy<VnniX8, t>, t>();
  }
};

}  // namespace
}  // namespace mma::avx2_vnni

TileMmaFn tile_mma_avx2_vnni(int combo, const TileShape& shape, TileMmaPacked* packed) {
  return mma::select<mma::avx2_vnni::Entries>(combo, shape, packed);
}
#else
TileMmaFn tile_mma_avx2_vnni(int, const TileShape&, TileMmaPacked*) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
