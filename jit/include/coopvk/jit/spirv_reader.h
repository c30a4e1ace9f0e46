// SPIR-V binary -> Module, with validation of the structure the lowering relies on.
// Never reads outside the given words and never crashes on malformed input: every
// problem is reported with a message naming it and the word offset of the instruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

struct ReadResult {
  bool ok = false;
  std::string error;  // "offset N (OpFoo): what is wrong" when !ok
};

ReadResult read_spirv(const uint32_t* words, size_t word_count, Module* out);

// Capabilities the lowering implements; a module declaring any other is rejected by
// read_spirv with a message naming it.
bool capability_supported(uint32_t capability);

// Name of an opcode from the SPIR-V grammar (generated table), or null.
const char* opcode_name(uint32_t opcode);

// Name of a capability ("Shader") from the grammar, or null.
const char* capability_name(uint32_t capability);

// Name of a GLSL.std.450 extended instruction ("FMix"), or null.
const char* glsl_std_450_name(uint32_t number);

}  // namespace coopvk::jit
