#include "jit_run.h"

#include <catch2/catch_test_macros.hpp>

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "coopvk/jit/spirv_reader.h"
#include "coopvk/jit/tile_cache.h"
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
  return compile_compute(mod, options_for(r));
}

std::string optimized_ir(const std::vector<uint32_t>& words, const CompileOptions& opts, CompileResult* cr,
                         bool whole_module) {
  char dir_template[] = "/tmp/coopvk-test-ir-XXXXXX";
  REQUIRE(mkdtemp(dir_template));
  const std::string dir = dir_template;
  REQUIRE(setenv("COOPVK_DUMP_IR", dir.c_str(), 1) == 0);
  Module m;
  REQUIRE(read_spirv(words.data(), words.size(), &m).ok);
  *cr = compile_compute(m, opts);
  unsetenv("COOPVK_DUMP_IR");
  INFO(cr->error);
  REQUIRE(cr->shader);
  // The last lowering's (the highest number): a shader the compiler lowered again at a
  // narrower width (width/subgroup_width.h) leaves the first one's dumps too.
  std::string ir;
  long last = -1;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 13 && n.substr(n.size() - 13) == ".optimized.ll" && std::atol(n.c_str()) > last) {
        last = std::atol(n.c_str());
        std::ifstream f(dir + "/" + n);
        std::stringstream ss;
        ss << f.rdbuf();
        ir = ss.str();
      }
      if (n != "." && n != ".." && !std::getenv("COOPVK_TEST_KEEP_IR")) std::remove((dir + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
  REQUIRE(!ir.empty());
  if (whole_module) return ir;
  const size_t at = ir.find("define void @coopvk_subgroup_main");
  REQUIRE(at != std::string::npos);
  return ir.substr(at, ir.find("\n}\n", at) - at);
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

CompileOptions options_for(const Run& r) {
  CompileOptions opts;
  opts.subgroup_size = r.subgroup_size;
  opts.specialization = r.spec;
  opts.matrix_combinations = r.matrices;
  opts.robust_buffer_access = r.robust;
  opts.cooperative_vector = opts.cooperative_vector_training = r.coopvec;
  opts.vector_combinations = r.vectors;
  opts.max_vector_components = r.max_vector_components;
  opts.layout.sets[0].bindings.resize(r.buffers.size());
  for (size_t b = 0; b < r.buffers.size(); ++b)
    opts.layout.sets[0].bindings[b] = {true, DescriptorKind::StorageBuffer, uint32_t(b), 1};
  return opts;
}

CompiledShader run_words(const std::vector<uint32_t>& words, Run& r) {
  CompileResult cr = compile_for(words, r);
  INFO(cr.error);
  REQUIRE(cr.shader);
  if (r.serialized) {
    const std::vector<uint8_t> blob = serialize(*cr.shader);
    cr = deserialize(blob.data(), blob.size());
    INFO(cr.error);
    REQUIRE(cr.shader);
  }
  std::vector<BufferDescriptor> descs;
  for (size_t k = 0; k < r.buffers.size(); ++k) {
    size_t range = k < r.ranges.size() && r.ranges[k] ? r.ranges[k] : r.buffers[k]->size();
    descs.push_back({r.buffers[k]->data(), range});
  }
  DispatchState ds{};
  ds.sets[0] = descs.data();
  std::vector<uint8_t> push(kMaxPushConstantBytes, 0);
  if (!r.push.empty()) std::memcpy(push.data(), r.push.data(), r.push.size());
  ds.push_constants = push.data();
  for (int k = 0; k < 3; ++k) ds.num_workgroups[k] = r.groups[k];
  std::unique_ptr<TileCache> cache;
  if (r.tile_cache) {
    cache = std::make_unique<TileCache>();
    ds.dispatch_serial = 1;
    cache->begin(ds.dispatch_serial);
    ds.tile_cache = cache.get();
  }
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
