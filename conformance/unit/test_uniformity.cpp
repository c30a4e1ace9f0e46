// The uniformity analysis (jit/src/spirv/uniformity.h) on a module with one named value or
// construct per rule, checked against a table written by hand; and the optimized IR of a
// kernel whose loops are uniform, checked for what the lowering promises (no masked or
// gathered memory operations, no per-lane memory left).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "spirv/cfg.h"
#include "spirv/inline_calls.h"
#include "coopvk/jit/compiler.h"
#include "coopvk/jit/spirv_reader.h"
#include "coopvk/jit/workgroup_runner.h"
#include "jit_run.h"
#include "spirv/loop_close.h"
#include "spirv/spirv_enums.h"
#include "spirv/ssa_promote.h"
#include "spirv/uniformity.h"

using namespace coopvk::jit;

namespace {

std::vector<uint32_t> read_words(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

Module read_module(const std::string& path) {
  std::vector<uint32_t> words = read_words(path);
  Module m;
  ReadResult r = read_spirv(words.data(), words.size(), &m);
  INFO(r.error);
  REQUIRE(r.ok);
  return m;
}

Id named(const Module& m, const std::string& name) {
  for (const auto& [id, n] : m.names)
    if (n == name) return id;
  FAIL("no id is named " << name);
  return 0;
}

}  // namespace

TEST_CASE("uniformity analysis: every rule on its own value") {
  // Subgroups of 8 and 16 never span two rows of the 16x2 workgroup (LocalInvocationId.y
  // is uniform); subgroups of 32 do.
  uint32_t sg = GENERATE(8u, 16u, 32u);
  Module m = read_module(COOPVK_UNIFORMITY_SAMPLE_SPV);
  Id entry = m.entry_points.at(0).function;
  promote_variables_to_ssa(m, entry);
  UniformityOptions o;
  o.subgroup_size = sg;
  o.local_size[0] = 16;
  o.local_size[1] = 2;
  Uniformity u;
  std::string error;
  REQUIRE(analyze_uniformity(m, o, &u, &error));
  const std::map<std::string, bool> divergent = {
      {"d_lidx", true},           {"u_wgx", false},          {"d_lidv", true},
      {"d_lid_x", true},          {"ys_lid_y", sg == 32},    {"u_push", false},
      {"u_sum", false},           {"d_mixed", true},         {"u_load_uniform", false},
      {"d_load_lane", true},      {"u_shared_load", false},  {"d_atomic", true},
      {"u_reduce", false},        {"d_scan", true},          {"d_elect", true},
      {"u_first", false},         {"u_ballot", false},       {"d_phi_div_merge", true},
      {"u_phi_uni_merge", false}, {"u_counter", false},      {"u_after_uniform_loop", false},
      // Read after a loop some lanes left early: temporally divergent.
      {"d_div_loop_counter", true}, {"d_after_div_loop", true},
      {"u_rep_var", false},       {"u_rep_elem_ptr", false}, {"d_rep_var_load", true},
      {"d_lane_var", true},       {"d_lane_elem_ptr", true}, {"d_call", true},
      {"d_param", true},
  };
  for (const auto& [name, want] : divergent) {
    INFO(name << " at subgroup size " << sg);
    CHECK(u.is_divergent(named(m, name)) == want);
  }
  CHECK(u.rep_layout(named(m, "u_rep_var")));
  CHECK_FALSE(u.rep_layout(named(m, "d_lane_var")));

  // Constructs, by the name of their header block.
  size_t main_index = 0;
  for (size_t f = 0; f < m.functions.size(); ++f)
    if (m.functions[f].def.result == entry) main_index = f;
  const FunctionUniformity& fu = u.functions.at(main_index);
  const std::map<std::string, bool> construct_divergent = {
      {"sel_div", true}, {"sel_uni", false}, {"loop_uni", false}, {"loop_div", true}};
  for (const auto& [name, want] : construct_divergent) {
    INFO(name);
    uint32_t b = fu.cfg.block(named(m, name));
    REQUIRE(b != kNoBlock);
    int32_t c = fu.cfg.header_of[b];
    REQUIRE(c >= 0);
    CHECK(bool(fu.construct_divergent[c]) == want);
  }
}

TEST_CASE("closing loops keeps a divergent loop's counter uniform inside and per lane after") {
  uint32_t sg = GENERATE(8u, 32u);
  Module m = read_module(COOPVK_UNIFORMITY_SAMPLE_SPV);
  Id entry = m.entry_points.at(0).function;
  promote_variables_to_ssa(m, entry);
  const Id counter = named(m, "d_div_loop_counter"), after = named(m, "d_after_div_loop");
  // d_after_div_loop reads the counter after the loop; that read now goes through a phi.
  CHECK(close_loops(m) >= 1);
  UniformityOptions o;
  o.subgroup_size = sg;
  o.local_size[0] = 16;
  o.local_size[1] = 2;
  Uniformity u;
  std::string error;
  REQUIRE(analyze_uniformity(m, o, &u, &error));
  // Every lane still in the loop has the same count; after it, each lane its own.
  CHECK_FALSE(u.is_divergent(counter));
  CHECK(u.is_divergent(after));
  const Instruction* d = m.def(after);
  REQUIRE(d);
  Id read = d->operands.at(0);
  CHECK(read != counter);
  const Instruction* phi = m.def(read);
  REQUIRE(phi);
  CHECK(phi->opcode == uint16_t(spv::Op::OpPhi));
  CHECK(u.is_divergent(read));
  // The values that stay uniform in the first test stay uniform.
  for (const char* name : {"u_counter", "u_after_uniform_loop", "u_sum", "u_push"}) {
    INFO(name);
    CHECK_FALSE(u.is_divergent(named(m, name)));
  }
}

// The optimized IR of a test shader (jit_run.h's optimized_ir()).
static std::string optimized_ir(const std::string& spv, const CompileOptions& opts, CompileResult* cr,
                                bool whole_module = false) {
  return coopvk::test::optimized_ir(read_words(std::string(COOPVK_TEST_SHADER_DIR) + "/" + spv), opts, cr,
                                    whole_module);
}

// Runs workgroups [0, groups) of a shader whose binding 0 is `v` and whose push constants
// start with `push0`, one after the other on this thread.
static void run_workgroups(const CompiledShader& shader, std::vector<float>& v, uint32_t push0, uint32_t groups) {
  BufferDescriptor desc{reinterpret_cast<uint8_t*>(v.data()), v.size() * 4};
  DispatchState ds{};
  ds.sets[0] = &desc;
  std::vector<uint8_t> push(kMaxPushConstantBytes, 0);
  std::memcpy(push.data(), &push0, 4);
  ds.push_constants = push.data();
  ds.num_workgroups[0] = groups;
  ds.num_workgroups[1] = ds.num_workgroups[2] = 1;
  WorkgroupRunner runner;
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t id[3] = {g, 0, 0};
    runner.run(shader, ds, id);
  }
}

TEST_CASE("a uniform constant-trip-count loop leaves no masked, gathered or per-lane memory operation") {
  CompileOptions opts;
  opts.subgroup_size = 8;
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  CompileResult cr;
  std::string ir = optimized_ir("uniform_loop_kernel.spv", opts, &cr);
  INFO(ir);
  CHECK(ir.find("llvm.masked") == std::string::npos);
  CHECK(ir.find("gather") == std::string::npos);
  CHECK(ir.find("scatter") == std::string::npos);
  CHECK(ir.find("alloca") == std::string::npos);
  // The loops are gone: no block of the kernel branches back.
  CHECK(ir.find("phi ") == std::string::npos);

  // And it still computes the right thing.
  const uint32_t groups = 2, n = groups * 64 * 4;
  std::vector<float> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = float(i % 17) - 3.0f;
  std::vector<float> expect = v;
  for (float& x : expect)
    for (int k = 0; k < 8; ++k) x = x * 0.5f + float(k);
  run_workgroups(*cr.shader, v, 0, groups);
  for (uint32_t i = 0; i < n; ++i) {
    INFO("element " << i);
    REQUIRE(v[i] == expect[i]);
  }
}

TEST_CASE("a lane-affine index used in another block stays one vector access") {
  CompileOptions opts;
  opts.subgroup_size = GENERATE(8u, 16u);
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  opts.layout.push_constant_bytes = 4;
  CompileResult cr;
  std::string ir = optimized_ir("affine_across_blocks.spv", opts, &cr, true);
  INFO("subgroup size " << opts.subgroup_size << "\n" << ir);
  // The load under `if (i < n)` is a masked vector load; a run-time address test would
  // leave its gather fallback behind.
  CHECK(ir.find("gather") == std::string::npos);
  CHECK(ir.find("llvm.masked.load") != std::string::npos);

  // Results against a scalar reference, with n cutting the last workgroup's loads short.
  const uint32_t groups = 3, n = groups * 256 - 100;
  std::vector<float> v(groups * 256);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = float(int(i % 23) - 11);
  std::vector<float> expect = v;
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t l = 0; l < 64; ++l) {
      float acc = 0;
      for (uint32_t k = 0; k < 4; ++k) {
        uint32_t i = g * 256 + l + 64 * k;
        if (i < n) acc += v[i];
      }
      expect[g * 256 + l] = acc;
    }
  run_workgroups(*cr.shader, v, n, groups);
  for (uint32_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    REQUIRE(v[i] == expect[i]);
  }
}

static uint32_t count_calls(const Module& m, Id function) {
  uint32_t n = 0;
  for (const Function& fn : m.functions)
    if (fn.def.result == function)
      for (const Block& b : fn.blocks)
        for (const Instruction& in : b.body) n += in.opcode == uint16_t(spv::Op::OpFunctionCall);
  return n;
}

TEST_CASE("calls are inlined, except to a callee with an early return, and compute what they did") {
  Module m = read_module(std::string(COOPVK_TEST_SHADER_DIR) + "/function_calls.spv");
  Id entry = m.entry_points.at(0).function;
  REQUIRE(count_calls(m, entry) == 6);  // offset_of x2, accumulate, nested, split, clamp_early
  // Those five, nested's two calls where nested was inlined, and the same two in nested's
  // own body (every function is processed).
  CHECK(inline_calls(m) == 9);
  CHECK(count_calls(m, entry) == 1);  // clamp_early returns early: still a call
  // The result is a module the later passes accept, all the way to machine code.
  CHECK(promote_variables_to_ssa(m, entry) > 0);
  close_loops(m);

  CompileOptions opts;
  opts.subgroup_size = GENERATE(8u, 32u);
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  opts.layout.push_constant_bytes = 4;
  CompileResult cr;
  optimized_ir("function_calls.spv", opts, &cr);
  REQUIRE(cr.shader);
  const uint32_t groups = 2, n = groups * 64, stride = 7;
  std::vector<float> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = float(i % 17) * 0.25f - 2.0f;
  std::vector<float> expect(n);
  for (uint32_t i = 0; i < n; ++i) {
    const double x = v[i];
    double acc = double(stride * 2 + 3) + double(stride * 3 + 2);
    if (i % 3 == 0) acc += x * 2.0;
    for (int k = 0; k < 4; ++k) {
      const double y = x + k;
      acc += 1.0 + ((y + 2.0) * y + 3.0) * 2.0;
    }
    const double lo = std::floor(x), t = x - 1.0;
    acc += lo * 3.0 + (x - lo) + (t < 0.0 ? 0.0 : t * 0.5);
    expect[i] = float(acc);
  }
  run_workgroups(*cr.shader, v, stride, groups);
  for (uint32_t i = 0; i < n; ++i) {
    INFO("element " << i << " subgroup size " << opts.subgroup_size);
    REQUIRE(std::fabs(v[i] - expect[i]) <= 1e-4f * std::fmax(1.0f, std::fabs(expect[i])));
  }
}

TEST_CASE("a uniform offset computed by a function keeps its access a whole vector") {
  // The layout is a specialization constant: the branch on it is folded, the uvec2 of
  // coordinates promoted, and either way every access is a whole vector.
  const bool col_major = GENERATE(false, true);
  CompileOptions opts;
  opts.subgroup_size = GENERATE(8u, 32u);
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  opts.layout.push_constant_bytes = 4;
  opts.specialization = {{0, {uint8_t(col_major), 0, 0, 0}}};
  CompileResult cr;
  std::string ir = optimized_ir("function_uniform_offset.spv", opts, &cr);
  INFO("column-major " << col_major << "\n" << ir);
  REQUIRE(cr.shader);
  CHECK(ir.find("llvm.masked.gather") == std::string::npos);
  CHECK(ir.find("llvm.masked.scatter") == std::string::npos);
  CHECK(ir.find("call fastcc") == std::string::npos);

  const uint32_t groups = 3, stride = 64;
  std::vector<float> v(256);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = float(i) - 50.0f;
  std::vector<float> expect = v;
  for (uint32_t g = 0; g < groups; ++g) {  // workgroups in order, as run_workgroups runs them
    const uint32_t base = col_major ? stride * 1 + g : stride * g + 1;
    for (uint32_t l = 0; l < 64; ++l) expect[base + l] = expect[base + l] * 2.0f + 1.0f;
  }
  run_workgroups(*cr.shader, v, stride, groups);
  for (uint32_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    REQUIRE(v[i] == expect[i]);
  }
}

TEST_CASE("a staging copy of rows of vec4s loads and stores whole registers") {
  CompileOptions opts;
  opts.subgroup_size = GENERATE(8u, 32u);
  const uint32_t row_stride = GENERATE(64u, 5u);  // 1 KiB apart (a window per row), or 80 bytes (one window)
  const bool runtime_stride = GENERATE(false, true);
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  opts.layout.push_constant_bytes = 4;
  opts.specialization = {{0, {uint8_t(row_stride), 0, 0, 0}}, {1, {uint8_t(runtime_stride), 0, 0, 0}}};
  CompileResult cr;
  std::string ir = optimized_ir("staged_rows.spv", opts, &cr);
  INFO("subgroup size " << opts.subgroup_size << ", row stride " << row_stride << (runtime_stride ? " (push constant)" : "")
                        << "\n" << ir);
  REQUIRE(cr.shader);
  // The windows: 64-byte registers (16 elements, whatever the subgroup size) loaded whole and
  // stored under element masks. The gathers and scatters left in the IR are the slow paths
  // behind the run-time tests of the lane patterns (the divisions by 4 are exact only when
  // the subgroup's first invocation is a multiple of 4, which the lowering does not assume).
  CHECK(ir.find("load <16 x ") != std::string::npos);
  CHECK(ir.find("llvm.masked.store.v16f32") != std::string::npos);

  const uint32_t groups = 2;
  std::vector<float> v(size_t(groups) * 16 * row_stride * 4 + 64);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = float(i % 97) - 20.0f;
  std::vector<float> expect = v;
  auto src = [&](uint32_t g, uint32_t l) { return ((g * 16 + l / 4) * row_stride + l % 4) * 4; };
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t l = 0; l < 64; ++l)
      for (uint32_t c = 0; c < 4; ++c) expect[src(g, l) + c] = v[src(g, (l + 4) % 64) + c] * 2.0f + float(l);
  run_workgroups(*cr.shader, v, row_stride, groups);
  for (uint32_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    REQUIRE(v[i] == expect[i]);
  }
}

TEST_CASE("a block-stride loop's counter keeps its lane pattern, so its copies are windows") {
  CompileOptions opts;
  opts.subgroup_size = GENERATE(8u, 32u);
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  opts.layout.push_constant_bytes = 4;
  CompileResult cr;
  std::string ir = optimized_ir("block_stride_copy.spv", opts, &cr);
  INFO("subgroup size " << opts.subgroup_size << "\n" << ir);
  REQUIRE(cr.shader);
  CHECK(ir.find("load <16 x ") != std::string::npos);
  CHECK(ir.find("llvm.masked.store.v16f32") != std::string::npos);

  const uint32_t groups = 2, rows = 16, stride = 40;  // vec4s: rows 640 bytes apart
  std::vector<float> v(size_t(groups) * rows * stride * 4);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = float(i % 89) - 30.0f;
  std::vector<float> expect = v;
  auto at = [&](uint32_t g, uint32_t r, uint32_t x) { return ((g * rows + r) * stride + x) * 4; };
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t x = 0; x < 8; ++x)
        for (uint32_t c = 0; c < 4; ++c) expect[at(g, r, x) + c] = v[at(g, (r + 1) % rows, x) + c] * 3.0f + 1.0f;
  run_workgroups(*cr.shader, v, stride, groups);
  for (uint32_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    REQUIRE(v[i] == expect[i]);
  }
}

TEST_CASE("a 2D workgroup's row index is a lane pattern in every subgroup, not only the first") {
  CompileOptions opts;
  opts.subgroup_size = GENERATE(8u, 16u, 32u);
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  CompileResult cr;
  std::string ir = optimized_ir("rows_of_2d_workgroup.spv", opts, &cr);
  INFO("subgroup size " << opts.subgroup_size << "\n" << ir);
  REQUIRE(cr.shader);
  // (32 * subgroup + lane) / 16 % 16 holds as base + per-lane offset whenever
  // 2 * subgroup % 16 stays below 15, which it always does: the test folds away, and with
  // it the gather fallback.
  CHECK(ir.find("gather") == std::string::npos);

  const uint32_t groups = 3;
  std::vector<float> v(size_t(groups) * 256);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = float(int(i * 7 % 23) - 11);
  std::vector<float> expect(v.size());
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t y = 0; y < 16; ++y)
      for (uint32_t x = 0; x < 16; ++x) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < 16; ++k) acc += v[g * 256 + y * 16 + k] * v[g * 256 + k * 16 + x];
        expect[g * 256 + y * 16 + x] = acc;
      }
  run_workgroups(*cr.shader, v, 0, groups);
  for (uint32_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    REQUIRE(v[i] == expect[i]);
  }
}

TEST_CASE("contiguous buffer reads prefetch a page ahead; workgroup-memory reads do not") {
  CompileOptions opts;
  opts.subgroup_size = GENERATE(16u, 32u);
  opts.layout.sets[0].bindings = {{true, DescriptorKind::StorageBuffer, 0, 1}};
  CompileResult cr;
  std::string ir = optimized_ir("rows_of_2d_workgroup.spv", opts, &cr);
  INFO("subgroup size " << opts.subgroup_size << "\n" << ir);
  // One buffer read of a float per lane: one prefetch per 64-byte line of it, 4 KiB past it.
  // The tile reads from workgroup memory get none.
  CHECK(coopvk::test::occurrences(ir, "call void @llvm.prefetch") == opts.subgroup_size * 4 / 64);
  CHECK(ir.find("i64 4096") != std::string::npos);
}
