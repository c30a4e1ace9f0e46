// Tile multiply-add for AVX-512 CPUs (compiled with -mavx512f/cd/bw/dq/vl; only called after
// the CPU was checked): the AVX2 unit's algorithms on zmm where n fills 16 lanes, and on ymm
// with AVX-512's 32 registers otherwise (taller register tiles). The units for the optional
// extensions (FP16, BF16, VNNI, AMX-INT8) are tried first when the CPU has them.
#define COOPVK_MMA_ISA avx512
#include "coopvk/kernels/cpu_dispatch.h"
#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_policies.hpp"
#include "tile_mma/tile_mma_avx512_ops.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
namespace mma::avx512 {
namespace {

struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (!x86_native(t)) {
      return nullptr;
    } else if constexpr (is_int_format(t.d)) {
      using P256 = IntPolicy<MaddX8<32>, PackPairs8, t.a, t.b, t.c, t.d, t.saturate>;
      using P512 = IntPolicy<MaddX16, PackPairs8, t.a, t.b, t.c, t.d, t.saturate>;
      return select_for<ByWidth<P256, P512>, t>();
    } else {
      using P256 = FloatPolicy<F32x8<32>, WidenX86, t.a, t.b, t.c>;
      using P512 = FloatPolicy<F32x16, WidenX86, t.a, t.b, t.c>;
      return select_for<ByWidth<P256, P512>, t>();
    }
  }
};

}  // namespace
}  // namespace mma::avx512

TileMmaFn tile_mma_avx512(int combo, uint32_t features, const TileShape& shape, TileMmaPacked* packed) {
  TileMmaFn fn = nullptr;
  if ((features & kAvx512Fp16) && (fn = tile_mma_avx512_fp16(combo, shape, packed))) return fn;
  if ((features & kAvx512Bf16) && (fn = tile_mma_avx512_bf16(combo, shape, packed))) return fn;
  if ((features & kAvx512Vnni) && (fn = tile_mma_avx512_vnni(combo, shape, packed))) {
    // The whole kernel stays VNNI's (AMX has one for the fixed shapes only); integer results
    // are exact, so AMX's parts give its bits.
    if (packed && (features & kAmxInt8)) tile_mma_amx_int8(combo, shape, packed);
    return fn;
  }
  return mma::select<mma::avx512::Entries>(combo, shape, packed);
}
#else
TileMmaFn tile_mma_avx512(int, uint32_t, const TileShape&, TileMmaPacked*) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
