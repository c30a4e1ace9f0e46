// Tile multiply-add for 8-bit integers with AVX-VNNI (compiled with -mavxvnni on top of
// AVX2; only called when the CPU has it): VEX vpdpbusd on ymm, four k per instruction, with
// the sign fix-ups of QuadsFor (tile_mma_x86.hpp).
#define COOPVK_MMA_ISA avx2_vnni
#include "tile_mma_arch.h"
#include "tile_mma_policies.hpp"
#include "tile_mma_x86.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVXVNNI__)
namespace mma::avx2_vnni {
namespace {

template <bool AIsU>
struct VnniX8 : MaddX8<16> {
  static constexpr bool kAIsU = AIsU;
  static V zero() { return _mm256_setzero_si256(); }
  static V mac(V acc, V a, V b) {
    return AIsU ? _mm256_dpbusd_avx_epi32(acc, a, b) : _mm256_dpbusd_avx_epi32(acc, b, a);
  }
};

struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (!(x86_native(t) && is_int_format(t.d))) {
      return nullptr;
    } else {
      using O = VnniX8<is_signed_int(t.b)>;
      return select_for<IntPolicy<O, QuadsFor<O>::template Pack, t.a, t.b, t.c, t.d, t.saturate>, t>();
    }
  }
};

}  // namespace
}  // namespace mma::avx2_vnni

TileMmaFn tile_mma_avx2_vnni(int combo, const TileShape& shape) {
  return mma::select<mma::avx2_vnni::Entries>(combo, shape);
}
#else
TileMmaFn tile_mma_avx2_vnni(int, const TileShape&) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
