// f16 x f16 + f16 -> f16 with AVX512-FP16 (compiled with -mavx512fp16 on top of the AVX-512
// base; only called when the CPU has it): accumulates in f16 with vfmadd231ph, the one
// documented departure from f32 accumulation (tile_mma.h). Nothing is widened or packed: C,
// B and D are read and written in place, with masked loads and stores for ragged columns;
// each row's A element is broadcast against a row of B. FP16 arithmetic ignores MXCSR's
// FTZ/DAZ, so denormals are kept.
#define COOPVK_MMA_ISA avx512_fp16
#include <cstring>
#include <type_traits>

#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_blocked.hpp"

#include <immintrin.h>

namespace coopvk::kernels::detail {

#if defined(__AVX512FP16__) && defined(__AVX512VL__) && defined(__AVX512BW__)
namespace mma::avx512_fp16 {
namespace {

inline _Float16 load_f16(const uint16_t* p) {
  _Float16 x;
  std::memcpy(&x, p, 2);
  return x;
}

// f16 vectors of W lanes (xmm, ymm, zmm) with a lane mask for the columns a tile has.
struct PhX8 {
  using V = __m128h;
  using M = __mmask8;
  static constexpr uint32_t W = 8;
  static V load(const uint16_t* p, M k) { return _mm_castsi128_ph(_mm_maskz_loadu_epi16(k, p)); }
  static void store(uint16_t* p, M k, V v) { _mm_mask_storeu_epi16(p, k, _mm_castph_si128(v)); }
  static V bcast(const uint16_t* p) { return _mm_set1_ph(load_f16(p)); }
  static V fma(V a, V b, V c) { return _mm_fmadd_ph(a, b, c); }
};
struct PhX16 {
  using V = __m256h;
  using M = __mmask16;
  static constexpr uint32_t W = 16;
  static V load(const uint16_t* p, M k) { return _mm256_castsi256_ph(_mm256_maskz_loadu_epi16(k, p)); }
  static void store(uint16_t* p, M k, V v) { _mm256_mask_storeu_epi16(p, k, _mm256_castph_si256(v)); }
  static V bcast(const uint16_t* p) { return _mm256_set1_ph(load_f16(p)); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ph(a, b, c); }
};
struct PhX32 {
  using V = __m512h;
  using M = __mmask32;
  static constexpr uint32_t W = 32;
  static V load(const uint16_t* p, M k) { return _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(k, p)); }
  static void store(uint16_t* p, M k, V v) { _mm512_mask_storeu_epi16(p, k, _mm512_castph_si512(v)); }
  static V bcast(const uint16_t* p) { return _mm512_set1_ph(load_f16(p)); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ph(a, b, c); }
};

// MR rows x one vector of columns (from column j0, lanes in `mask`), over all of k.
template <class P, int MR>
void rows(const uint16_t* a, const uint16_t* b, const uint16_t* c, uint16_t* d, uint32_t n, uint32_t k,
          uint32_t j0, typename P::M mask) {
  typename P::V acc[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) acc[r] = P::load(c + r * n + j0, mask);
  for (uint32_t kk = 0; kk < k; ++kk) {
    const typename P::V bv = P::load(b + size_t(kk) * n + j0, mask);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[r] = P::fma(P::bcast(a + r * k + kk), bv, acc[r]);
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) P::store(d + r * n + j0, mask, acc[r]);
}

template <class P, size_t... I>
constexpr auto rows_table(std::index_sequence<I...>) {
  using Fn = void (*)(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*, uint32_t, uint32_t,
                      uint32_t, typename P::M);
  return std::array<Fn, sizeof...(I)>{&rows<P, kRowSizes[I]>...};
}

template <class P>
[[gnu::always_inline]] inline void fp16_body(const void* a, const void* b, const void* c, void* d, uint32_t m,
                                             uint32_t n, uint32_t k) {
  static constexpr auto table = rows_table<P>(std::make_index_sequence<std::size(kRowSizes)>());
  const auto* A = static_cast<const uint16_t*>(a);
  const auto* B = static_cast<const uint16_t*>(b);
  const auto* C = static_cast<const uint16_t*>(c);
  auto* D = static_cast<uint16_t*>(d);
  for (uint32_t j0 = 0; j0 < n; j0 += P::W) {
    const uint32_t cols = n - j0 < P::W ? n - j0 : P::W;
    const auto mask = typename P::M((uint64_t(1) << cols) - 1);
    for (uint32_t r0 = 0; r0 < m;) {
      const int idx = next_rows(m - r0, 16);  // 16 accumulators, one B vector, one broadcast
      const size_t row = size_t(r0) * n;
      table[idx](A + size_t(r0) * k, B, C + row, D + row, n, k, j0, mask);
      r0 += kRowSizes[idx];
    }
  }
}

}  // namespace

struct Fp16Kernel {};

}  // namespace mma::avx512_fp16

namespace mma {
template <>
struct Body<avx512_fp16::Fp16Kernel> {
  // The narrowest vector that holds a row of the tile (wider tiles take 32 columns at a time).
  [[gnu::always_inline]] static void run(const void* a, const void* b, const void* c, void* d, uint32_t m,
                                         uint32_t n, uint32_t k) {
    if (n <= 8)
      avx512_fp16::fp16_body<avx512_fp16::PhX8>(a, b, c, d, m, n, k);
    else if (n <= 16)
      avx512_fp16::fp16_body<avx512_fp16::PhX16>(a, b, c, d, m, n, k);
    else
      avx512_fp16::fp16_body<avx512_fp16::PhX32>(a, b, c, d, m, n, k);
  }
  template <uint32_t M, uint32_t N, uint32_t K>
  [[gnu::always_inline]] static void run_fixed(const void* a, const void* b, const void* c, void* d) {
    using P = std::conditional_t<(N <= 8), avx512_fp16::PhX8,
                                 std::conditional_t<(N <= 16), avx512_fp16::PhX16, avx512_fp16::PhX32>>;
    avx512_fp16::fp16_body<P>(a, b, c, d, M, N, K);
  }
};

namespace avx512_fp16 {
namespace {
struct Entries {
  template <size_t I>
  static constexpr SelectFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (t.a == NumberFormat::F16 && t.d == NumberFormat::F16)
      return select_for<Fp16Kernel, t>();
    else
      return nullptr;
  }
};
}  // namespace
}  // namespace avx512_fp16
}  // namespace mma

TileMmaFn tile_mma_avx512_fp16(int combo, const TileShape& shape, TileMmaPacked* packed) {
  return mma::select<mma::avx512_fp16::Entries>(combo, shape, packed);
}
#else
TileMmaFn tile_mma_avx512_fp16(int, const TileShape&, TileMmaPacked*) { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
