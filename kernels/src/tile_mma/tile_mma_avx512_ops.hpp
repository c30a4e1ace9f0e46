// The 512-bit micro-kernel operations shared by the AVX-512 translation units (base, VNNI,
// BF16), like the 256-bit ones of tile_mma_x86.hpp: zmm vectors, 32 registers.
#pragma once

#include "tile_mma/tile_mma_x86.hpp"

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

  // Four rows of 16 bytes at b, b + ld, ... -> 16 quads (b[j], b[ld + j], b[2ld + j], b[3ld + j])
  // at dst, for vpdpbusd's B. The rows go to the four 128-bit lanes; vpermd then gathers
  // dword c of every row into lane c, and vpshufb transposes each lane's 4 x 4 bytes.
  static void quads16(const uint8_t* b, size_t ld, uint32_t* dst) {
    const __m512i rows = _mm512_inserti32x4(
        _mm512_inserti32x4(_mm512_inserti32x4(_mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b))),
                                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + ld)), 1),
                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 * ld)), 2),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 3 * ld)), 3);
    const __m512i by_column = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    // Bytes 0, 4, 8, 12, 1, 5, ... of each lane. (The maskz form and set4 rather than
    // permutexvar and broadcast: GCC 12 warns about the undefined pass-through those use.)
    const __m512i transpose4 = _mm512_set4_epi32(0x0f0b0703, 0x0e0a0602, 0x0d090501, 0x0c080400);
    _mm512_storeu_si512(dst, _mm512_shuffle_epi8(_mm512_maskz_permutexvar_epi32(0xffff, by_column, rows), transpose4));
  }
};

}  // namespace COOPVK_MMA_ISA
}  // namespace coopvk::kernels::detail::mma
