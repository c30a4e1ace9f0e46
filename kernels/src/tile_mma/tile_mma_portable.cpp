// KernelArch::Portable, and the fallback of the native arches for the combinations they have
// no kernel of their own for: every combination in plain C++ at the compiler's baseline
// (SSE2 on x86-64), written so that the compiler vectorizes the inner loops.
//  - Floats: the blocked driver with a micro-kernel over small arrays; widening through the
//    bulk converters (bit-exact with the scalar ones). Products of the narrow formats are
//    exact, so those match the reference bit for bit; f32 x f32 and f64 x f64 multiply then
//    add where the baseline has no FMA.
//  - Integers: row times B, accumulated in uint32 (wrapping) or exactly in int64 / int128
//    (saturating), then combined with C.
#define COOPVK_MMA_ISA portable
#include <cstring>
#include <type_traits>

#include "formats/convert_arch.h"
#include "tile_mma/tile_mma_arch.h"
#include "tile_mma/tile_mma_blocked.hpp"
#include "tile_mma/tile_mma_policies.hpp"

namespace coopvk::kernels::detail {
namespace mma::portable {
namespace {

// A "vector" of L accumulators as a plain array: the compiler maps the loops onto whatever
// SIMD the baseline has.
template <class T>
struct ArrayOps {
  using Acc = T;
  using Unit = T;
  static constexpr int L = 32 / sizeof(T);  // two SSE registers
  static constexpr int kMaxRows1 = 4, kMaxRows2 = 2;
  struct V {
    T v[L];
  };
  static V load(const T* p) {
    V r;
    std::memcpy(r.v, p, sizeof(r.v));
    return r;
  }
  static void store(T* p, const V& x) { std::memcpy(p, x.v, sizeof(x.v)); }
  static V bload(const T* p) { return load(p); }
  static V bcast(const T* p) {
    V r;
    for (int i = 0; i < L; ++i) r.v[i] = *p;
    return r;
  }
  static V mac(const V& acc, const V& a, const V& b) {
    V r;
    for (int i = 0; i < L; ++i) r.v[i] = acc.v[i] + a.v[i] * b.v[i];
    return r;
  }
  static V add(const V& x, const V& y) {
    V r;
    for (int i = 0; i < L; ++i) r.v[i] = x.v[i] + y.v[i];
    return r;
  }
};

// Widening and narrowing through the baseline bulk converters (the public convert() where
// this build has none), which round exactly as the scalar reference does.
struct BulkCvt {
  template <NumberFormat F, class T>
  static void to_acc(const void* src, T* dst, size_t n) {
    if constexpr (F == NumberFormat::F64 || F == NumberFormat::F32) {
      std::memcpy(dst, src, n * sizeof(T));
    } else if (const ConvertKernels* k = convert_kernels_portable()) {
      k->to_f32(F, src, reinterpret_cast<uint32_t*>(dst), n);
    } else {
      convert(F, src, NumberFormat::F32, dst, n);
    }
  }
  template <NumberFormat F, class T>
  static void from_acc(const T* src, void* dst, size_t n) {
    if constexpr (F == NumberFormat::F64 || F == NumberFormat::F32) {
      std::memcpy(dst, src, n * sizeof(T));
    } else if (const ConvertKernels* k = convert_kernels_portable()) {
      k->from_f32(F, reinterpret_cast<const uint32_t*>(src), dst, n, Overflow::Ieee);
    } else {
      convert(NumberFormat::F32, src, F, dst, n);
    }
  }
};

template <NumberFormat FA, NumberFormat FB, NumberFormat FC, NumberFormat FD, bool SAT>
void int_generic(const void* a, const void* b, const void* c, void* d, uint32_t m, uint32_t n,
                 uint32_t k) {
  using TA = typename IntType<FA>::T;
  using TB = typename IntType<FB>::T;
  using TC = typename IntType<FC>::T;
  using TD = typename IntType<FD>::T;
  // Wrapping: unsigned 32-bit arithmetic is exact modulo 2^32, hence modulo 2^16 too.
  // Saturating: products of 16-bit values are below 2^32, so int64 sums are exact for any
  // k < 2^31; 32-bit inputs need 128 bits.
  using W = std::conditional_t<(int_bits(FA) <= 16 && int_bits(FB) <= 16), int64_t, __int128>;
  using Acc = std::conditional_t<SAT, W, uint32_t>;
  constexpr uint32_t kCols = 64;
  const auto* A = static_cast<const TA*>(a);
  const auto* B = static_cast<const TB*>(b);
  const auto* C = static_cast<const TC*>(c);
  auto* D = static_cast<TD*>(d);
  Acc acc[kCols];
  for (uint32_t n0 = 0; n0 < n; n0 += kCols) {
    const uint32_t nb = n - n0 < kCols ? n - n0 : kCols;
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t j = 0; j < nb; ++j) acc[j] = 0;
      for (uint32_t kk = 0; kk < k; ++kk) {
        const Acc av = Acc(A[size_t(i) * k + kk]);  // sign- or zero-extends, then wraps to Acc
        const TB* br = B + size_t(kk) * n + n0;
        for (uint32_t j = 0; j < nb; ++j) acc[j] += av * Acc(br[j]);
      }
      const size_t row = size_t(i) * n + n0;
      for (uint32_t j = 0; j < nb; ++j) {
        if constexpr (SAT)
          D[row + j] = saturating_add<FC, FD>(C[row + j], acc[j]);
        else
          D[row + j] = TD(Acc(C[row + j]) + acc[j]);  // the low bits: modulo 2^width(D)
      }
    }
  }
}

struct Entries {
  template <size_t I>
  static constexpr TileMmaFn get() {
    constexpr MmaCombo t = kMmaCombos[I];
    if constexpr (is_int_format(t.d)) {
      return &int_generic<t.a, t.b, t.c, t.d, t.saturate>;
    } else {
      using T = std::conditional_t<t.d == NumberFormat::F64, double, float>;
      return &blocked_mma<FloatPolicy<ArrayOps<T>, BulkCvt, t.a, t.b, t.c>>;
    }
  }
};

}  // namespace
}  // namespace mma::portable

TileMmaFn tile_mma_portable(int combo) {
  static constexpr auto table = mma::entry_table<mma::portable::Entries, TileMmaFn>(
      std::make_index_sequence<kMmaCombos.size()>());
  return table[combo];
}

}  // namespace coopvk::kernels::detail
