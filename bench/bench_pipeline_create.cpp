// Pipeline creation time (vkCreateShaderModule + vkCreateComputePipelines, as an
// application sees it) for a typical compute shader, three ways:
//   cold       a fresh VkDevice and an empty VkPipelineCache each time, so neither the
//              application's cache nor a driver-internal per-device cache can help;
//   cached     the same device, a VkPipelineCache filled by an earlier creation;
//   from data  a fresh VkDevice and a VkPipelineCache created from the bytes of
//              vkGetPipelineCacheData (the round trip an application does across runs);
//   disk       a fresh VkDevice and an empty VkPipelineCache, with coopvk's disk cache on
//              (a temporary COOPVK_CACHE_DIR that one earlier creation filled): a second
//              run of an application that keeps no cache data of its own;
// and "cold + first dispatch": creation on a fresh device followed by one dispatch of one
// workgroup (zero push constants, small buffers) — drivers that compile lazily at the
// first dispatch, as lavapipe does, pay their compile there.
//
//   bench_pipeline_create [shader=gemm_tiled] [reps=10] [cache-data-out]
//
// With a third argument, the bytes of vkGetPipelineCacheData are also written to that file
// (for coopvk they hold the JIT's object file: a way to look at the generated code).
//
// Prints medians in ms, the ratios cold/cached and cold/from-data, and machine-readable
// lines `pipeline_cold_ms`, `pipeline_cached_ms`, `pipeline_from_data_ms`,
// `pipeline_cold_first_dispatch_ms`. The shader may use up to 3 storage buffers at bindings
// 0..2 and up to 16 bytes of push constants, and must stay in bounds of 4 KiB buffers when
// all its push constants are zero (every bench shader does). Every device is created with
// shaderFloat16 and storageBuffer16BitAccess, so the fp16 shaders can be created too.
// scripts/bench.sh runs it for every bench shader.
// Run lavapipe with MESA_SHADER_CACHE_DISABLE=true, or its on-disk cache makes "cold" warm;
// coopvk's disk cache is turned off here (COOPVK_CACHE=0, read at device creation) except
// for the disk column.
#include "bench_vk.h"

#include <cstdlib>
#include <filesystem>

namespace {

// Every Context here enables the fp16 features (see the top).
const bench::Fp16Features kFp16;

VkPipelineCache new_cache(VkDevice dev, const std::vector<uint8_t>& data = {}) {
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  VkPipelineCache c;
  BENCH_VK(vkCreatePipelineCache(dev, &ci, nullptr, &c));
  return c;
}

// Times one creation with `cache` on `ctx`'s device; the pipeline is destroyed after.
double time_create(bench::Context& ctx, const std::vector<uint32_t>& words, VkPipelineCache cache) {
  bench::Compute comp(ctx.device, 3, 16);
  const double t0 = bench::now_s();
  VkPipeline p = comp.create(words, cache);
  const double t = bench::now_s() - t0;
  vkDestroyPipeline(ctx.device, p, nullptr);
  return t;
}

// Times creation + one single-workgroup dispatch on a fresh device.
double time_create_and_dispatch(const std::vector<uint32_t>& words) {
  bench::Context ctx(kFp16.chain());
  bench::Buffer b[3] = {ctx.buffer(4096), ctx.buffer(4096), ctx.buffer(4096)};
  bench::Compute comp(ctx.device, 3, 16);
  VkPipelineCache c = new_cache(ctx.device);
  const uint32_t push[4] = {0, 0, 0, 0};
  const double t0 = bench::now_s();
  comp.pipeline = comp.create(words, c);
  comp.bind({&b[0], &b[1], &b[2]});
  VkCommandBuffer cb = comp.record(ctx, push, sizeof(push), 1);
  ctx.submit_and_wait(cb);
  const double t = bench::now_s() - t0;
  vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  vkDestroyPipelineCache(ctx.device, c, nullptr);
  for (auto& x : b) ctx.destroy(x);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  bench::report_crashes("bench_pipeline_create");
  const std::string shader = argc > 1 ? argv[1] : "gemm_tiled";
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  if (reps <= 0) {
    std::fprintf(stderr, "usage: bench_pipeline_create [shader] [reps>0]\n");
    return 2;
  }
  const std::vector<uint32_t> words = bench::load_spv(shader);
  ::setenv("COOPVK_CACHE", "0", 1);

  std::vector<double> cold, cached, from_data, disk;
  for (int r = 0; r < reps; ++r) {
    bench::Context ctx(kFp16.chain());
    if (r == 0) bench::print_device(ctx);
    VkPipelineCache c = new_cache(ctx.device);
    cold.push_back(time_create(ctx, words, c));
    vkDestroyPipelineCache(ctx.device, c, nullptr);
  }

  std::vector<double> cold_first;
  for (int r = 0; r < reps; ++r) cold_first.push_back(time_create_and_dispatch(words));

  std::vector<uint8_t> data;
  {
    bench::Context ctx(kFp16.chain());
    VkPipelineCache c = new_cache(ctx.device);
    time_create(ctx, words, c);  // fills the cache
    for (int r = 0; r < reps; ++r) cached.push_back(time_create(ctx, words, c));
    size_t size = 0;
    BENCH_VK(vkGetPipelineCacheData(ctx.device, c, &size, nullptr));
    data.resize(size);
    BENCH_VK(vkGetPipelineCacheData(ctx.device, c, &size, data.data()));
    data.resize(size);
    if (argc > 3) {
      std::ofstream out(argv[3], std::ios::binary);
      out.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", argv[3]);
        return 1;
      }
    }
    vkDestroyPipelineCache(ctx.device, c, nullptr);
  }

  for (int r = 0; r < reps; ++r) {
    bench::Context ctx(kFp16.chain());
    VkPipelineCache c = new_cache(ctx.device, data);
    from_data.push_back(time_create(ctx, words, c));
    vkDestroyPipelineCache(ctx.device, c, nullptr);
  }

  {
    char dir[] = "/tmp/coopvk-bench-cache-XXXXXX";
    if (!::mkdtemp(dir)) {
      std::fprintf(stderr, "cannot make a temporary directory\n");
      return 1;
    }
    ::setenv("COOPVK_CACHE_DIR", dir, 1);
    ::unsetenv("COOPVK_CACHE");
    {
      bench::Context ctx(kFp16.chain());
      VkPipelineCache c = new_cache(ctx.device);
      time_create(ctx, words, c);  // compiles and writes the entry
      vkDestroyPipelineCache(ctx.device, c, nullptr);
    }
    for (int r = 0; r < reps; ++r) {
      bench::Context ctx(kFp16.chain());
      VkPipelineCache c = new_cache(ctx.device);
      disk.push_back(time_create(ctx, words, c));
      vkDestroyPipelineCache(ctx.device, c, nullptr);
    }
    ::setenv("COOPVK_CACHE", "0", 1);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  const double mf = bench::median(cold_first) * 1e3;
  const double mc = bench::median(cold) * 1e3, mh = bench::median(cached) * 1e3,
               md = bench::median(from_data) * 1e3, mk = bench::median(disk) * 1e3;
  std::printf("pipeline creation of %s.spv (%zu words), median of %d:\n", shader.c_str(), words.size(), reps);
  std::printf("  cold (fresh device, empty cache)     %9.3f ms  (best %.3f)\n", mc, bench::minimum(cold) * 1e3);
  std::printf("  cold + first dispatch                %9.3f ms  (best %.3f)\n", mf,
              bench::minimum(cold_first) * 1e3);
  std::printf("  cached (same VkPipelineCache)        %9.3f ms  (best %.3f)\n", mh, bench::minimum(cached) * 1e3);
  std::printf("  from data (%7zu bytes, new device) %9.3f ms  (best %.3f)\n", data.size(), md,
              bench::minimum(from_data) * 1e3);
  std::printf("  disk (new device, disk cache)        %9.3f ms  (best %.3f)\n", mk, bench::minimum(disk) * 1e3);
  std::printf("  ratio cold / cached     %.1f\n", mc / mh);
  std::printf("  ratio cold / from data  %.1f\n", mc / md);
  std::printf("  ratio cold / disk       %.1f\n", mc / mk);
  std::printf("pipeline_cold_ms %.4f\npipeline_cached_ms %.4f\npipeline_from_data_ms %.4f\npipeline_disk_ms %.4f\n",
              mc, mh, md, mk);
  std::printf("pipeline_cold_first_dispatch_ms %.4f\n", mf);
  return 0;
}
