// Bulk conversions for AVX-512 CPUs (compiled with -mavx512f/cd/bw/dq/vl; only called after
// the CPU was checked). f16 uses AVX512F's VCVTPS2PH/VCVTPH2PS, which give the same bits
// as AVX512-FP16's VCVTPS2PHX but need fewer features. bf16 uses AVX512-BF16's
// VCVTNEPS2BF16 when the CPU has it, in a function of its own so that the rest of this
// file never contains the instruction.
#include <immintrin.h>

#include "formats/convert_simd.hpp"
#include "coopvk/kernels/cpu_dispatch.h"

namespace coopvk::kernels::detail {

#if defined(__AVX512F__) && defined(__AVX512BW__)
using Avx512Kernels = simd::Kernels<xsimd::avx512bw>;

namespace {

#if defined(__GNUC__)
// VCVTNEPS2BF16 behaves as if DAZ were set (Intel SDM: denormal inputs become signed
// zero), but f32 denormals have bf16 denormal neighbours, so those lanes are redone with
// the integer rounding (add 0x7fff plus the kept lsb, keep the top half). NaN and normal
// lanes match the reference as they are: a NaN keeps its top payload bits and gets the
// quiet bit, normals round to nearest even.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void f32_to_bf16_native(
    const uint32_t* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 live = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    const __m512i u = _mm512_maskz_loadu_epi32(live, src + i);
    const __m256bh hw = _mm512_cvtneps_pbh(_mm512_castsi512_ps(u));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 denorm = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000));
    const __m512i wide = _mm512_mask_blend_epi32(
        denorm, _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(hw)), rounded);
    _mm256_mask_storeu_epi16(dst + i, live, _mm512_cvtepi32_epi16(wide));
  }
}
#endif

}  // namespace

template <>
bool Avx512Kernels::native_f16_to_f32(const uint16_t* src, uint32_t* dst, size_t n) {
  run(src, dst, n, [](const uint16_t* s, uint32_t* d) {
    const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    _mm512_storeu_ps(d, v);
  });
  return true;
}
template <>
bool Avx512Kernels::native_f32_to_f16(const uint32_t* src, uint16_t* dst, size_t n) {
  run(src, dst, n, [](const uint32_t* s, uint16_t* d) {
    const __m512 v = _mm512_loadu_ps(s);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  });
  return true;
}
template <>
bool Avx512Kernels::native_f32_to_bf16(const uint32_t* src, uint16_t* dst, size_t n) {
#if defined(__GNUC__)
  if (active_cpu_features() & kAvx512Bf16) {
    f32_to_bf16_native(src, dst, n);
    return true;
  }
#endif
  return false;
}

const ConvertKernels* convert_kernels_avx512() { return Avx512Kernels::table(); }
#else
const ConvertKernels* convert_kernels_avx512() { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
