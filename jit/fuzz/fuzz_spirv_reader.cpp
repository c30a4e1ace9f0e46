// libFuzzer target for the SPIR-V reader (jit/src/spirv/spirv_reader.cpp).
//
// Build (needs clang; the default gcc build skips it) and run for 30 seconds, seeded with
// the unit test's sample module:
//
//   CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCOOPVK_FUZZ=ON
//   ninja -C build-fuzz fuzz_spirv_reader unit_spirv_reader_shaders
//   mkdir -p build-fuzz/corpus && cp build-fuzz/conformance/unit/shaders/*.spv build-fuzz/corpus/
//   ./build-fuzz/jit/fuzz_spirv_reader -max_total_time=30 build-fuzz/corpus
//
// The default (gcc) build also makes build/jit/fuzz/fuzz_spirv_reader whenever clang++ is
// installed: `build/jit/fuzz/fuzz_spirv_reader -max_total_time=30 <corpus dir>`.
//
// Only the reader's own sources (jit/src/spirv/spirv_reader.cpp, spirv_grammar.cpp,
// capabilities.cpp and the generated tables) are compiled into it, so build just this
// target: the rest of the tree need not compile with clang (with clang-14,
// kernels/src/cpu_dispatch.cpp does not: its CPU feature strings are newer).
//
// The target copies the input into an allocation of exactly the module's size, so
// AddressSanitizer reports any read past the words; a crash, a sanitizer report or an
// error message without an offset is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "coopvk/jit/spirv_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t count = size / 4;
  std::unique_ptr<uint32_t[]> words(new uint32_t[count ? count : 1]);
  if (count) std::memcpy(words.get(), data, count * 4);
  // A legal bound may reach 4,194,303, and Module::defs is sized by it: tens of MB to
  // allocate and clear per input, which would make the fuzzer ~50x slower. Fold large
  // bounds into 16 bits (the limit check itself is covered by the unit tests).
  if (count > 3 && words[3] > 0xFFFF && words[3] <= 0x3FFFFF) words[3] &= 0xFFFF;
  coopvk::jit::Module m;
  coopvk::jit::ReadResult r = coopvk::jit::read_spirv(count ? words.get() : nullptr, count, &m);
  if (!r.ok && r.error.rfind("offset ", 0) != 0) std::abort();
  if (r.ok) {
    // Walk what was accepted through the Module's own indexes.
    for (coopvk::jit::Id id = 0; id < m.defs.size(); ++id) {
      const coopvk::jit::Instruction* def = m.def(id);
      if (def && def->result != id) std::abort();
    }
  }
  return 0;
}
