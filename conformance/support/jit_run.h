// Runs a compute shader through the JIT without Vulkan (reader -> lowering -> ORC ->
// WorkgroupRunner), for the unit tests of the JIT: host vectors are set 0's storage
// buffers, bindings 0..n-1.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "coopvk/jit/compiler.h"

namespace coopvk::test {

// words of <COOPVK_TEST_SHADER_DIR>/<name>.spv (the test target defines the directory)
std::vector<uint32_t> load_test_spv(const std::string& dir, const std::string& name);

struct Run {
  std::vector<std::vector<uint8_t>*> buffers;  // set 0, bindings 0..n-1
  std::vector<uint8_t> push;
  uint32_t groups[3] = {1, 1, 1};
  uint32_t subgroup_size = 0;
  std::vector<jit::SpecializationValue> spec;
  std::vector<jit::MatrixCombination> matrices;  // CompileOptions::matrix_combinations
  bool robust = false;                           // robust_buffer_access
  bool coopvec = false;                          // cooperative_vector (and _training)
  std::vector<jit::VectorCombination> vectors;   // CompileOptions::vector_combinations
  uint32_t max_vector_components = 0;            // CompileOptions::max_vector_components
  std::vector<size_t> ranges;                    // descriptor ranges; missing or 0: the whole buffer
  // Run what jit::deserialize() makes of jit::serialize()'s bytes, as from a VkPipelineCache.
  bool serialized = false;
  // Run with a jit::TileCache (a fresh one, for this dispatch), as the driver's worker pool does.
  bool tile_cache = false;
};

// Compiles and runs the whole dispatch; on a compile error returns null and the message
// in *error (when given) or fails the test.
jit::CompileOptions options_for(const Run& r);
jit::CompileResult compile_for(const std::vector<uint32_t>& words, const Run& r);
// Compiles with COOPVK_DUMP_IR and returns the optimized IR: the subgroup entry point alone
// (the workgroup-range one loops over subgroups), or with whole_module every function (when
// the shader's main is not inlined into it); *cr gets the result, which must compile.
// COOPVK_TEST_KEEP_IR=1 leaves the dumps in /tmp/coopvk-test-ir-*, to read when an IR check fails.
std::string optimized_ir(const std::vector<uint32_t>& words, const jit::CompileOptions& opts, jit::CompileResult* cr,
                         bool whole_module = false);
// How often `needle` occurs in `text`.
size_t occurrences(const std::string& text, const std::string& needle);
jit::CompiledShader run_words(const std::vector<uint32_t>& words, Run& r);

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <typename T>
T at(const std::vector<uint8_t>& b, size_t i) {
  T v;
  std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace coopvk::test
