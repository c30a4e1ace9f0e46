// Element-wise throughput: z = a * x + y over n floats (shaders/axpy.comp) dispatched on
// the driver, against plain C++ loops over the very same mapped buffers in this process —
// one thread, and std::thread over every core. All three results are checked against
// each other before timing.
//
//   bench_elementwise [n=16777216] [reps=10] [shader=axpy]   (O/axpy: the -O build)
//
// Traffic counted: 12 bytes per element (read x, read y, write z). Prints GB/s (median
// of reps) and the ratios, plus machine-readable lines `elementwise_gbps <driver>`,
// `elementwise_cpu1_gbps`, `elementwise_cpuN_gbps`.
#include <cmath>
#include <thread>

#include "bench_vk.h"

namespace {

void axpy_loop(float a, const float* __restrict x, const float* __restrict y, float* __restrict z,
               size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) z[i] = a * x[i] + y[i];
}

void axpy_threads(float a, const float* x, const float* y, float* z, size_t n, unsigned threads) {
  std::vector<std::thread> pool;
  const size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    pool.emplace_back(axpy_loop, a, x, y, z, b, e);
  }
  for (auto& th : pool) th.join();
}

template <class F>
std::vector<double> time_reps(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = bench::now_s();
    f();
    t.push_back(bench::now_s() - t0);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? uint32_t(std::atoll(argv[1])) : (16u << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const std::string shader = argc > 3 ? argv[3] : "axpy";
  if (n == 0 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_elementwise [n>0] [reps>0]\n");
    return 2;
  }
  const float a = 1.5f;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());

  bench::Context ctx;
  bench::print_device(ctx);
  bench::Buffer x = ctx.buffer(VkDeviceSize(n) * 4), y = ctx.buffer(VkDeviceSize(n) * 4),
                z = ctx.buffer(VkDeviceSize(n) * 4);
  auto* xf = static_cast<float*>(x.mapped);
  auto* yf = static_cast<float*>(y.mapped);
  auto* zf = static_cast<float*>(z.mapped);
  for (uint32_t i = 0; i < n; ++i) {
    xf[i] = float(i % 1009) * 0.25f;
    yf[i] = float(i % 13) - 6.0f;
  }

  bench::Compute comp(ctx.device, 3, 8);
  comp.pipeline = comp.create(bench::load_spv(shader));
  comp.bind({&x, &y, &z});
  struct {
    float a;
    uint32_t n;
  } push{a, n};
  const uint32_t wg = 256, groups = (n + wg - 1) / wg;
  const uint32_t gx = std::min<uint32_t>(groups, 4096), gy = (groups + gx - 1) / gx;
  VkCommandBuffer cb = comp.record(ctx, &push, sizeof(push), gx, gy);

  // correctness: the driver's z against the single-thread loop's, then the threaded one's
  std::fill(zf, zf + n, -1.0f);
  ctx.submit_and_wait(cb);
  std::vector<float> ref(n);
  axpy_loop(a, xf, yf, ref.data(), 0, n);
  auto check = [&](const char* who) {
    for (uint32_t i = 0; i < n; ++i)
      if (std::fabs(zf[i] - ref[i]) > 1e-6f * std::fabs(ref[i]) + 1e-6f) {
        std::fprintf(stderr, "%s: z[%u] = %.9g, expected %.9g\n", who, i, zf[i], ref[i]);
        std::exit(1);
      }
  };
  check("driver");
  std::fill(zf, zf + n, -1.0f);
  axpy_threads(a, xf, yf, zf, n, cores);
  check("threads");

  const auto t_drv = time_reps(reps, [&] { ctx.submit_and_wait(cb); });
  const auto t_one = time_reps(reps, [&] { axpy_loop(a, xf, yf, zf, 0, n); });
  const auto t_all = time_reps(reps, [&] { axpy_threads(a, xf, yf, zf, n, cores); });
  check("after timing");

  const double bytes = 12.0 * n;
  const double g_drv = bytes / bench::median(t_drv) * 1e-9;
  const double g_one = bytes / bench::median(t_one) * 1e-9;
  const double g_all = bytes / bench::median(t_all) * 1e-9;
  std::printf("z = a*x + y over %u floats (%s.spv, 12 bytes/element), median of %d reps, results match:\n", n,
              shader.c_str(), reps);
  std::printf("  driver dispatch      %8.2f GB/s  (%.2f ms)\n", g_drv, bench::median(t_drv) * 1e3);
  std::printf("  C++ loop, 1 thread   %8.2f GB/s  (%.2f ms)\n", g_one, bench::median(t_one) * 1e3);
  std::printf("  C++ loop, %u threads %8.2f GB/s  (%.2f ms)\n", cores, g_all, bench::median(t_all) * 1e3);
  std::printf("  ratio driver / loop 1 thread  %.2f\n", g_drv / g_one);
  std::printf("  ratio driver / loop %u threads %.2f\n", cores, g_drv / g_all);
  std::printf("elementwise_gbps %.3f\n", g_drv);
  std::printf("elementwise_cpu1_gbps %.3f\n", g_one);
  std::printf("elementwise_cpuN_gbps %.3f\n", g_all);

  vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  ctx.destroy(x);
  ctx.destroy(y);
  ctx.destroy(z);
  return 0;
}
