// Malformed modules that the reader accepts must still never crash the compiler: the
// lowering checks operand types (lower_typecheck.cpp) and fails with a message. This
// mutates valid shaders word by word (deterministically) and compiles whatever the
// reader lets through; a crash or an empty error message fails the test.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "coopvk/jit/compiler.h"
#include "coopvk/jit/spirv_reader.h"
#include "coopvk/kernels/number_formats.h"

using namespace coopvk::jit;

namespace {

std::vector<uint32_t> read_words(const std::string& name) {
  std::ifstream f(std::string(COOPVK_TEST_SHADER_DIR) + "/" + name + ".spv", std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> base(bytes.size() / 4);
  std::memcpy(base.data(), bytes.data(), base.size() * 4);
  return base;
}

// 400 deterministic mutations of shader `name`, each compiled when the reader accepts it.
void mutate_and_compile(const std::string& name, const CompileOptions& opts) {
  std::vector<uint32_t> base = read_words(name);
  std::mt19937 rng(uint32_t(std::hash<std::string>{}(name)));
  int accepted = 0, compiled = 0;
  for (int it = 0; it < 400; ++it) {
    std::vector<uint32_t> w = base;
    for (int k = 1 + int(rng() % 3); k > 0; --k) {
      size_t i = 5 + rng() % (w.size() - 5);
      switch (rng() % 3) {
        case 0: w[i] ^= 1u << (rng() % 32); break;  // flip a bit
        case 1: w[i] = rng() % 64; break;           // a small id or literal
        default: w[i] = w[5 + rng() % (w.size() - 5)];  // a word from elsewhere
      }
    }
    Module m;
    if (!read_spirv(w.data(), w.size(), &m).ok) continue;
    ++accepted;
    if (std::getenv("COOPVK_ROBUSTNESS_DUMP")) {  // debugging aid: the module being compiled
      std::ofstream d(std::getenv("COOPVK_ROBUSTNESS_DUMP"), std::ios::binary);
      d.write(reinterpret_cast<const char*>(w.data()), std::streamsize(w.size() * 4));
    }
    CompileResult r = compile_compute(m, opts);
    if (r.shader) ++compiled;
    else REQUIRE(!r.error.empty());
  }
  INFO(name << ": " << accepted << " accepted, " << compiled << " compiled");
  CHECK(accepted > 0);  // the mutations must reach the compiler at all
  CHECK(compiled > 0);  // and some (harmless ones) must still compile: the options fit the shader
}

CompileOptions storage_options() {
  CompileOptions opts;
  opts.layout.sets[0].bindings.resize(8);
  for (uint32_t b = 0; b < 8; ++b) opts.layout.sets[0].bindings[b] = {true, DescriptorKind::StorageBuffer, b, 1};
  return opts;
}

}  // namespace

TEST_CASE("mutated shaders compile or fail cleanly") {
  std::string name = GENERATE("saxpy", "control_flow", "subgroup_ops", "glsl_math", "types_storage", "dot_bda");
  mutate_and_compile(name, storage_options());
}

TEST_CASE("mutated cooperative-matrix shaders compile or fail cleanly") {
  // KHR multiply-add and element-wise shaders, the maintenance1 reductions, per-element
  // callbacks, coordinates and use conversions and their VK_NV_cooperative_matrix2
  // spellings, and the legacy NV multiply-add, with their features and types on.
  std::string name = GENERATE("muladd_f16_f32", "ops_f32", "m1_ops_f32", "m1_quad_f32", "m1_convert_f32", "nv2_ops_f32",
                              "nv2_quad_f32", "nv2_convert_f32", "nv_muladd_f16_f32");
  CompileOptions opts = storage_options();
  using NF = coopvk::kernels::NumberFormat;
  auto f = [](NF x) { return uint8_t(x); };
  opts.matrix_combinations = {{16, 16, 16, f(NF::F16), f(NF::F16), f(NF::F32), f(NF::F32), false},
                              {16, 16, 16, f(NF::F16), f(NF::F16), f(NF::F16), f(NF::F16), false},
                              {16, 16, 16, f(NF::F32), f(NF::F32), f(NF::F32), f(NF::F32), false},
                              {8, 8, 8, f(NF::F32), f(NF::F32), f(NF::F32), f(NF::F32), false}};
  opts.matrix_reductions = opts.matrix_conversions = opts.matrix_per_element = opts.matrix_get_coordinate = true;
  opts.nv2.reductions = opts.nv2.conversions = opts.nv2.per_element = opts.nv_matrix = true;
  opts.specialization = {{0, {16, 0, 0, 0}}};  // two subgroups of the default 8 lanes
  mutate_and_compile(name, opts);
}

TEST_CASE("mutated workgroup-scope matrix shaders compile or fail cleanly") {
  // wg_matrix: workgroup-scope loads, stores, multiply-adds in a loop, reductions, a
  // transpose and a per-element callback, split over four subgroups of 8 lanes.
  CompileOptions opts = storage_options();
  opts.layout.sets[0].bindings.resize(14);
  for (uint32_t b = 8; b < 14; ++b) opts.layout.sets[0].bindings[b] = {true, DescriptorKind::StorageBuffer, b, 1};
  using NF = coopvk::kernels::NumberFormat;
  auto f = [](NF x) { return uint8_t(x); };
  for (uint8_t scope : {uint8_t(3), uint8_t(2)}) {
    MatrixCombination h{16, 16, 16, f(NF::F16), f(NF::F16), f(NF::F32), f(NF::F32), false};
    MatrixCombination s{16, 16, 16, f(NF::F32), f(NF::F32), f(NF::F32), f(NF::F32), false};
    for (MatrixCombination* c : {&h, &s}) {
      c->scope = scope;
      c->flexible = true;
      c->max_dimension = 256;
      c->max_invocations = scope == 2 ? 256 : 0;
      opts.matrix_combinations.push_back(*c);
    }
  }
  opts.nv2.workgroup_scope = opts.nv2.flexible_dimensions = true;
  opts.nv2.reductions = opts.nv2.conversions = opts.nv2.per_element = true;
  opts.subgroup_size = 8;
  opts.specialization = {{0, {32, 0, 0, 0}}};
  mutate_and_compile("wg_matrix", opts);
}
