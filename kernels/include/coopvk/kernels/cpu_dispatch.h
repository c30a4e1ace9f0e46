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
  Avx512,    // AVX-512 F/CD/BW/DQ/VL; the extensions below used inside when the CPU has them
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

// Instruction-set extensions that an arch's kernels use when the CPU has them, as bits of
// a mask. They refine an arch rather than being archs of their own: an AVX-512 CPU may or
// may not have each of the first three and AMX, an AVX2 one may have AVX-VNNI.
enum CpuFeature : uint32_t {
  kAvx512Fp16 = 1u << 0,  // vfmadd231ph: f16 arithmetic (Sapphire Rapids); Avx512 arch
  kAvx512Bf16 = 1u << 1,  // vdpbf16ps, vcvtneps2bf16 (Cooper Lake, Zen 4); Avx512 arch
  kAvx512Vnni = 1u << 2,  // vpdpbusd on zmm/ymm (Cascade Lake, Zen 4); Avx512 arch
  kAvxVnni = 1u << 3,     // VEX vpdpbusd on ymm (Alder Lake, Zen 5); Avx2 arch
  // tdpbssd and kin on AMX tiles (Sapphire Rapids); Avx512 arch, with kAvx512Vnni. Detected
  // only where the OS grants the process the tile state: detection asks Linux for it once
  // (arch_prctl ARCH_REQ_XCOMP_PERM), which lasts for the process's life.
  kAmxInt8 = 1u << 4,
};
bool cpu_has_avx512fp16();
bool cpu_has_avx512bf16();
bool cpu_has_avx512vnni();
bool cpu_has_avxvnni();
bool cpu_has_amxint8();
// The extensions this CPU (and OS) supports.
uint32_t cpu_features();
// The extensions kernels use now: cpu_features() unless a test restricted them.
uint32_t active_cpu_features();
// Makes kernels use only the extensions in `mask` (process-wide), so tests can run the
// code beside each extension on a CPU that has it. Returns false and changes nothing when
// `mask` names an extension the CPU lacks. Kernels already looked up keep what they chose.
bool restrict_cpu_features(uint32_t mask);

}  // namespace coopvk::kernels
