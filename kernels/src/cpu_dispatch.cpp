// Picks the instruction set for the kernels once per process. Tests override it to run
// every path on one machine; COOPVK_KERNEL_ARCH does the same for a whole run.
#include "coopvk/kernels/cpu_dispatch.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "formats/convert_arch.h"

namespace coopvk::kernels {
namespace {

bool cpu_has(KernelArch a) {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  switch (a) {
    case KernelArch::Avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case KernelArch::Avx512:
      // The compiler's check includes the OS having enabled the AVX-512 register state.
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    default: return true;
  }
#else
  return a == KernelArch::Scalar || a == KernelArch::Portable;
#endif
}

bool built(KernelArch a) {
  switch (a) {
    case KernelArch::Scalar: return true;
    case KernelArch::Portable: return detail::convert_kernels_portable() != nullptr;
    case KernelArch::Avx2: return detail::convert_kernels_avx2() != nullptr;
    case KernelArch::Avx512: return detail::convert_kernels_avx512() != nullptr;
  }
  return false;
}

KernelArch initial_arch() {
  KernelArch best = best_kernel_arch();
  if (const char* env = std::getenv("COOPVK_KERNEL_ARCH")) {
    for (KernelArch a : {KernelArch::Scalar, KernelArch::Portable, KernelArch::Avx2, KernelArch::Avx512})
      if (std::strcmp(env, kernel_arch_name(a)) == 0 && kernel_arch_supported(a)) return a;
    // kernels/ has no logger of its own (it knows nothing of the driver): stderr, once.
    std::fprintf(stderr,
                 "coopvk: COOPVK_KERNEL_ARCH=%s is not scalar, portable, avx2 or avx512, or this "
                 "CPU or build cannot run it; using %s\n", env, kernel_arch_name(best));
  }
  return best;
}

std::atomic<KernelArch>& current() {
  static std::atomic<KernelArch> arch{initial_arch()};
  return arch;
}

#if defined(__linux__) && defined(__x86_64__) && defined(__GNUC__)
// Linux keeps the 8 KiB of tile data out of a thread's saved state until the process asks
// for it (Documentation/arch/x86/xstate.rst); a tile instruction before that faults. The
// request fails where the kernel is too old or the CPU lacks AMX, and then AMX stays unused.
bool amx_tile_state_granted() {
  if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-int8")) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#else
// Unused where detect_features() has no x86 checks.
[[maybe_unused]] bool amx_tile_state_granted() { return false; }
#endif

uint32_t detect_features() {
  uint32_t f = 0;
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  // The AVX-512 extensions are only of use with the base AVX-512 arch (whose check covers
  // the OS saving zmm state); AVX-VNNI needs only AVX2's ymm state.
  if (cpu_has(KernelArch::Avx512)) {
    if (__builtin_cpu_supports("avx512fp16")) f |= kAvx512Fp16;
    if (__builtin_cpu_supports("avx512bf16")) f |= kAvx512Bf16;
    if (__builtin_cpu_supports("avx512vnni")) f |= kAvx512Vnni;
  }
  if (cpu_has(KernelArch::Avx2) && __builtin_cpu_supports("avxvnni")) f |= kAvxVnni;
  if ((f & kAvx512Vnni) && amx_tile_state_granted()) f |= kAmxInt8;
#endif
  return f;
}

uint32_t detected_features() {
  static const uint32_t f = detect_features();
  return f;
}

std::atomic<uint32_t>& feature_mask() {
  static std::atomic<uint32_t> mask{detected_features()};
  return mask;
}

}  // namespace

bool cpu_has_avx512fp16() { return (detected_features() & kAvx512Fp16) != 0; }
bool cpu_has_avx512bf16() { return (detected_features() & kAvx512Bf16) != 0; }
bool cpu_has_avx512vnni() { return (detected_features() & kAvx512Vnni) != 0; }
bool cpu_has_avxvnni() { return (detected_features() & kAvxVnni) != 0; }
bool cpu_has_amxint8() { return (detected_features() & kAmxInt8) != 0; }
uint32_t cpu_features() { return detected_features(); }
uint32_t active_cpu_features() { return feature_mask().load(std::memory_order_relaxed); }

bool restrict_cpu_features(uint32_t mask) {
  if ((mask & ~detected_features()) != 0) return false;
  feature_mask().store(mask, std::memory_order_relaxed);
  return true;
}

const char* kernel_arch_name(KernelArch a) {
  switch (a) {
    case KernelArch::Scalar: return "scalar";
    case KernelArch::Portable: return "portable";
    case KernelArch::Avx2: return "avx2";
    case KernelArch::Avx512: return "avx512";
  }
  return "?";
}

bool kernel_arch_supported(KernelArch a) { return built(a) && cpu_has(a); }

KernelArch best_kernel_arch() {
  for (KernelArch a : {KernelArch::Avx512, KernelArch::Avx2, KernelArch::Portable})
    if (kernel_arch_supported(a)) return a;
  return KernelArch::Scalar;
}

KernelArch active_kernel_arch() { return current().load(std::memory_order_relaxed); }

bool force_kernel_arch(KernelArch a) {
  if (!kernel_arch_supported(a)) return false;
  current().store(a, std::memory_order_relaxed);
  return true;
}

}  // namespace coopvk::kernels
