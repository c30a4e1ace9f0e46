// The split form of the 8-bit integer tile multiply-add on Intel AMX (compiled with -mamx-tile
// -mamx-int8 on top of the AVX-512 base; only called when the CPU has AMX-INT8 and the kernel
// granted this process the tile state, cpu_dispatch.cpp): one tdpb[su][su]d per tile, which
// multiplies signed or unsigned bytes as they are, so no sign fix-ups. Packed A is the tile's
// rows as they are (m x k bytes); packed B is B in the layout the instruction reads, each
// group of four k of a column as one dword (k/4 rows of n dwords); C and D are loaded and
// stored in place. Integer results are exact, so these parts give the same bits as the
// AVX512-VNNI kernel the dispatcher returns beside them.
//
// The tile configuration is per thread. Each thread remembers the shape it last configured
// and loads a new configuration only when the shape changes: every thread that runs kernels
// belongs to the driver (its queue and pool threads) or to a test, and nothing else there
// touches the tile registers. No tile is live between calls.
#define COOPVK_MMA_ISA amx_int8
#include "tile_mma/tile_mma_arch.h"

#include <cstring>

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace coopvk::kernels::detail {

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__AVX512F__)
namespace {

// Intel SDM vol. 1, 3.2 "Tile configuration": palette 1, bytes per row and rows of each tile.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// Tiles: 0 and 1 the accumulators, 2 A, 3 and 4 the two B tiles of mma2 (the numbers in the
// intrinsics below).
enum : int { kC0 = 0, kC1 = 1, kA = 2, kB0 = 3, kB1 = 4 };

thread_local uint32_t t_configured_shape = 0;

template <uint32_t M, uint32_t N, uint32_t K>
inline void configure() {
  constexpr uint32_t key = M | N << 8 | K << 16;
  if (t_configured_shape == key) return;
  TileConfig cfg;
  for (int t : {kC0, kC1}) cfg.rows[t] = M, cfg.colsb[t] = N * 4;
  cfg.rows[kA] = M, cfg.colsb[kA] = K;
  for (int t : {kB0, kB1}) cfg.rows[t] = K / 4, cfg.colsb[t] = N * 4;
  _tile_loadconfig(&cfg);
  t_configured_shape = key;
}

// The instruction for the signedness of A and B (tdpb<A><B>d, s = signed, u = unsigned). The
// intrinsics paste their tile numbers into the assembly text, so they are literals here.
#define COOPVK_AMX_DOT(DST, A, B)                   \
  do {                                              \
    if constexpr (ASigned && BSigned)               \
      _tile_dpbssd(DST, A, B);                      \
    else if constexpr (ASigned)                     \
      _tile_dpbsud(DST, A, B);                      \
    else if constexpr (BSigned)                     \
      _tile_dpbusd(DST, A, B);                      \
    else                                            \
      _tile_dpbuud(DST, A, B);                      \
  } while (0)

template <uint32_t M, uint32_t N, uint32_t K, bool ASigned, bool BSigned>
struct AmxInt8 {
  static_assert(M <= 16 && N <= 16 && K <= 64 && K % 4 == 0, "one AMX tile per operand");
  static constexpr size_t kRowBytes = N * 4;

  static void pack_a(const void* a, size_t lda, void* out) {
    for (uint32_t r = 0; r < M; ++r)
      std::memcpy(static_cast<uint8_t*>(out) + r * K, static_cast<const uint8_t*>(a) + r * lda, K);
  }

  // out row g, dword j = B[4g .. 4g+3][j]: two rounds of byte then word interleaves.
  static void pack_b(const void* b, size_t ldb, void* out) {
    const auto* src = static_cast<const uint8_t*>(b);
    auto* dst = static_cast<uint8_t*>(out);
    for (uint32_t g = 0; g < K / 4; ++g) {
      const uint8_t* r = src + size_t(4 * g) * ldb;
      uint8_t* o = dst + g * kRowBytes;
      if constexpr (N == 16) {
        const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r));
        const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + ldb));
        const __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 2 * ldb));
        const __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 3 * ldb));
        const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
        const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16), _mm_unpackhi_epi16(lo01, lo23));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 32), _mm_unpacklo_epi16(hi01, hi23));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 48), _mm_unpackhi_epi16(hi01, hi23));
      } else {
        for (uint32_t j = 0; j < N; ++j)
          for (uint32_t q = 0; q < 4; ++q) o[4 * j + q] = r[q * ldb + j];
      }
    }
  }

  static void mma(const void* a, const void* b, const void* c, void* d) {
    configure<M, N, K>();
    _tile_loadd(0, c, kRowBytes);
    _tile_loadd(2, a, K);
    _tile_loadd(3, b, kRowBytes);
    COOPVK_AMX_DOT(0, 2, 3);
    _tile_stored(0, d, kRowBytes);
  }

  static bool overlaps(const void* p, size_t pn, const void* q, size_t qn) {
    const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(q);
    return a < b + qn && b < a + pn;
  }

  // Both accumulators are loaded before either result is stored, which is the sequential
  // order only when d0 is none of what the second multiply-add reads.
  static void mma2(const void* a, const void* b0, const void* c0, void* d0, const void* b1, const void* c1,
                   void* d1) {
    constexpr size_t kDBytes = M * kRowBytes, kABytes = M * K, kBBytes = K / 4 * kRowBytes;
    if (overlaps(d0, kDBytes, c1, kDBytes) || overlaps(d0, kDBytes, b1, kBBytes) ||
        overlaps(d0, kDBytes, a, kABytes)) {
      mma(a, b0, c0, d0);
      mma(a, b1, c1, d1);
      return;
    }
    configure<M, N, K>();
    _tile_loadd(0, c0, kRowBytes);
    _tile_loadd(1, c1, kRowBytes);
    _tile_loadd(2, a, K);
    _tile_loadd(3, b0, kRowBytes);
    _tile_loadd(4, b1, kRowBytes);
    COOPVK_AMX_DOT(0, 2, 3);
    COOPVK_AMX_DOT(1, 2, 4);
    _tile_stored(0, d0, kRowBytes);
    _tile_stored(1, d1, kRowBytes);
  }
};

template <uint32_t M, uint32_t N, uint32_t K, bool AS, bool BS>
bool fill(TileMmaPacked* out) {
  using K8 = AmxInt8<M, N, K, AS, BS>;
  out->pack_a = K8::pack_a;
  out->pack_b = K8::pack_b;
  out->mma = K8::mma;
  out->mma2 = K8::mma2;
  out->a_bytes = M * K;
  out->b_bytes = K / 4 * N * 4;
  return true;
}

template <bool AS, bool BS>
bool fill_shape(const TileShape& s, TileMmaPacked* out) {
  if (s.k != 32) return false;
  if (s.m == 16 && s.n == 16) return fill<16, 16, 32, AS, BS>(out);
  if (s.m == 16 && s.n == 8) return fill<16, 8, 32, AS, BS>(out);
  if (s.m == 8 && s.n == 8) return fill<8, 8, 32, AS, BS>(out);
  return false;
}

bool is_8bit(NumberFormat f) { return f == NumberFormat::I8 || f == NumberFormat::U8; }
bool is_32bit(NumberFormat f) { return f == NumberFormat::I32 || f == NumberFormat::U32; }

}  // namespace

bool tile_mma_amx_int8(int combo, const TileShape& shape, TileMmaPacked* packed) {
  const MmaCombo& t = kMmaCombos[size_t(combo)];
  if (!packed || t.saturate || !is_8bit(t.a) || !is_8bit(t.b) || !is_32bit(t.c) || !is_32bit(t.d))
    return false;
  const bool as = t.a == NumberFormat::I8, bs = t.b == NumberFormat::I8;
  TileMmaPacked p;
  const bool ok = as ? (bs ? fill_shape<true, true>(shape, &p) : fill_shape<true, false>(shape, &p))
                     : (bs ? fill_shape<false, true>(shape, &p) : fill_shape<false, false>(shape, &p));
  if (ok) *packed = p;
  return ok;
}
#else
bool tile_mma_amx_int8(int, const TileShape&, TileMmaPacked*) { return false; }
#endif

}  // namespace coopvk::kernels::detail
