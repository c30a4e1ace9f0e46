// The classic shared-memory tiled SGEMM (shaders/gemm_tiled.comp, no cooperative
// matrices) on whatever driver VK_DRIVER_FILES selects. scripts/bench.sh runs it on coopvk
// and on lavapipe and divides the two `gemm_gflops` lines.
//
//   bench_gemm [size=512] [reps=5] [shader=gemm_tiled] [tile=16]
//     M = N = K = size (any size; edges are zero-filled); shader O/gemm_tiled is the same
//     GLSL through glslang -O; tile: the side of the C tile one workgroup computes
//     (gemm_tiled: 16, gemm_blocked: 64)
//
// The result is checked against a double-precision CPU reference on a sample of entries
// before anything is timed. The CPU's f32 FMA peak is measured first, in this process
// (fma_peak.h). Prints the median and best time of `reps` dispatches and machine-readable
// lines `gemm_gflops <median GFLOP/s>`, `gemm_peak_fraction <of the all-threads peak>`.
#include <cmath>
#include <random>

#include "bench_vk.h"
#include "fma_peak.h"

int main(int argc, char** argv) {
  bench::report_crashes("bench_gemm");
  const uint32_t n = argc > 1 ? uint32_t(std::atoi(argv[1])) : 512;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string shader = argc > 3 ? argv[3] : "gemm_tiled";
  const uint32_t tile = argc > 4 ? uint32_t(std::atoi(argv[4])) : 16;
  if (n == 0 || reps <= 0 || tile == 0) {
    std::fprintf(stderr, "usage: bench_gemm [size>0] [reps>0] [shader] [tile>0]\n");
    return 2;
  }
  const uint32_t M = n, N = n, K = n;

  const bench::CpuPeak cpu = bench::measure_cpu_peak();
  bench::print_cpu_peak(cpu);
  bench::Context ctx;
  bench::print_device(ctx);
  bench::Buffer a = ctx.buffer(VkDeviceSize(M) * K * 4), b = ctx.buffer(VkDeviceSize(K) * N * 4),
                c = ctx.buffer(VkDeviceSize(M) * N * 4);
  auto* af = static_cast<float*>(a.mapped);
  auto* bf = static_cast<float*>(b.mapped);
  auto* cf = static_cast<float*>(c.mapped);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < size_t(M) * K; ++i) af[i] = dist(rng);
  for (size_t i = 0; i < size_t(K) * N; ++i) bf[i] = dist(rng);
  std::fill(cf, cf + size_t(M) * N, std::nanf(""));

  bench::Compute comp(ctx.device, 3, 12);
  comp.pipeline = comp.create(bench::load_spv(shader));
  comp.bind({&a, &b, &c});
  const uint32_t push[3] = {M, N, K};
  VkCommandBuffer cb = comp.record(ctx, push, sizeof(push), (N + tile - 1) / tile, (M + tile - 1) / tile);

  // first run: warm-up and correctness
  const double first = ctx.submit_and_wait(cb);
  std::uniform_int_distribution<uint32_t> ri(0, M - 1), ci(0, N - 1);
  int bad = 0;
  const int samples = 2000;
  for (int s = 0; s < samples; ++s) {
    // the corners always, then random entries
    const uint32_t i = s == 0 || s == 1 ? 0 : s == 2 || s == 3 ? M - 1 : ri(rng);
    const uint32_t j = s == 0 || s == 2 ? 0 : s == 1 || s == 3 ? N - 1 : ci(rng);
    double ref = 0.0, mag = 0.0;
    for (uint32_t k = 0; k < K; ++k) {
      ref += double(af[size_t(i) * K + k]) * double(bf[size_t(k) * N + j]);
      mag += std::fabs(double(af[size_t(i) * K + k]) * double(bf[size_t(k) * N + j]));
    }
    const double got = cf[size_t(i) * N + j];
    if (!(std::fabs(got - ref) <= 1e-5 * mag + 1e-6)) {
      if (bad < 5) std::fprintf(stderr, "C[%u][%u] = %.7g, expected %.7g\n", i, j, got, ref);
      ++bad;
    }
  }
  if (bad) {
    std::fprintf(stderr, "gemm: %d of %d sampled entries wrong\n", bad, samples);
    return 1;
  }

  std::vector<double> times;
  for (int r = 0; r < reps; ++r) times.push_back(ctx.submit_and_wait(cb));
  const double flop = 2.0 * M * N * K;
  const double med = bench::median(times), best = bench::minimum(times);
  const double gflops = flop / med * 1e-9;
  std::printf("gemm %ux%ux%u fp32, %s.spv (%ux%u C tile per workgroup): %d sampled entries ok; first %.1f ms, "
              "median %.2f ms, best %.2f ms over %d reps (%.2f GFLOP/s median, %.1f%% of the f32 FMA peak; "
              "%.2f GFLOP/s best)\n",
              M, N, K, shader.c_str(), tile, tile, samples, first * 1e3, med * 1e3, best * 1e3, reps, gflops,
              100.0 * bench::peak_fraction(gflops, cpu), flop / best * 1e-9);
  std::printf("gemm_gflops %.3f\ngemm_peak_fraction %.4f\n", gflops, bench::peak_fraction(gflops, cpu));

  vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  ctx.destroy(a);
  ctx.destroy(b);
  ctx.destroy(c);
  return 0;
}
