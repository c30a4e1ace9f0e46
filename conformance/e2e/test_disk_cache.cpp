// The disk cache (icd/disk_cache.h) and parallel pipeline creation, through the loader.
// Every case points the cache at its own temporary directory (the driver reads
// COOPVK_CACHE* when a device is created, so a case sets them before each device), and the
// evidence is the directory's files and the driver's COOPVK_LOG=info lines, never timing:
// an entry appears after a compile, a fresh device logs "disk cache hit" for it, a damaged
// or foreign entry is ignored and written again, the size bound evicts the least recently
// used entries, COOPVK_CACHE=0 leaves the disk alone, and threads and processes creating
// pipelines at once all get right results. One case leaves COOPVK_CACHE_DIR unset, so the
// default places ($XDG_CACHE_HOME, $HOME) are exercised too.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compute_job.h"
#include "disk_cache.h"  // the entry format, to damage entries on purpose
#include "sha256.h"
#include "vk_test_env.h"

using namespace coopvk::test;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/coopvk-disk-cache-XXXXXX";
    if (!::mkdtemp(name)) throw std::runtime_error("mkdtemp failed");
    path = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The log level is read once per process, at the driver's first message: set before any.
void log_info() { ::setenv("COOPVK_LOG", "info", 1); }

// The cache the next device uses: `dir`, on, the default bound.
void use_cache_dir(const fs::path& dir) {
  log_info();
  ::setenv("COOPVK_CACHE_DIR", dir.c_str(), 1);
  ::unsetenv("COOPVK_CACHE");
  ::unsetenv("COOPVK_CACHE_MAX_SIZE");
}

bool is_entry(const fs::path& p) {
  const std::string n = p.filename().string();
  return n.size() == 64 && n.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The entry files in `dir` (none if it does not exist), sorted.
std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_entry(e.path())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t entry_bytes(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& p : entries(dir)) total += fs::file_size(p);
  return total;
}

bool has_temp_files(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp") != std::string::npos) return true;
  return false;
}

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

std::string hex(const coopvk::Hash256& key) {
  std::string s;
  char d[3];
  for (uint8_t b : key) {
    std::snprintf(d, sizeof(d), "%02x", b);
    s += d;
  }
  return s;
}

// Whether `p` is a whole entry: header, name, size and checksum agree.
bool entry_is_valid(const fs::path& p) {
  std::vector<uint8_t> b = read_bytes(p);
  coopvk::DiskCacheHeader h;
  if (b.size() < sizeof(h)) return false;
  std::memcpy(&h, b.data(), sizeof(h));
  coopvk::Sha256 sum;
  sum.update(b.data() + sizeof(h), b.size() - sizeof(h));
  coopvk::Hash256 key;
  std::memcpy(key.data(), h.key, 32);
  return std::memcmp(h.magic, coopvk::kDiskCacheMagic, 8) == 0 && h.format == coopvk::kDiskCacheFormat &&
         h.header_bytes == sizeof(h) && h.payload_bytes == b.size() - sizeof(h) &&
         std::memcmp(sum.finish().data(), h.payload_sha256, 32) == 0 &&
         hex(key) == p.filename().string();
}

// What the driver writes to stderr while this lives.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = ::dup(2);
    ::dup2(::fileno(file_), 2);
  }
  ~StderrCapture() { finish(); }
  std::string text() {
    finish();
    std::string s;
    std::rewind(file_);
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof(buf), file_)) s.append(buf, n);
    return s;
  }

 private:
  void finish() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
    // Shown again, so a failing case's log is in the test output.
    std::rewind(file_);
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof(buf), file_)) std::fwrite(buf, 1, n, stderr);
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// saxpy.comp (y = a * x + y) as pipelines that differ by a specialization value: the shader
// has no constant 7, which Vulkan allows ("that map entry does not affect the behavior of
// the pipeline"), but the value is part of the pipeline's key, so each variant is its own
// cache entry with the same code.
struct Saxpy {
  Device& dev;
  StorageLayout layout;
  VkShaderModule module = VK_NULL_HANDLE;
  static constexpr uint32_t kN = 1000;

  explicit Saxpy(Device& d) : dev(d), layout(d.device, 2, 8) {
    std::vector<uint32_t> words = load_spirv_file(std::string(COOPVK_E2E_SHADER_DIR) + "/saxpy.spv");
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = words.size() * 4;
    ci.pCode = words.data();
    VK_CHECK(vkCreateShaderModule(dev.device, &ci, nullptr, &module));
  }
  ~Saxpy() { vkDestroyShaderModule(dev.device, module, nullptr); }

  // One vkCreateComputePipelines call: a create info per variant, each with `flags`
  // (flags_at overrides some), the one at `bad_entry` naming an entry point the module lacks.
  std::vector<VkPipeline> create(const std::vector<uint32_t>& variants, VkResult* result = nullptr,
                                 VkPipelineCreateFlags flags = 0, int bad_entry = -1,
                                 std::vector<std::pair<size_t, VkPipelineCreateFlags>> flags_at = {}) {
    std::deque<uint32_t> values(variants.begin(), variants.end());
    const VkSpecializationMapEntry entry{7, 0, 4};
    std::vector<VkSpecializationInfo> spec(variants.size());
    std::vector<VkComputePipelineCreateInfo> infos(variants.size());
    for (size_t i = 0; i < variants.size(); ++i) {
      spec[i] = {1, &entry, 4, &values[i]};
      VkComputePipelineCreateInfo& ci = infos[i];
      ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
      ci.flags = flags;
      for (auto& [at, f] : flags_at)
        if (at == i) ci.flags = f;
      ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
      ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
      ci.stage.module = module;
      ci.stage.pName = int(i) == bad_entry ? "no_such_entry_point" : "main";
      ci.stage.pSpecializationInfo = &spec[i];
      ci.layout = layout.layout;
    }
    std::vector<VkPipeline> out(variants.size(), reinterpret_cast<VkPipeline>(uintptr_t(0xbad)));
    VkResult r = vkCreateComputePipelines(dev.device, VK_NULL_HANDLE, uint32_t(infos.size()), infos.data(),
                                          nullptr, out.data());
    if (result) *result = r;
    else VK_CHECK(r);
    return out;
  }
  VkPipeline create_one(uint32_t variant) { return create({variant})[0]; }

  // Runs `p` over kN elements; true when every result is right.
  bool run(VkPipeline p, float a = 1.5f) {
    Buffer x = dev.create_buffer(kN * 4), y = dev.create_buffer(kN * 4);
    auto* xf = static_cast<float*>(x.mapped);
    auto* yf = static_cast<float*>(y.mapped);
    for (uint32_t i = 0; i < kN; ++i) {
      xf[i] = float(i);
      yf[i] = float(i % 5);
    }
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &size;
    VkDescriptorPool pool;
    VK_CHECK(vkCreateDescriptorPool(dev.device, &dpci, nullptr, &pool));
    VkDescriptorSet set = layout.write_set(pool, {x.buffer, y.buffer});
    VkCommandBuffer cb = dev.begin();
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout.layout, 0, 1, &set, 0, nullptr);
    struct {
      float a;
      uint32_t n;
    } push{a, kN};
    vkCmdPushConstants(cb, layout.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
    vkCmdDispatch(cb, (kN + 63) / 64, 1, 1);
    dev.submit_and_wait(cb);
    bool ok = true;
    for (uint32_t i = 0; i < kN; ++i) ok = ok && yf[i] == a * float(i) + float(i % 5);
    vkDestroyDescriptorPool(dev.device, pool, nullptr);
    dev.destroy_buffer(x);
    dev.destroy_buffer(y);
    return ok;
  }
  void destroy(const std::vector<VkPipeline>& ps) {
    for (VkPipeline p : ps)
      if (p) vkDestroyPipeline(dev.device, p, nullptr);
  }
};

// Creates variant `v` on a fresh device, checks its results, and returns the driver's log.
std::string create_on_fresh_device(uint32_t v) {
  Device dev;
  Saxpy s(dev);
  StderrCapture cap;
  VkPipeline p = s.create_one(v);
  std::string log = cap.text();
  CHECK(s.run(p));
  s.destroy({p});
  return log;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

TEST_CASE("a pipeline compiled on one device is loaded from disk by a fresh one") {
  TempDir tmp;
  const fs::path dir = tmp.path / "cache";
  use_cache_dir(dir);
  std::string log = create_on_fresh_device(1);
  CHECK(count(log, "disk cache hit") == 0);
  const auto files = entries(dir);
  REQUIRE(files.size() == 1);
  CHECK(entry_is_valid(files[0]));
  CHECK(!has_temp_files(dir));

  log = create_on_fresh_device(1);
  CHECK(count(log, "disk cache hit " + files[0].filename().string()) == 1);
  CHECK(entries(dir) == files);

  // Another specialization is another entry; the first is still found.
  create_on_fresh_device(2);
  CHECK(entries(dir).size() == 2);
  CHECK(count(create_on_fresh_device(1), "disk cache hit") == 1);
}

TEST_CASE("without COOPVK_CACHE_DIR the cache is in XDG_CACHE_HOME, else in HOME") {
  TempDir tmp;
  log_info();
  ::unsetenv("COOPVK_CACHE_DIR");
  ::unsetenv("COOPVK_CACHE");
  ::unsetenv("COOPVK_CACHE_MAX_SIZE");
  ::setenv("XDG_CACHE_HOME", (tmp.path / "xdg").c_str(), 1);
  ::setenv("HOME", (tmp.path / "home").c_str(), 1);
  create_on_fresh_device(1);
  CHECK(entries(tmp.path / "xdg" / "coopvk" / "shaders").size() == 1);
  CHECK(count(create_on_fresh_device(1), "disk cache hit") == 1);
  CHECK(!fs::exists(tmp.path / "home"));

  // A relative XDG_CACHE_HOME is invalid (XDG Base Directory): HOME's default instead.
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  create_on_fresh_device(1);
  CHECK(entries(tmp.path / "home" / ".cache" / "coopvk" / "shaders").size() == 1);
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(count(create_on_fresh_device(1), "disk cache hit") == 1);
  CHECK(!fs::exists("relative"));
}

TEST_CASE("COOPVK_CACHE=0 neither writes nor reads the disk cache") {
  TempDir tmp;
  use_cache_dir(tmp.path / "unused");
  ::setenv("COOPVK_CACHE", "0", 1);
  create_on_fresh_device(1);
  CHECK(!fs::exists(tmp.path / "unused"));

  use_cache_dir(tmp.path / "filled");
  create_on_fresh_device(1);
  REQUIRE(entries(tmp.path / "filled").size() == 1);
  ::setenv("COOPVK_CACHE", "0", 1);
  CHECK(count(create_on_fresh_device(1), "disk cache") == 0);
}

TEST_CASE("a damaged, misplaced or foreign entry is ignored, compiled again and replaced") {
  TempDir tmp;
  const fs::path dir = tmp.path / "cache", other = tmp.path / "other";
  use_cache_dir(other);
  create_on_fresh_device(2);
  REQUIRE(entries(other).size() == 1);
  const std::vector<uint8_t> other_entry = read_bytes(entries(other)[0]);
  use_cache_dir(dir);
  create_on_fresh_device(1);
  REQUIRE(entries(dir).size() == 1);
  const fs::path file = entries(dir)[0];
  std::vector<uint8_t> b = read_bytes(file);
  coopvk::DiskCacheHeader h;
  REQUIRE(b.size() > sizeof(h) + 64);
  std::memcpy(&h, b.data(), sizeof(h));
  const size_t payload = sizeof(h);
  // Rewrites the header's checksum for the payload as it now is: damage it cannot see.
  auto reseal = [&] {
    coopvk::Sha256 sum;
    sum.update(b.data() + payload, b.size() - payload);
    coopvk::Hash256 d = sum.finish();
    std::memcpy(b.data() + offsetof(coopvk::DiskCacheHeader, payload_sha256), d.data(), 32);
  };
  // jit::serialize(): 8 bytes of magic, a 32-bit length, the code signature, then metadata
  // (52 bytes) and the object file.
  uint32_t sig_len = 0;
  std::memcpy(&sig_len, b.data() + payload + 8, 4);
  REQUIRE(payload + 12 + sig_len + 52 + 4 < b.size());
  const size_t object = payload + 12 + sig_len + 52;
  REQUIRE(std::memcmp(b.data() + object, "\x7f" "ELF", 4) == 0);

  std::string expect;
  SECTION("a flipped payload byte") {
    b[b.size() - 10] ^= 0x40;
    expect = "checksum does not match";
  }
  SECTION("truncated") {
    b.resize(b.size() - 100);
    expect = "the size in its header disagrees";
  }
  SECTION("half a header") {
    b.resize(40);
    expect = "shorter than its header";
  }
  SECTION("empty") {
    b.clear();
    expect = "shorter than its header";
  }
  SECTION("not an entry at all") {
    b[0] ^= 1;
    expect = "not a coopvk cache entry";
  }
  SECTION("another entry format") {
    const uint32_t format = coopvk::kDiskCacheFormat + 1;
    std::memcpy(b.data() + offsetof(coopvk::DiskCacheHeader, format), &format, 4);
    expect = "another entry format";
  }
  SECTION("another pipeline's entry under this name") {
    b = other_entry;
    expect = "the key in its header is another";
  }
  SECTION("a payload compiled for another CPU or driver, sealed with a valid checksum") {
    b[payload + 12] ^= 0x20;  // the code signature's first character
    reseal();
    expect = "compiled for another CPU";
  }
  SECTION("a payload whose object file is not one, sealed with a valid checksum") {
    b[object + 1] = 'X';
    reseal();
    expect = "cannot be used";
  }
  write_bytes(file, b);
  const std::string log = create_on_fresh_device(1);
  CHECK(count(log, expect) == 1);
  CHECK(count(log, "disk cache hit") == 0);
  // Compiled and stored again, whole; the next device finds it.
  REQUIRE(entries(dir).size() == 1);
  CHECK(entry_is_valid(file));
  CHECK(count(create_on_fresh_device(1), "disk cache hit") == 1);
}

TEST_CASE("the size bound evicts the least recently used entries") {
  TempDir tmp;
  const fs::path probe = tmp.path / "probe", dir = tmp.path / "cache";
  use_cache_dir(probe);
  create_on_fresh_device(0);
  REQUIRE(entries(probe).size() == 1);
  const uint64_t entry = fs::file_size(entries(probe)[0]);
  // Room for three entries and a half, in KiB (the K suffix).
  const uint64_t kib = entry * 7 / 2 / 1024;
  REQUIRE(kib * 1024 >= entry * 3);
  const uint64_t bound = kib * 1024;

  use_cache_dir(dir);
  ::setenv("COOPVK_CACHE_MAX_SIZE", (std::to_string(kib) + "K").c_str(), 1);
  std::vector<fs::path> names;  // names[v]: variant v's entry
  auto create_and_name = [&](Saxpy& s, uint32_t v) {
    const auto before = entries(dir);
    VkPipeline p = s.create_one(v);
    CHECK(s.run(p));
    s.destroy({p});
    for (const auto& e : entries(dir))
      if (!std::binary_search(before.begin(), before.end(), e)) {
        if (names.size() <= v) names.resize(v + 1);
        names[v] = e;
      }
    CHECK(entry_bytes(dir) <= bound);
  };
  {
    Device dev;
    Saxpy s(dev);
    for (uint32_t v = 0; v < 3; ++v) {
      create_and_name(s, v);
      sleep_ms(30);  // distinct modification times
    }
  }
  REQUIRE(names.size() == 3);
  REQUIRE(entries(dir).size() == 3);
  // A hit on a fresh device makes variant 0 the most recently used...
  CHECK(count(create_on_fresh_device(0), "disk cache hit") == 1);
  sleep_ms(30);
  // ...so the fourth entry pushes out variant 1, the least recently used, not variant 0.
  Device dev;
  Saxpy s(dev);
  StderrCapture cap;
  create_and_name(s, 3);
  const std::string log = cap.text();
  CHECK(count(log, "evicted") == 1);
  REQUIRE(names.size() == 4);
  CHECK(fs::exists(names[0]));
  CHECK(!fs::exists(names[1]));
  CHECK(fs::exists(names[3]));
  // Many more: the directory never holds more than the bound, and the newest is kept.
  for (uint32_t v = 4; v < 12; ++v) {
    sleep_ms(5);
    create_and_name(s, v);
    CHECK(fs::exists(names[v]));
  }
  CHECK(entries(dir).size() <= 3);
}

TEST_CASE("an entry larger than the whole bound is not written") {
  TempDir tmp;
  use_cache_dir(tmp.path / "cache");
  ::setenv("COOPVK_CACHE_MAX_SIZE", "100", 1);  // bytes: less than any entry's header and code
  create_on_fresh_device(1);
  CHECK(entries(tmp.path / "cache").empty());
}

TEST_CASE("a cache directory that cannot be made costs only the cache") {
  TempDir tmp;
  write_bytes(tmp.path / "file", {1, 2, 3});
  use_cache_dir(tmp.path / "file" / "cache");
  const std::string log = create_on_fresh_device(1);
  CHECK(count(log, "cannot create the directory") == 1);
  CHECK(count(create_on_fresh_device(1), "cannot create the directory") == 1);
  CHECK(fs::is_regular_file(tmp.path / "file"));
}

TEST_CASE("pipelines created by several threads at once and by one call of many are right") {
  TempDir tmp;
  use_cache_dir(tmp.path / "cache");
  Device dev;
  Saxpy s(dev);
  // One call, twelve create infos: compiled in parallel, returned in order.
  std::vector<uint32_t> many;
  for (uint32_t v = 0; v < 12; ++v) many.push_back(v);
  std::vector<VkPipeline> ps = s.create(many);
  for (VkPipeline p : ps) {
    REQUIRE(p != VK_NULL_HANDLE);
    CHECK(s.run(p, 0.5f));
  }
  CHECK(entries(tmp.path / "cache").size() == 12);
  s.destroy(ps);

  // Four application threads, one pipeline per call (as ggml-vulkan does), overlapping
  // variants: some compile, some find another thread's pipeline.
  std::vector<std::vector<VkPipeline>> per_thread(4);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (uint32_t k = 0; k < 6; ++k) per_thread[t].push_back(s.create_one(100 + t * 3 + k));
    });
  for (auto& t : threads) t.join();
  for (auto& v : per_thread)
    for (VkPipeline p : v) {
      REQUIRE(p != VK_NULL_HANDLE);
      CHECK(s.run(p, 2.0f));
    }
  for (auto& v : per_thread) s.destroy(v);
  CHECK(entries(tmp.path / "cache").size() == 12 + 15);
  CHECK(!has_temp_files(tmp.path / "cache"));
}

TEST_CASE("in one call a failed create info leaves the others made, and EARLY_RETURN_ON_FAILURE stops at it") {
  TempDir tmp;
  use_cache_dir(tmp.path / "cache");
  VkPhysicalDevicePipelineCreationCacheControlFeatures cc{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES};
  cc.pipelineCreationCacheControl = VK_TRUE;
  DeviceOptions opts;
  opts.features_chain = &cc;
  Device dev(opts);
  Saxpy s(dev);
  const std::vector<uint32_t> variants = {0, 1, 2, 3, 4, 5, 6, 7};
  VkResult r;
  {
    std::vector<VkPipeline> ps = s.create(variants, &r, 0, 3);
    CHECK(r == VK_ERROR_UNKNOWN);
    for (size_t i = 0; i < ps.size(); ++i) {
      if (i == 3) {
        CHECK(ps[i] == VK_NULL_HANDLE);
      } else {
        REQUIRE(ps[i] != VK_NULL_HANDLE);
        CHECK(s.run(ps[i]));
      }
    }
    s.destroy(ps);
  }
  {
    std::vector<VkPipeline> ps =
        s.create({10, 11, 12, 13, 14, 15, 16, 17}, &r, VK_PIPELINE_CREATE_EARLY_RETURN_ON_FAILURE_BIT, 3);
    CHECK(r == VK_ERROR_UNKNOWN);
    for (size_t i = 0; i < ps.size(); ++i) {
      if (i < 3) {
        REQUIRE(ps[i] != VK_NULL_HANDLE);
        CHECK(s.run(ps[i]));
      } else {
        CHECK(ps[i] == VK_NULL_HANDLE);
      }
    }
    s.destroy(ps);
  }
  {
    // As the CTS's batch_return_compile_nocompile: early return on a create info that may not
    // compile, then a normal and a no-compile one; the first cannot come from any cache.
    const VkPipelineCreateFlags no_compile = VK_PIPELINE_CREATE_FAIL_ON_PIPELINE_COMPILE_REQUIRED_BIT;
    std::vector<VkPipeline> ps = s.create({20, 21, 22}, &r, 0, -1,
                                          {{0, no_compile | VK_PIPELINE_CREATE_EARLY_RETURN_ON_FAILURE_BIT},
                                           {2, no_compile}});
    CHECK(r == VK_PIPELINE_COMPILE_REQUIRED);
    for (VkPipeline p : ps) CHECK(p == VK_NULL_HANDLE);
    // Without early return: the middle one compiles, the no-compile ones are refused.
    ps = s.create({30, 31, 32}, &r, 0, -1, {{0, no_compile}, {2, no_compile}});
    CHECK(r == VK_PIPELINE_COMPILE_REQUIRED);
    CHECK(ps[0] == VK_NULL_HANDLE);
    REQUIRE(ps[1] != VK_NULL_HANDLE);
    CHECK(s.run(ps[1]));
    CHECK(ps[2] == VK_NULL_HANDLE);
    s.destroy(ps);
  }
}

TEST_CASE("two processes filling one cache directory at once both get right pipelines") {
  TempDir tmp;
  const fs::path dir = tmp.path / "cache";
  use_cache_dir(dir);
  const std::vector<uint32_t> variants = {0, 1, 2, 3, 4, 5, 6, 7};
  std::cout.flush();
  std::fflush(nullptr);
  pid_t children[2];
  for (pid_t& child : children) {
    child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The child: no Catch2 assertions, an exit status instead.
      int status = 0;
      try {
        Device dev;
        Saxpy s(dev);
        std::vector<VkPipeline> ps = s.create(variants);
        for (VkPipeline p : ps) status |= (p && s.run(p)) ? 0 : 1;
        s.destroy(ps);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        status = 2;
      }
      std::fflush(nullptr);
      ::_exit(status);
    }
  }
  for (pid_t child : children) {
    int status = -1;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(entries(dir).size() == variants.size());
  CHECK(!has_temp_files(dir));
  for (const auto& e : entries(dir)) CHECK(entry_is_valid(e));
  Device dev;
  Saxpy s(dev);
  StderrCapture cap;
  std::vector<VkPipeline> ps = s.create(variants);
  CHECK(count(cap.text(), "disk cache hit") == variants.size());
  for (VkPipeline p : ps) CHECK(s.run(p));
  s.destroy(ps);
}
