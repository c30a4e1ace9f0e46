// Tile multiply-add for AVX-512 CPUs (compiled with -mavx512f/cd/bw/dq/vl; only called after
// the CPU was checked): the AVX2 unit's algorithms on zmm where n fills 16 lanes, and on ymm
// with AVX-512's 32 registers otherwise (taller register tiles). The units for the optional
// extensions (FP16, BF16, VNNI) are tried first when the CPU has them.
#define COOPVK_MMA_ISA avx512
#include "coopvk/kernels/cpu_dispatch.h"
#include "tile_mma_arch.h"
#include "tile_mma_policies.hpp"
#include "tile_mma_x86.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
namespace mma::avx512 {
namespace {

struct F32x16 {
  using V = __m512;
  using Acc = float;
  using Unit = float;
  static constexpr int L = 16;
  static constexpr int kMaxRows1 = max_rows(32, 1), kMaxRows2 = max_rows(32, 2);
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V bload(const float* p) { return _mm512_loadu_ps(p); }
  static V bcast(const float* p) { return _mm512_set1_ps(*p); }
  static V mac(V acc, V a, V b) { return _mm512_fmadd_ps(a, b, acc); }
  static V add(V x, V y) { return _mm512_add_ps(x, y); }
};

struct MaddX16 {
  using V = __m512i;
  using Acc = int32_t;
  using Unit = uint32_t;
  static constexpr int L = 16;
  static constexpr int kMaxRows1 = max_rows(32, 1), kMaxRows2 = max_rows(32, 2);
  static V load(const int32_t* p) { return _mm512_loadu_si512(p); }
  static void store(int32_t* p, V v) { _mm512_storeu_si512(p, v); }
  static V bload(const uint32_t* p) { return _mm512_loadu_si512(p); }
  static V bcast(const uint32_t* p) { return _mm512_set1_epi32(int(load_u32(p))); }
  static V mac(V acc, V a, V b) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
  static V add(V x, V y) { return _mm512_add_epi32(x, y); }
};

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

TileMmaFn tile_mma_avx512(int combo, uint32_t features, const TileShape& shape) {
  TileMmaFn fn = nullptr;
  if ((features & kAvx512Fp16) && (fn = tile_mma_avx512_fp16(combo, shape))) return fn;
  if ((features & kAvx512Bf16) && (fn = tile_mma_avx512_bf16(combo, shape))) return fn;
  if ((features & kAvx512Vnni) && (fn = tile_mma_avx512_vnni(combo, shape))) return fn;
  return mma::select<mma::avx512::Entries>(combo, shape);
}
#else
TileMmaFn tile_mma_avx512(int, uint32_t, const TileShape&) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
