// Row-wise softmax over rows of 4096 floats (shaders/softmax.comp: one 256-invocation
// workgroup per row; max and sum each through subgroup operations + shared memory) on
// whatever driver VK_DRIVER_FILES selects — the shape of an attention or classifier
// softmax, two dependent reductions and an exp per element.
//
//   bench_softmax [rows=4096] [reps=10] [shader=softmax]   (O/softmax: the -O build)
//
// Inputs uniform in [-8, 8). Every output is checked against a double-precision reference
// before timing, within |y - ref| <= 1e-5 * ref + 1e-12: Vulkan allows exp an error of
// 3 + 2|x| ulp (|x| <= 16 here, so ~4e-6 relative), the division 2.5 ulp, and a 4096-term
// fp32 sum a few more ulp. Traffic counted: 8 bytes per element (read x, write y).
// Prints rows/s and GB/s (median of reps) and machine-readable `softmax_rows_per_s`,
// `softmax_gbps`.
#include <cmath>
#include <random>

#include "bench_vk.h"

namespace {
constexpr uint32_t kCols = 4096;
}

int main(int argc, char** argv) {
  bench::report_crashes("bench_softmax");
  const uint32_t rows = argc > 1 ? uint32_t(std::atoi(argv[1])) : 4096;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const std::string shader = argc > 3 ? argv[3] : "softmax";
  if (rows == 0 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_softmax [rows>0] [reps>0] [shader]\n");
    return 2;
  }
  bench::Context ctx;
  bench::print_device(ctx);
  const size_t n = size_t(rows) * kCols;
  bench::Buffer x = ctx.buffer(n * 4), y = ctx.buffer(n * 4);
  auto* xf = static_cast<float*>(x.mapped);
  auto* yf = static_cast<float*>(y.mapped);
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (size_t i = 0; i < n; ++i) xf[i] = dist(rng);
  std::fill(yf, yf + n, std::nanf(""));

  bench::Compute comp(ctx.device, 2, 4);
  comp.pipeline = comp.create(bench::load_spv(shader));
  comp.bind({&x, &y});
  const uint32_t gx = std::min<uint32_t>(rows, 4096), gy = (rows + gx - 1) / gx;
  VkCommandBuffer cb = comp.record(ctx, &rows, 4, gx, gy);
  ctx.submit_and_wait(cb);

  double worst = 0.0;  // largest |y - ref| / ref
  size_t bad = 0;
  for (uint32_t r = 0; r < rows; ++r) {
    const float* xr = xf + size_t(r) * kCols;
    const float* yr = yf + size_t(r) * kCols;
    double m = xr[0], s = 0.0;
    for (uint32_t j = 1; j < kCols; ++j) m = std::max(m, double(xr[j]));
    for (uint32_t j = 0; j < kCols; ++j) s += std::exp(double(xr[j]) - m);
    for (uint32_t j = 0; j < kCols; ++j) {
      const double ref = std::exp(double(xr[j]) - m) / s, err = std::fabs(double(yr[j]) - ref);
      worst = std::max(worst, err / ref);
      if (!(err <= 1e-5 * ref + 1e-12)) {
        if (bad < 5) std::fprintf(stderr, "softmax: y[%u][%u] = %.9g, expected %.9g\n", r, j, yr[j], ref);
        ++bad;
      }
    }
  }
  if (bad) {
    std::fprintf(stderr, "softmax: WRONG RESULT in %zu of %zu elements; not timed\n", bad, n);
    return 1;
  }

  std::vector<double> times;
  for (int r = 0; r < reps; ++r) times.push_back(ctx.submit_and_wait(cb));
  const double med = bench::median(times);
  const double rows_per_s = rows / med, gbps = 8.0 * n / med * 1e-9;
  std::printf("softmax %u rows x %u floats: all within tolerance (worst relative error %.2g); median %.2f ms, "
              "best %.2f ms over %d reps: %.0f rows/s, %.2f GB/s\n",
              rows, kCols, worst, med * 1e3, bench::minimum(times) * 1e3, reps, rows_per_s, gbps);
  std::printf("softmax_rows_per_s %.1f\nsoftmax_gbps %.3f\n", rows_per_s, gbps);

  vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  ctx.destroy(x);
  ctx.destroy(y);
  return 0;
}
