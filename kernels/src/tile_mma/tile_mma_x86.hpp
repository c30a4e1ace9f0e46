// x86 pieces of the tile multiply-add shared by the AVX2 and AVX-512 translation units: the
// 256-bit micro-kernel operations, widening of the narrow float formats to f32, and the
// packing of A and B into k groups. Written with AVX2 + FMA + F16C intrinsics only; every
// unit that includes it is compiled with at least those (and defines COOPVK_MMA_ISA, which
// keeps each unit's copies apart, see tile_mma_blocked.hpp).
#pragma once

#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "formats/convert_arch.h"
#include "tile_mma/tile_mma_blocked.hpp"
#include "tile_mma/tile_mma_combos.h"
#include "tile_mma/tile_mma_policies.hpp"

namespace coopvk::kernels::detail::mma {
inline namespace COOPVK_MMA_ISA {

// Row counts per micro-kernel for `regs` vector registers: the accumulators plus the B
// vectors, one broadcast A and one temporary must fit.
constexpr int max_rows(int regs, int nv) { return (regs - nv - 2) / nv < 16 ? (regs - nv - 2) / nv : 16; }

inline uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // unaligned-safe; compiles to the broadcast's memory operand
  return v;
}

// ---- 256-bit micro-kernel operations (ymm; 16 registers with AVX2, 32 with AVX-512VL) ----

template <int Regs>
struct F32x8 {
  using V = __m256;
  using Acc = float;
  using Unit = float;
  static constexpr int L = 8;
  static constexpr int kMaxRows1 = max_rows(Regs, 1), kMaxRows2 = max_rows(Regs, 2);
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V bload(const float* p) { return _mm256_loadu_ps(p); }
  static V bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V mac(V acc, V a, V b) { return _mm256_fmadd_ps(a, b, acc); }
  static V add(V x, V y) { return _mm256_add_ps(x, y); }
};

// Units are pairs of int16 (A's pair broadcast, B's pair per column); vpmaddwd multiplies
// them exactly and adds the two products into int32: exact for 8-bit inputs, unlike
// vpmaddubsw, whose int16 sum saturates for u8 x s8.
template <int Regs>
struct MaddX8 {
  using V = __m256i;
  using Acc = int32_t;
  using Unit = uint32_t;
  static constexpr int L = 8;
  static constexpr int kMaxRows1 = max_rows(Regs, 1), kMaxRows2 = max_rows(Regs, 2);
  static V load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(int32_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static V bload(const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static V bcast(const uint32_t* p) { return _mm256_set1_epi32(int(load_u32(p))); }
  static V mac(V acc, V a, V b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
  static V add(V x, V y) { return _mm256_add_epi32(x, y); }
  static V zero() { return _mm256_setzero_si256(); }
};

// ---- widening to f32 (exact) ----

// Runs body(src, dst) on groups of 8 elements; a last partial group goes through zero-padded
// copies so that it takes the same code.
template <class S, class Body>
[[gnu::always_inline]] inline void by_eight(const S* src, float* dst, size_t n, Body body) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) body(src + i, dst + i);
  if (i < n) {
    S in[8] = {};
    float out[8];
    std::memcpy(in, src + i, (n - i) * sizeof(S));
    body(in, out);
    std::memcpy(dst + i, out, (n - i) * sizeof(float));
  }
}

// f16 bit patterns of 16 fp8 values widened to 16 bits: E5M2 is the top byte of an f16; for
// E4M3, the exponent and mantissa bits placed at the top of f16's are the same number with a
// bias of 15 instead of 7 - denormals included - so the f16 is the value / 256, and the one
// E4M3 NaN (S.1111.111, which would read 1.875) gets an all-ones f16 exponent.
template <NumberFormat F>
inline __m256i fp8_as_f16(__m256i w) {
  if constexpr (F == NumberFormat::E5M2) return _mm256_slli_epi16(w, 8);
  const __m256i mag = _mm256_and_si256(w, _mm256_set1_epi16(0x7f));
  const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x80)), 8);
  const __m256i nan = _mm256_and_si256(_mm256_cmpeq_epi16(mag, _mm256_set1_epi16(0x7f)), _mm256_set1_epi16(0x7e00));
  return _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi16(mag, 7), sign), nan);
}

// 16 fp8 values at s -> f32 at d. x 256 undoes E4M3's scale exactly: the smallest E4M3
// denormal, 2^-9, is a normal f32.
template <NumberFormat F>
[[gnu::always_inline]] inline void fp8_to_f32_16(const uint8_t* s, float* d) {
  const __m256i h = fp8_as_f16<F>(_mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s))));
  __m256 lo = _mm256_cvtph_ps(_mm256_castsi256_si128(h)), hi = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
  if constexpr (F == NumberFormat::E4M3) {
    lo = _mm256_mul_ps(lo, _mm256_set1_ps(256.0f));
    hi = _mm256_mul_ps(hi, _mm256_set1_ps(256.0f));
  }
  _mm256_storeu_ps(d, lo);
  _mm256_storeu_ps(d + 8, hi);
}

struct WidenX86 {
  template <NumberFormat F>
  [[gnu::always_inline]] static void to_acc(const void* src, float* dst, size_t n) {
    if constexpr (F == NumberFormat::F32) {
      std::memcpy(dst, src, n * 4);
    } else if constexpr (F == NumberFormat::F16) {
      by_eight(static_cast<const uint16_t*>(src), dst, n, [](const uint16_t* s, float* d) {
        _mm256_storeu_ps(d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s))));
      });
    } else if constexpr (F == NumberFormat::BF16) {
      by_eight(static_cast<const uint16_t*>(src), dst, n, [](const uint16_t* s, float* d) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
        _mm256_storeu_ps(d, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
      });
    } else if constexpr (F == NumberFormat::E5M2 || F == NumberFormat::E4M3) {
      const auto* s = static_cast<const uint8_t*>(src);
      size_t i = 0;
      for (; i + 16 <= n; i += 16) fp8_to_f32_16<F>(s + i, dst + i);
      if (i < n) {
        uint8_t in[16] = {};
        float out[16];
        std::memcpy(in, s + i, n - i);
        fp8_to_f32_16<F>(in, out);
        std::memcpy(dst + i, out, (n - i) * sizeof(float));
      }
    } else {
      static_assert(F == NumberFormat::F32, "no f32 widening for this format");
    }
  }
  // Narrowing to D, rounding to nearest even: f16 with F16C's VCVTPS2PH (which quiets NaNs
  // as the scalar reference does), bf16 through the arch's bulk converter.
  template <NumberFormat F>
  [[gnu::always_inline]] static void from_acc(const float* src, void* dst, size_t n) {
    if constexpr (F == NumberFormat::F32) {
      std::memcpy(dst, src, n * 4);
    } else if constexpr (F == NumberFormat::F16) {
      auto* d = static_cast<uint16_t*>(dst);
      size_t i = 0;
      // 32-byte stores where there are 16: the shader reads a 16-wide row of D back with one
      // 32-byte load, which a pair of 16-byte stores cannot forward; it then waits for both
      // to reach the cache (15% of llama-bench pp512 sat on that load).
      for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                            _mm256_set_m128i(_mm256_cvtps_ph(_mm256_loadu_ps(src + i + 8), _MM_FROUND_TO_NEAREST_INT),
                                             _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT)));
      for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
      for (; i < n; ++i) d[i] = uint16_t(_cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT));
    } else {
      convert_kernels_avx2()->from_f32(F, reinterpret_cast<const uint32_t*>(src), dst, n, Overflow::Ieee);
    }
  }
};

// ---- packing into k groups ----

// 8-bit row -> int16 row (sign- or zero-extended).
template <bool Signed>
[[gnu::always_inline]] inline void widen_bytes(const uint8_t* src, int16_t* dst, uint32_t n) {
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i w = Signed ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), w);
  }
  for (; i + 8 <= n; i += 8) {
    const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), Signed ? _mm_cvtepi8_epi16(x) : _mm_cvtepu8_epi16(x));
  }
  for (; i < n; ++i) dst[i] = Signed ? int16_t(int8_t(src[i])) : int16_t(src[i]);
}

// Two rows of bytes (r1 null: zeros) -> cols units of two int16 (r0[j], r1[j]), sign- or
// zero-extended, then zero units up to `pad` columns. Interleaving the bytes first keeps the
// columns in order, so no lane permute is needed.
template <bool Signed>
[[gnu::always_inline]] inline void interleave_byte_pairs(const uint8_t* r0, const uint8_t* r1, uint32_t* dst,
                                                         uint32_t cols, uint32_t pad) {
  auto widen = [](__m128i x) { return Signed ? _mm256_cvtepi8_epi16(x) : _mm256_cvtepu8_epi16(x); };
  uint32_t j = 0;
  for (; j + 16 <= cols; j += 16) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + j));
    const __m128i x1 = r1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + j)) : _mm_setzero_si128();
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), widen(_mm_unpacklo_epi8(x0, x1)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j + 8), widen(_mm_unpackhi_epi8(x0, x1)));
  }
  for (; j + 8 <= cols; j += 8) {
    const __m128i x0 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0 + j));
    const __m128i x1 = r1 ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r1 + j)) : _mm_setzero_si128();
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), widen(_mm_unpacklo_epi8(x0, x1)));
  }
  auto ext = [](uint8_t v) { return uint32_t(uint16_t(Signed ? int16_t(int8_t(v)) : int16_t(v))); };
  for (; j < cols; ++j) dst[j] = ext(r0[j]) | (r1 ? ext(r1[j]) : 0) << 16;
  for (; j < pad; ++j) dst[j] = 0;
}

// Two rows of 16-bit values (r1 null: zeros) -> cols units (r0[j], r1[j]), then zero units up
// to `pad` columns.
[[gnu::always_inline]] inline void interleave_u16_pairs(const uint16_t* r0, const uint16_t* r1, uint32_t* dst,
                                                        uint32_t cols, uint32_t pad) {
  uint32_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + j));
    const __m128i x1 = r1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + j)) : _mm_setzero_si128();
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j), _mm_unpacklo_epi16(x0, x1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j + 4), _mm_unpackhi_epi16(x0, x1));
  }
  for (; j < cols; ++j) dst[j] = uint32_t(r0[j]) | uint32_t(r1 ? r1[j] : 0) << 16;
  for (; j < pad; ++j) dst[j] = 0;
}

// Four rows of bytes (null: zeros) -> cols quads (r0[j], r1[j], r2[j], r3[j]), then zero
// quads up to `pad` columns.
[[gnu::always_inline]] inline void interleave_quads(const uint8_t* const r[4], uint32_t* dst, uint32_t cols,
                                                    uint32_t pad) {
  uint32_t j = 0;
  auto quads = [&](__m128i x0, __m128i x1, __m128i x2, __m128i x3, uint32_t at, bool sixteen) {
    const __m128i t0 = _mm_unpacklo_epi8(x0, x1), t2 = _mm_unpacklo_epi8(x2, x3);
    auto* o = reinterpret_cast<__m128i*>(dst + at);
    _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(t0, t2));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(t0, t2));
    if (!sixteen) return;
    const __m128i t1 = _mm_unpackhi_epi8(x0, x1), t3 = _mm_unpackhi_epi8(x2, x3);
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(t1, t3));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(t1, t3));
  };
  auto load = [&](int i, uint32_t at, bool sixteen) {
    if (r[i] == nullptr) return _mm_setzero_si128();
    const auto* p = reinterpret_cast<const __m128i*>(r[i] + at);
    return sixteen ? _mm_loadu_si128(p) : _mm_loadl_epi64(p);
  };
  for (; j + 16 <= cols; j += 16) quads(load(0, j, true), load(1, j, true), load(2, j, true), load(3, j, true), j, true);
  for (; j + 8 <= cols; j += 8) quads(load(0, j, false), load(1, j, false), load(2, j, false), load(3, j, false), j, false);
  for (; j < cols; ++j) {
    uint32_t q = 0;
    for (int i = 0; i < 4; ++i) q |= uint32_t(r[i] ? r[i][j] : 0) << (8 * i);
    dst[j] = q;
  }
  for (; j < pad; ++j) dst[j] = 0;
}

// Pairs of k for vpmaddwd: A rows widened to int16 (a pair is two adjacent k), B's pairs of
// rows widened and interleaved per column.
template <NumberFormat FA, NumberFormat FB>
struct PackPairs8 {
  static constexpr uint32_t KG = 2;
  [[gnu::always_inline]] static const uint32_t* pack_a(const uint8_t* a, size_t lda, uint32_t mb, uint32_t kc, uint32_t* buf,
                                size_t& ld) {
    ld = (kc + 1) / 2;
    for (uint32_t r = 0; r < mb; ++r) {
      auto* row = reinterpret_cast<int16_t*>(buf + r * ld);
      widen_bytes<is_signed_int(FA)>(a + r * lda, row, kc);
      if (kc & 1) row[kc] = 0;
    }
    return buf;
  }
  [[gnu::always_inline]] static const uint32_t* pack_b(const uint8_t* b, size_t ldb, uint32_t kc, uint32_t nb, uint32_t nbpad,
                                uint32_t* buf, size_t& ld, int32_t*, const int32_t*& corr) {
    corr = nullptr;
    ld = nbpad;
    for (uint32_t p = 0; 2 * p < kc; ++p) {
      const uint8_t* r0 = b + 2 * p * ldb;
      interleave_byte_pairs<is_signed_int(FB)>(r0, 2 * p + 1 < kc ? r0 + ldb : nullptr, buf + p * ld, nb, nbpad);
    }
    return buf;
  }
};

// Quads of k for vpdpbusd, which multiplies unsigned bytes of its first source by signed
// bytes of its second. Ops::mac puts A and B in those roles from the formats (Ops::kAIsU: A
// is the unsigned side when B is signed). Where A's signedness is not its role's (s8 x s8,
// u8 x u8), A's bytes are XORed with 0x80 - a + 128 as unsigned, a - 128 as signed - and the
// error, Ops applied to (0x80 bytes in A's role) x B, is subtracted through the per-column
// correction: s8 x s8 subtracts 128 * colsum(B), u8 x u8 adds it.
template <class Ops>
struct QuadsFor {
  template <NumberFormat FA, NumberFormat FB>
  struct Pack {
    static_assert(Ops::kAIsU == is_signed_int(FB), "Ops must put A in the unsigned role iff B is signed");
    static constexpr uint32_t KG = 4;
    static constexpr bool kFlip = is_signed_int(FA) == is_signed_int(FB);

    [[gnu::always_inline]] static const uint32_t* pack_a(const uint8_t* a, size_t lda, uint32_t mb, uint32_t kc, uint32_t* buf,
                                  size_t& ld) {
      if (!kFlip && kc % 4 == 0 && lda % 4 == 0) {
        ld = lda / 4;  // A's rows are already quads of k
        return reinterpret_cast<const uint32_t*>(a);
      }
      ld = (kc + 3) / 4;
      const __m256i flip = _mm256_set1_epi8(char(kFlip ? 0x80 : 0));
      for (uint32_t r = 0; r < mb; ++r) {
        const uint8_t* src = a + r * lda;
        auto* dst = reinterpret_cast<uint8_t*>(buf + r * ld);
        uint32_t i = 0;
        for (; i + 32 <= kc; i += 32)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                              _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), flip));
        for (; i < kc; ++i) dst[i] = uint8_t(src[i] ^ (kFlip ? 0x80 : 0));
        for (; i < 4 * ld; ++i) dst[i] = 0;  // meets B's zero rows
      }
      return buf;
    }

    [[gnu::always_inline]] static const uint32_t* pack_b(const uint8_t* b, size_t ldb, uint32_t kc, uint32_t nb, uint32_t nbpad,
                                  uint32_t* buf, size_t& ld, int32_t* corr, const int32_t*& corr_out) {
      ld = nbpad;
      const uint32_t groups = (kc + 3) / 4;
      // Whole groups of four rows and whole vectors of columns where Ops has quads16: one
      // shuffle per 16 quads instead of eight unpacks.
      bool shuffled = false;
      if constexpr (requires { Ops::quads16(b, ldb, buf); }) {
        shuffled = kc % 4 == 0 && nb == nbpad && nb % 16 == 0;
        if (shuffled)
          for (uint32_t q = 0; q < groups; ++q)
            for (uint32_t j = 0; j < nb; j += 16) Ops::quads16(b + 4 * q * ldb + j, ldb, buf + q * ld + j);
      }
      if (!shuffled)
        for (uint32_t q = 0; q < groups; ++q) {
          const uint8_t* rows[4];
          for (uint32_t i = 0; i < 4; ++i) rows[i] = 4 * q + i < kc ? b + (4 * q + i) * ldb : nullptr;
          interleave_quads(rows, buf + q * ld, nb, nbpad);
        }
      corr_out = nullptr;
      if constexpr (kFlip) {
        const uint32_t k80 = 0x80808080u;
        for (uint32_t v = 0; v < nbpad; v += Ops::L) {
          // Two chains: the sum of a tile's groups is otherwise one dependent vpdpbusd each.
          typename Ops::V e0 = Ops::zero(), e1 = Ops::zero();
          uint32_t q = 0;
          for (; q + 2 <= groups; q += 2) {
            e0 = Ops::mac(e0, Ops::bcast(&k80), Ops::bload(buf + q * ld + v));
            e1 = Ops::mac(e1, Ops::bcast(&k80), Ops::bload(buf + (q + 1) * ld + v));
          }
          if (q < groups) e0 = Ops::mac(e0, Ops::bcast(&k80), Ops::bload(buf + q * ld + v));
          Ops::store(corr + v, Ops::add(e0, e1));
        }
        for (uint32_t j = 0; j < nbpad; ++j) corr[j] = int32_t(0u - uint32_t(corr[j]));
        corr_out = corr;
      }
      return buf;
    }
  };
};

// A kernel family for the AVX-512 units: 256-bit vectors where the columns fill them better
// than 512-bit ones (n = 8, 24, ...), else 512-bit. The JIT's n is fixed per call site (and
// constant in the fixed copies), so the branch predicts or folds.
template <class P256, class P512>
struct ByWidth {};

constexpr bool use_512(uint32_t n) { return round_up(n, 8) % 16 == 0; }

template <class P256, class P512>
struct Body<ByWidth<P256, P512>> {
  static constexpr bool kHasPolicy = true;
  template <uint32_t N>
  using Policy = std::conditional_t<use_512(N), P512, P256>;
  [[gnu::always_inline]] static void run(const void* a, const void* b, const void* c, void* d,
                                         uint32_t m, uint32_t n, uint32_t k) {
    if (use_512(n))
      mma_body<P512>(a, b, c, d, m, n, k);
    else
      mma_body<P256>(a, b, c, d, m, n, k);
  }
  template <uint32_t M, uint32_t N, uint32_t K>
  [[gnu::always_inline]] static void run_fixed(const void* a, const void* b, const void* c, void* d) {
    if constexpr (use_512(N))
      mma_body<P512, N, K>(a, b, c, d, M, N, K);
    else
      mma_body<P256, N, K>(a, b, c, d, M, N, K);
  }
};

// bf16 x bf16 as pairs of k for vdpbf16ps (Ops::mac), which adds the products of a pair into
// each f32 lane: A's rows are pairs already, B's rows are interleaved two by two. C and D
// as for any float policy.
template <class OpsT, NumberFormat FC>
struct Bf16Policy : FloatPolicy<OpsT, WidenX86, NumberFormat::BF16, NumberFormat::BF16, FC> {
  using Ops = OpsT;
  using Unit = uint32_t;
  static constexpr uint32_t KG = 2;

  [[gnu::always_inline]] static const Unit* pack_a(const uint8_t* a, size_t lda, uint32_t mb, uint32_t kc,
                                                   Unit* buf, size_t& ld) {
    if (kc % 2 == 0 && lda % 2 == 0) {
      ld = lda / 2;  // a row's consecutive k are its pairs
      return reinterpret_cast<const Unit*>(a);
    }
    ld = (kc + 1) / 2;
    for (uint32_t r = 0; r < mb; ++r) {
      auto* row = reinterpret_cast<uint16_t*>(buf + r * ld);
      std::memcpy(row, a + r * lda * 2, kc * 2);
      if (kc & 1) row[kc] = 0;  // pad the last pair
    }
    return buf;
  }

  [[gnu::always_inline]] static const Unit* pack_b(const uint8_t* b, size_t ldb, uint32_t kc, uint32_t nb,
                                                   uint32_t nbpad, Unit* buf, size_t& ld, float*,
                                                   const float*& corr) {
    corr = nullptr;
    ld = nbpad;
    for (uint32_t p = 0; 2 * p < kc; ++p) {
      const auto* r0 = reinterpret_cast<const uint16_t*>(b) + 2 * p * ldb;
      interleave_u16_pairs(r0, 2 * p + 1 < kc ? r0 + ldb : nullptr, buf + p * ld, nb, nbpad);
    }
    return buf;
  }
};

// vpdpbusd over an int32 vector's operations (Base: MaddX8, or the 512-bit MaddX16): Dp is the
// instruction form (VEX, EVEX ymm, zmm) as dp(acc, unsigned bytes, signed bytes); A takes the
// unsigned role when B is signed (see QuadsFor).
template <class Base, bool AIsU, auto Dp>
struct VnniOps : Base {
  using V = typename Base::V;
  static constexpr bool kAIsU = AIsU;
  static V mac(V acc, V a, V b) { return AIsU ? Dp(acc, a, b) : Dp(acc, b, a); }
};
template <template <bool> class Ops, MmaCombo t>
using VnniPolicy = IntPolicy<Ops<is_signed_int(t.b)>, QuadsFor<Ops<is_signed_int(t.b)>>::template Pack, t.a,
                             t.b, t.c, t.d, t.saturate>;

// vdpbf16ps over an f32 vector's operations (Base: F32x8 or the 512-bit F32x16): the units
// are bf16 pairs, moved as the same 32 bits; Dp is the instruction form, dp(acc, a, b).
template <class Base, auto Dp>
struct Bf16PairOps : Base {
  using V = typename Base::V;
  using Unit = uint32_t;
  static V bload(const uint32_t* p) { return Base::bload(reinterpret_cast<const float*>(p)); }
  static V bcast(const uint32_t* p) {
    float bits;
    std::memcpy(&bits, p, 4);  // the pair's bits, read without aliasing a uint32_t as float
    return Base::bcast(&bits);
  }
  static V mac(V acc, V a, V b) { return Dp(acc, a, b); }
};

// Combinations with native x86 kernels: every float one but f64, 8-bit integers into 32 bits.
constexpr bool x86_int8(const MmaCombo& t) { return is_int_format(t.d) && int_bits(t.a) == 8 && int_bits(t.d) == 32; }
constexpr bool x86_native(const MmaCombo& t) { return x86_int8(t) || (!is_int_format(t.d) && t.d != NumberFormat::F64); }

}  // namespace COOPVK_MMA_ISA
}  // namespace coopvk::kernels::detail::mma
