// See tile_mma_emulated.h. Compiled with AVX2 flags and only run when the CPU has AVX2.
//  - "Twice<O>": a vector of 2 x L lanes as two of O's, so that policies see L = 16 as on zmm.
//  - vpdpbusd: unsigned x signed bytes, four products per int32 lane added without
//    saturation: the even and odd bytes widened to int16 and multiplied by vpmaddwd, exact.
//  - vdpbf16ps: each bf16 of a pair widened exactly to f32 and added with an FMA each.
#define COOPVK_MMA_ISA test_emulated
#include "tile_mma_emulated.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <type_traits>

#include "tile_mma/tile_mma_policies.hpp"
#include "tile_mma/tile_mma_x86.hpp"

namespace coopvk::kernels::detail::mma {
inline namespace test_emulated {
namespace {

template <class O, class = void>
struct AIsU : std::false_type {};
template <class O>
struct AIsU<O, std::void_t<decltype(O::kAIsU)>> : std::bool_constant<O::kAIsU> {};

template <class O>
struct Twice {
  struct V {
    typename O::V lo, hi;
  };
  using Acc = typename O::Acc;
  using Unit = typename O::Unit;
  static constexpr int L = 2 * O::L;
  static constexpr bool kAIsU = AIsU<O>::value;
  static constexpr int kMaxRows1 = O::kMaxRows2, kMaxRows2 = 3;
  static V zero() { return {O::zero(), O::zero()}; }
  static V load(const Acc* p) { return {O::load(p), O::load(p + O::L)}; }
  static void store(Acc* p, V v) { O::store(p, v.lo), O::store(p + O::L, v.hi); }
  static V bload(const Unit* p) { return {O::bload(p), O::bload(p + O::L)}; }
  static V bcast(const Unit* p) {
    const auto x = O::bcast(p);
    return {x, x};
  }
  static V mac(V acc, V a, V b) { return {O::mac(acc.lo, a.lo, b.lo), O::mac(acc.hi, a.hi, b.hi)}; }
  static V add(V x, V y) { return {O::add(x.lo, y.lo), O::add(x.hi, y.hi)}; }
};

__m256i emu_dpbusd(__m256i acc, __m256i u, __m256i s) {
  const __m256i lo = _mm256_set1_epi16(0x00ff);
  const __m256i ue = _mm256_and_si256(u, lo), uo = _mm256_srli_epi16(u, 8);
  const __m256i se = _mm256_srai_epi16(_mm256_slli_epi16(s, 8), 8), so = _mm256_srai_epi16(s, 8);
  return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(ue, se), _mm256_madd_epi16(uo, so)));
}
template <bool AIsU>
using EmuVnni = VnniOps<MaddX8<16>, AIsU, emu_dpbusd>;
template <bool AIsU>
using EmuVnni16 = Twice<EmuVnni<AIsU>>;

__m256 emu_dpbf16(__m256 acc, __m256 a, __m256 b) {
  const __m256i ai = _mm256_castps_si256(a), bi = _mm256_castps_si256(b), hi = _mm256_set1_epi32(int(0xffff0000u));
  auto even = [](__m256i x) { return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)); };
  auto odd = [&](__m256i x) { return _mm256_castsi256_ps(_mm256_and_si256(x, hi)); };
  return _mm256_fmadd_ps(odd(ai), odd(bi), _mm256_fmadd_ps(even(ai), even(bi), acc));
}
using EmuBf16 = Bf16PairOps<F32x8<16>, emu_dpbf16>;

// The families of the AVX-512 units, with these vectors.
struct Float512 {
  template <MmaCombo t>
  static constexpr SelectFn get() {
    if constexpr (!x86_native(t) || is_int_format(t.d))
      return nullptr;
    else
      return select_for<ByWidth<FloatPolicy<F32x8<16>, WidenX86, t.a, t.b, t.c>,
                                FloatPolicy<Twice<F32x8<16>>, WidenX86, t.a, t.b, t.c>>, t>();
  }
};
struct Madd512 {
  template <MmaCombo t>
  static constexpr SelectFn get() {
    if constexpr (!x86_int8(t))
      return nullptr;
    else
      return select_for<ByWidth<IntPolicy<MaddX8<16>, PackPairs8, t.a, t.b, t.c, t.d, t.saturate>,
                                IntPolicy<Twice<MaddX8<16>>, PackPairs8, t.a, t.b, t.c, t.d, t.saturate>>, t>();
  }
};
struct Vnni {
  template <MmaCombo t>
  static constexpr SelectFn get() {
    if constexpr (!x86_int8(t))
      return nullptr;
    else
      return select_for<ByWidth<VnniPolicy<EmuVnni, t>, VnniPolicy<EmuVnni16, t>>, t>();
  }
};
struct Bf16 {
  template <MmaCombo t>
  static constexpr SelectFn get() {
    if constexpr (t.a != NumberFormat::BF16)
      return nullptr;
    else
      return select_for<ByWidth<Bf16Policy<EmuBf16, t.c>, Bf16Policy<Twice<EmuBf16>, t.c>>, t>();
  }
};

template <class F>
struct ByIndex {
  template <size_t I>
  static constexpr SelectFn get() {
    return F::template get<kMmaCombos[I]>();
  }
};

template <class F>
TileMmaFn kernel(const TileMmaDesc& d) {
  const int i = combo_index({d.a, d.b, d.c, d.d, d.saturate});
  return i < 0 ? nullptr : select<ByIndex<F>>(i, {d.m, d.n, d.k}, nullptr);
}
template <class F>
bool packed(const TileMmaDesc& d, TileMmaPacked* out) {
  *out = {};
  const int i = combo_index({d.a, d.b, d.c, d.d, d.saturate});
  return i >= 0 && select<ByIndex<F>>(i, {d.m, d.n, d.k}, out) && out->mma != nullptr;
}

}  // namespace
}  // namespace test_emulated
}  // namespace coopvk::kernels::detail::mma

std::vector<EmulatedPath> emulated_paths() {
  using namespace coopvk::kernels::detail::mma;
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !__builtin_cpu_supports("f16c"))
    return {};
  return {{"emulated avx512 f32 (zmm as 2 ymm)", &kernel<Float512>, &packed<Float512>},
          {"emulated avx512 vpmaddwd (zmm as 2 ymm)", &kernel<Madd512>, &packed<Madd512>},
          {"emulated vpdpbusd (ymm, zmm)", &kernel<Vnni>, &packed<Vnni>},
          {"emulated vdpbf16ps (ymm, zmm)", &kernel<Bf16>, &packed<Bf16>}};
}
#else
std::vector<EmulatedPath> emulated_paths() { return {}; }
#endif
