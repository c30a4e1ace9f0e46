// COOPVK_PERF_MAP=1: every function the JIT links is listed in /tmp/perf-<pid>.map, the
// file `perf report` reads to name samples in code generated at run time, so a profile
// of a shader's dispatch shows its own functions instead of bare addresses.
#pragma once

namespace llvm::orc {
class LLJIT;
}

namespace coopvk::jit {

// Adds the listing to a JIT that links with JITLink (LLJIT's default on x86-64 ELF)
// when COOPVK_PERF_MAP is set; does nothing otherwise.
void add_perf_map_listing(llvm::orc::LLJIT& jit);

}  // namespace coopvk::jit
