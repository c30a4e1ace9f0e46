// The 512-bit micro-kernel operations shared by the AVX-512 translation units (base, VNNI,
// BF16), like the 256-bit ones of tile_mma_x86.hpp: zmm vectors, 32 registers.
#pragma once

#include "tile_mma_x86.hpp"

namespace coopvk::kernels::detail::mma {
inline namespace COOPVK_MMA_ISA {

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
  static V zero() { return _mm512_setzero_si512(); }
};

}  // namespace COOPVK_MMA_ISA
}  // namespace coopvk::kernels::detail::mma
