#include "jit_run.h"

#include <catch2/catch_test_macros.hpp>

#include <fstream>

#include "coopvk/jit/spirv_reader.h"
#include "coopvk/jit/workgroup_runner.h"

namespace coopvk::test {

using namespace coopvk::jit;

std::vector<uint32_t> load_test_spv(const std::string& dir, const std::string& name) {
  std::ifstream f(dir + "/" + name + ".spv", std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

CompileResult compile_for(const std::vector<uint32_t>& words, const Run& r) {
  Module mod;
  ReadResult rr = read_spirv(words.data(), words.size(), &mod);
  INFO(rr.error);
  REQUIRE(rr.ok);
  CompileOptions opts;
  opts.subgroup_size = r.subgroup_size;
  opts.specialization = r.spec;
  opts.matrix_combinations = r.matrices;
  opts.robust_buffer_access = r.robust;
  opts.layout.sets[0].bindings.resize(r.buffers.size());
  for (size_t b = 0; b < r.buffers.size(); ++b)
    opts.layout.sets[0].bindings[b] = {true, DescriptorKind::StorageBuffer, uint32_t(b), 1};
  return compile_compute(mod, opts);
}

CompiledShader run_words(const std::vector<uint32_t>& words, Run& r) {
  CompileResult cr = compile_for(words, r);
  INFO(cr.error);
  REQUIRE(cr.shader);
  std::vector<BufferDescriptor> descs;
  for (auto* b : r.buffers) descs.push_back({b->data(), b->size()});
  DispatchState ds{};
  ds.sets[0] = descs.data();
  std::vector<uint8_t> push(kMaxPushConstantBytes, 0);
  if (!r.push.empty()) std::memcpy(push.data(), r.push.data(), r.push.size());
  ds.push_constants = push.data();
  for (int k = 0; k < 3; ++k) ds.num_workgroups[k] = r.groups[k];
  WorkgroupRunner runner;
  for (uint32_t z = 0; z < r.groups[2]; ++z)
    for (uint32_t y = 0; y < r.groups[1]; ++y)
      for (uint32_t x = 0; x < r.groups[0]; ++x) {
        uint32_t id[3] = {x, y, z};
        runner.run(*cr.shader, ds, id);
      }
  return *cr.shader;
}

}  // namespace coopvk::test
