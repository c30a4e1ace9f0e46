// Tile multiply-add for 8-bit integers with AVX512-VNNI (compiled with -mavx512vnni on top of
// the AVX-512 base; only called when the CPU has it): vpdpbusd on zmm, or on ymm with 32
// registers for narrow tiles, four k per instruction, with the sign fix-ups of QuadsFor
// (tile_mma_x86.hpp).
#define COOPVK_MMA_ISA avx512_vnni
#include "tile_mma_arch.h"
#include "tile_mma_policies.hpp"
#include "tile_mma_x86.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
namespace mma::avx512_vnni {
namespace {

template <bool AIsU>
struct VnniX8 : MaddX8<32> {
  static constexpr bool kAIsU = AIsU;
  static V zero() { return _mm256_setzero_si256(); }
  static V mac(V acc, V a, V b) { return AIsU ? _mm256_dpbusd_epi32(acc, a, b) : _mm256_dpbusd_epi32(acc, b, a); }
};

template <bool AIsU>
struct VnniX16 {
  using V = __m512i;
  using Acc = int32_t;
  using Unit = uint32_t;
  static constexpr int L = 16;
  static constexpr bool kAIsU = AIsU;
  static constexpr int kMaxRows1 = max_rows(32, 1), kMaxRows2 = max_rows(32, 2);
  static V zero() { return _mm512_setzero_si512(); }
  static V load(const int32_t* p) { return _mm512_loadu_si512(p); }
  static void store(int32_t* p, V v) { _mm512_storeu_si512(p, v); }
  static V bload(const uint32_t* p) { return _mm512_loadu_si512(p); }
  static V bcast(const uint32_t* p) { return _mm512_set1_epi32(int(load_u32(p))); }
  static V mac(V acc, V a, V b) { return AIsU ? _mm512_dpbusd_epi32(acc, a, b) : _mm512_dpbusd_epi32(acc, b, a); }
  static V add(V x, V y) { return _mm512_add_epi32(x, y); }
};

struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (!(x86_native(t) && is_int_format(t.d))) {
      return nullptr;
    } else {
      using O8 = VnniX8<is_signed_int(t.b)>;
      using O16 = VnniX16<is_signed_int(t.b)>;
      using P256 = IntPolicy<O8, QuadsFor<O8>::template Pack, t.a, t.b, t.c, t.d, t.saturate>;
      using P512 = IntPolicy<O16, QuadsFor<O16>::template Pack, t.a, t.b, t.c, t.d, t.saturate>;
      return select_for<ByWidth<P256, P512>, t>();
    }
  }
};

}  // namespace
}  // namespace mma::avx512_vnni

TileMmaFn tile_mma_avx512_vnni(int combo, const TileShape& shape) {
  return mma::select<mma::avx512_vnni::Entries>(combo, shape);
}
#else
TileMmaFn tile_mma_avx512_vnni(int, const TileShape&) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
