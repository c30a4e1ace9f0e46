// The baseline build of the bulk conversions: xsimd at whatever the compiler targets by
// default (SSE2 on x86-64), so it runs on every CPU the driver supports.
#include "formats/convert_simd.hpp"

namespace coopvk::kernels::detail {

#if XSIMD_WITH_SSE2 || XSIMD_WITH_NEON64 || XSIMD_WITH_NEON
using PortableKernels = simd::Kernels<xsimd::default_arch>;

template <>
bool PortableKernels::native_f16_to_f32(const uint16_t*, uint32_t*, size_t) { return false; }
template <>
bool PortableKernels::native_f32_to_f16(const uint32_t*, uint16_t*, size_t) { return false; }
template <>
bool PortableKernels::native_f32_to_bf16(const uint32_t*, uint16_t*, size_t) { return false; }

const ConvertKernels* convert_kernels_portable() { return PortableKernels::table(); }
#else
// No SIMD baseline known to xsimd: the planner uses the scalar reference instead.
const ConvertKernels* convert_kernels_portable() { return nullptr; }
#endif

}  // namespace coopvk::kernels::detail
