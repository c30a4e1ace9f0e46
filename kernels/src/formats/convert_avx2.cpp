// Bulk conversions for AVX2 CPUs (compiled with -mavx2 -mfma -mf16c; only called after
// the CPU was checked). F16C converts f16 natively: VCVTPS2PH with an explicit
// round-to-nearest-even immediate gives the IEEE result, denormals included, whatever the
// MXCSR holds, and quiets NaNs the way the scalar reference does.
#include <immintrin.h>

#include "formats/convert_simd.hpp"

namespace coopvk::kernels::detail {

#if defined(__AVX2__) && defined(__F16C__)
using Avx2Kernels = simd::Kernels<xsimd::fma3<xsimd::avx2>>;

template <>
bool Avx2Kernels::native_f16_to_f32(const uint16_t* src, uint32_t* dst, size_t n) {
  run(src, dst, n, [](const uint16_t* s, uint32_t* d) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    _mm256_storeu_ps(reinterpret_cast<float*>(d), v);
  });
  return true;
}
template <>
bool Avx2Kernels::native_f32_to_f16(const uint32_t* src, uint16_t* dst, size_t n) {
  run(src, dst, n, [](const uint32_t* s, uint16_t* d) {
    const __m256 v = _mm256_loadu_ps(reinterpret_cast<const float*>(s));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  });
  return true;
}
template <>
bool Avx2Kernels::native_f32_to_bf16(const uint32_t*, uint16_t*, size_t) { return false; }

const ConvertKernels* convert_kernels_avx2() { return Avx2Kernels::table(); }
#else
const ConvertKernels* convert_kernels_avx2() { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
