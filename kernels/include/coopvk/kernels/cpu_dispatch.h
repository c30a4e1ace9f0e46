// Which instruction set the kernels run with. Chosen once from the host CPU (or from the
// environment variable COOPVK_KERNEL_ARCH=scalar|portable|avx2|avx512, read on first
// use), and overridable by tests so that every path is exercised on one machine.
#pragma once

#include <cstdint>

namespace coopvk::kernels {

enum class KernelArch : uint8_t {
  Scalar,    // the element-by-element reference code; no SIMD at all
  Portable,  // xsimd at the compiler's baseline (SSE2 on x86-64, NEON on AArch64)
  Avx2,      // AVX2 + FMA + F16C
  Avx512,    // AVX-512 F/CD/BW/DQ/VL; AVX512-BF16 used inside when the CPU has it
};

const char* kernel_arch_name(KernelArch a);
// Whether this CPU (and this build) can run kernels compiled for `a`.
bool kernel_arch_supported(KernelArch a);
// The best supported arch, ignoring any override.
KernelArch best_kernel_arch();
// The arch kernels use now.
KernelArch active_kernel_arch();
// Makes kernels use `a` from now on (process-wide). Returns false and changes nothing
// when the CPU cannot run it.
bool force_kernel_arch(KernelArch a);

}  // namespace coopvk::kernels
