// Tile multiply-add for AVX2 CPUs (compiled with -mavx2 -mfma -mf16c; only called after the
// CPU was checked). Floats: f32 FMA micro-kernels (6 rows x 16 columns or 12 x 8 in the 16
// ymm registers) over A and B widened to f32 once per call. 8-bit integers: vpmaddwd on
// int16 pairs, exact for every signedness. AVX-VNNI kernels live in tile_mma_avx2_vnni.cpp.
#define COOPVK_MMA_ISA avx2
#include "coopvk/kernels/cpu_dispatch.h"
#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_policies.hpp"
#include "tile_mma/tile_mma_x86.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
namespace mma::avx2 {
namespace {

struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (!x86_native(t))
      return nullptr;
    else if constexpr (is_int_format(t.d))
      return select_for<IntPolicy<MaddX8<16>, PackPairs8, t.a, t.b, t.c, t.d, t.saturate>, t>();
    else
      return select_for<FloatPolicy<F32x8<16>, WidenX86, t.a, t.b, t.c>, t>();
  }
};

}  // namespace
}  // namespace mma::avx2

TileMmaFn tile_mma_avx2(int combo, uint32_t features, const TileShape& shape, TileMmaPacked* packed) {
  if (features & kAvxVnni)
    if (TileMmaFn fn = tile_mma_avx2_vnni(combo, shape, packed)) return fn;
  return mma::select<mma::avx2::Entries>(combo, shape, packed);
}
#else
TileMmaFn tile_mma_avx2(int, uint32_t, const TileShape&, TileMmaPacked*) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
