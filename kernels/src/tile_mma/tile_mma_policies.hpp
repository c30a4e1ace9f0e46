// The two families of blocked_mma() policies (see tile_mma_blocked.hpp), written once against
// an arch's pieces: FloatPolicy for float combinations (f32 or f64 accumulators) and
// IntPolicy for integer ones (int32 accumulators). Included by each arch's translation unit
// inside its own COOPVK_MMA_ISA namespace, like tile_mma_blocked.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_combos.h"

namespace coopvk::kernels::detail::mma {
inline namespace COOPVK_MMA_ISA {

// Copies a rows x cols block (source row pitch src_ld elements) through `convert`, which
// takes (source, destination, count), into rows of dst_ld elements with the columns beyond
// `cols` zeroed. One call covers the whole block when both sides are contiguous.
template <class T, size_t SrcSize, class Convert>
[[gnu::always_inline]] inline void convert_block(const uint8_t* src, size_t src_ld, uint32_t rows, uint32_t cols, T* dst,
                   size_t dst_ld, Convert convert) {
  if (src_ld == cols && dst_ld == cols) {
    convert(src, dst, size_t(rows) * cols);
    return;
  }
  for (uint32_t r = 0; r < rows; ++r) {
    convert(src + r * src_ld * SrcSize, dst + r * dst_ld, cols);
    if (dst_ld > cols) std::memset(dst + r * dst_ld + cols, 0, (dst_ld - cols) * sizeof(T));
  }
}

// Float combinations. Ops: the micro-kernel's vectors over Acc (float or double). Cvt:
//   template <NumberFormat F> to_acc(const void* src, Acc* dst, size_t n)   exact widening
//   template <NumberFormat F> from_acc(const Acc* src, void* dst, size_t n) round to nearest even
template <class OpsT, class Cvt, NumberFormat FA, NumberFormat FB, NumberFormat FC>
struct FloatPolicy {
  using Ops = OpsT;
  using Acc = typename Ops::Acc;
  using Unit = Acc;
  static constexpr NumberFormat kAccFormat = sizeof(Acc) == 8 ? NumberFormat::F64 : NumberFormat::F32;
  static constexpr uint32_t L = Ops::L, KG = 1;
  static constexpr size_t kSizeA = fmt_size(FA), kSizeB = fmt_size(FB), kSizeC = fmt_size(FC),
                          kSizeD = fmt_size(FC);
  static constexpr bool kDirect = FC == kAccFormat;
  static constexpr uint32_t kMaxK = UINT32_MAX;
  static void fallback(const void*, const void*, const void*, void*, uint32_t, uint32_t, uint32_t) {}

  template <NumberFormat F>
  [[gnu::always_inline]] static void rows_to_acc(const uint8_t* src, size_t src_ld, uint32_t rows, uint32_t cols,
                          Acc* dst, size_t dst_ld) {
    convert_block<Acc, fmt_size(F)>(src, src_ld, rows, cols, dst, dst_ld,
                                    [](const void* s, Acc* d, size_t n) { Cvt::template to_acc<F>(s, d, n); });
  }

  [[gnu::always_inline]] static const Unit* pack_a(const uint8_t* a, size_t lda, uint32_t mb, uint32_t kc, Unit* buf,
                            size_t& ld) {
    if constexpr (FA == kAccFormat) {
      ld = lda;  // already f32 (f64) rows: broadcast from where they lie
      return reinterpret_cast<const Unit*>(a);
    }
    ld = kc;
    rows_to_acc<FA>(a, lda, mb, kc, buf, kc);
    return buf;
  }

  [[gnu::always_inline]] static const Unit* pack_b(const uint8_t* b, size_t ldb, uint32_t kc, uint32_t nb, uint32_t nbpad,
                            Unit* buf, size_t& ld, Acc*, const Acc*& corr) {
    corr = nullptr;
    if (FB == kAccFormat && nb == nbpad) {
      ld = ldb;
      return reinterpret_cast<const Unit*>(b);
    }
    ld = nbpad;
    rows_to_acc<FB>(b, ldb, kc, nb, buf, nbpad);
    return buf;
  }

  [[gnu::always_inline]] static void load_c(const uint8_t* c, size_t ldc, uint32_t mb, uint32_t nb, uint32_t nbpad, Acc* acc) {
    rows_to_acc<FC>(c, ldc, mb, nb, acc, nbpad);
  }

  [[gnu::always_inline]] static void store_d(const Acc* acc, size_t ldacc, const uint8_t*, uint8_t* d, size_t ldd,
                      uint32_t mb, uint32_t nb) {
    if (ldacc == nb && ldd == nb) {
      Cvt::template from_acc<FC>(acc, d, size_t(mb) * nb);
      return;
    }
    for (uint32_t r = 0; r < mb; ++r) Cvt::template from_acc<FC>(acc + r * ldacc, d + r * ldd * kSizeD, nb);
  }
};

// The C type of an integer format.
template <NumberFormat F> struct IntType;
template <> struct IntType<NumberFormat::I8> { using T = int8_t; };
template <> struct IntType<NumberFormat::U8> { using T = uint8_t; };
template <> struct IntType<NumberFormat::I16> { using T = int16_t; };
template <> struct IntType<NumberFormat::U16> { using T = uint16_t; };
template <> struct IntType<NumberFormat::I32> { using T = int32_t; };
template <> struct IntType<NumberFormat::U32> { using T = uint32_t; };

// D = saturate(C + ab) for one element: ab is the exact sum of products, W wide enough for
// it and C (int64_t, or __int128 for 32-bit inputs).
template <NumberFormat FC, NumberFormat FD, class W>
inline typename IntType<FD>::T saturating_add(typename IntType<FC>::T c, W ab) {
  constexpr unsigned w = int_bits(FD);
  constexpr W hi = is_signed_int(FD) ? (W(1) << (w - 1)) - 1 : (W(1) << w) - 1;
  constexpr W lo = is_signed_int(FD) ? -(W(1) << (w - 1)) : 0;
  const W s = W(c) + ab;
  return typename IntType<FD>::T(s < lo ? lo : s > hi ? hi : s);
}

// Integer combinations with a 32-bit D whose products sum exactly in int32 for k <= kMaxK
// (8-bit inputs). Without saturation the accumulators start from C and wrap (every bit
// pattern of C and D is its own int32); with it they start from zero, collect the exact
// A x B, and store_d() adds C with saturation. Pack<FA, FB>: pack_a / pack_b for Ops' units.
template <class OpsT, template <NumberFormat, NumberFormat> class Pack, NumberFormat FA,
          NumberFormat FB, NumberFormat FC, NumberFormat FD, bool SAT>
struct IntPolicy : Pack<FA, FB> {
  static_assert(int_bits(FA) == 8 && int_bits(FB) == 8 && int_bits(FC) == 32 && int_bits(FD) == 32);
  using Ops = OpsT;
  using Acc = int32_t;
  using Unit = uint32_t;
  static constexpr uint32_t L = Ops::L, KG = Pack<FA, FB>::KG;
  static constexpr size_t kSizeA = 1, kSizeB = 1, kSizeC = 4, kSizeD = 4;
  static constexpr bool kDirect = !SAT;
  // 255 * 255 * 32768 < 2^31: sums of up to 32768 products of 8-bit values fit in int32.
  static constexpr uint32_t kMaxK = SAT ? 32768 : UINT32_MAX;
  static void fallback(const void* a, const void* b, const void* c, void* d, uint32_t m, uint32_t n,
                       uint32_t k) {
    tile_mma_portable(combo_index({FA, FB, FC, FD, SAT}))(a, b, c, d, m, n, k);
  }

  [[gnu::always_inline]] static void load_c(const uint8_t* c, size_t ldc, uint32_t mb, uint32_t nb, uint32_t nbpad, Acc* acc) {
    if (SAT) {
      std::memset(acc, 0, size_t(mb) * nbpad * sizeof(Acc));
      return;
    }
    convert_block<Acc, 4>(c, ldc, mb, nb, acc, nbpad,
                          [](const void* s, Acc* d, size_t n) { std::memcpy(d, s, n * 4); });
  }

  [[gnu::always_inline]] static void store_d(const Acc* acc, size_t ldacc, const uint8_t* c, uint8_t* d, size_t ldd,
                      uint32_t mb, uint32_t nb) {
    using TC = typename IntType<FC>::T;
    using TD = typename IntType<FD>::T;
    for (uint32_t r = 0; r < mb; ++r) {
      const Acc* src = acc + r * ldacc;
      if constexpr (SAT) {
        const TC* cr = reinterpret_cast<const TC*>(c) + r * ldd;
        TD* dr = reinterpret_cast<TD*>(d) + r * ldd;
        for (uint32_t j = 0; j < nb; ++j) dr[j] = saturating_add<FC, FD>(cr[j], int64_t(src[j]));
      } else {
        std::memcpy(d + r * ldd * 4, src, nb * 4);
      }
    }
  }
};

}  // namespace COOPVK_MMA_ISA
}  // namespace coopvk::kernels::detail::mma
