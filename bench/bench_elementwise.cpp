// Element-wise throughput: z = a * x + y over n elements (shaders/axpy.comp, fp32; or
// shaders/axpy_f16.comp, fp16 storage and arithmetic) dispatched on the driver, against
// plain C++ loops over the very same mapped buffers in this process — one thread, and
// std::thread over every core. All three results are checked against each other before
// timing.
//
//   bench_elementwise [n=16777216] [reps=10] [shader=axpy]   (O/axpy: the -O build;
//                                                            axpy_f16: fp16)
//
// fp16: the C++ loop widens 8 halves at a time to f32 (F16C), does one FMA and narrows
// (what a CPU programmer writes on AVX2, which has no fp16 arithmetic); the shader
// multiplies and adds in fp16. The inputs are chosen so that a*x and a*x + y are exact in
// fp16 (multiples of 1/8 below 32), so both must agree bit for bit.
//
// Traffic counted: 3 element sizes per element (read x, read y, write z): 12 bytes (fp32),
// 6 bytes (fp16). Prints GB/s (median of reps) and the ratios, plus machine-readable lines
// `elementwise_gbps <driver>`, `elementwise_cpu1_gbps`, `elementwise_cpuN_gbps`.
#include <cmath>
#include <thread>

#if defined(__F16C__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "bench_vk.h"
#include "fp16.h"

namespace {

// The loops take untyped buffers so that one driver of them serves both element types.
using Loop = void (*)(float a, const void* x, const void* y, void* z, size_t begin, size_t end);

void axpy_f32(float a, const void* xv, const void* yv, void* zv, size_t begin, size_t end) {
  const float* __restrict x = static_cast<const float*>(xv);
  const float* __restrict y = static_cast<const float*>(yv);
  float* __restrict z = static_cast<float*>(zv);
  for (size_t i = begin; i < end; ++i) z[i] = a * x[i] + y[i];
}

void axpy_f16(float a, const void* xv, const void* yv, void* zv, size_t begin, size_t end) {
  const uint16_t* __restrict x = static_cast<const uint16_t*>(xv);
  const uint16_t* __restrict y = static_cast<const uint16_t*>(yv);
  uint16_t* __restrict z = static_cast<uint16_t*>(zv);
  size_t i = begin;
#if defined(__F16C__) && defined(__FMA__)
  // GCC 12 does not vectorize _Float16 conversions, so by hand
  const __m256 av = _mm256_set1_ps(a);
  for (; i + 8 <= end; i += 8) {
    const __m256 xf = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    const __m256 yf = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(z + i),
                     _mm256_cvtps_ph(_mm256_fmadd_ps(av, xf, yf), _MM_FROUND_TO_NEAREST_INT));
  }
#endif
  for (; i < end; ++i) z[i] = bench::float_to_half(a * bench::half_to_float(x[i]) + bench::half_to_float(y[i]));
}

void axpy_threads(Loop loop, float a, const void* x, const void* y, void* z, size_t n, unsigned threads) {
  std::vector<std::thread> pool;
  const size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    pool.emplace_back(loop, a, x, y, z, b, e);
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
  bench::report_crashes("bench_elementwise");
  const uint32_t n = argc > 1 ? uint32_t(std::atoll(argv[1])) : (16u << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const std::string shader = argc > 3 ? argv[3] : "axpy";
  if (n == 0 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_elementwise [n>0] [reps>0] [axpy|O/axpy|axpy_f16]\n");
    return 2;
  }
  const float a = 1.5f;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const bool half = shader.find("f16") != std::string::npos;
  const size_t es = half ? 2 : 4;  // element size
  const Loop loop = half ? axpy_f16 : axpy_f32;

  bench::Fp16Features f16;
  bench::Context ctx(half ? f16.chain() : nullptr);
  bench::print_device(ctx);
  bench::Buffer x = ctx.buffer(VkDeviceSize(n) * es), y = ctx.buffer(VkDeviceSize(n) * es),
                z = ctx.buffer(VkDeviceSize(n) * es);
  // element i of a buffer, as a float
  auto get = [&](const bench::Buffer& b, size_t i) {
    return half ? bench::half_to_float(static_cast<const uint16_t*>(b.mapped)[i]) : static_cast<const float*>(b.mapped)[i];
  };
  auto set = [&](bench::Buffer& b, size_t i, float v) {
    if (half)
      static_cast<uint16_t*>(b.mapped)[i] = bench::float_to_half(v);
    else
      static_cast<float*>(b.mapped)[i] = v;
  };
  auto fill = [&](bench::Buffer& b, float v) {
    for (size_t i = 0; i < n; ++i) set(b, i, v);
  };
  for (uint32_t i = 0; i < n; ++i) {
    // fp16: x in [0, 16) in steps of 1/4, so a*x + y stays exact (see the top)
    set(x, i, half ? float(i % 64) * 0.25f : float(i % 1009) * 0.25f);
    set(y, i, float(i % 13) - 6.0f);
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
  // (fp16: exactly; fp32: the loop may fuse or not)
  fill(z, -1.0f);
  ctx.submit_and_wait(cb);
  std::vector<float> ref(n);
  {
    bench::Buffer r = ctx.buffer(VkDeviceSize(n) * es);
    loop(a, x.mapped, y.mapped, r.mapped, 0, n);
    for (size_t i = 0; i < n; ++i) ref[i] = get(r, i);
    ctx.destroy(r);
  }
  const float rel = half ? 0.0f : 1e-6f;
  auto check = [&](const char* who) {
    for (uint32_t i = 0; i < n; ++i)
      if (!(std::fabs(get(z, i) - ref[i]) <= rel * std::fabs(ref[i]) + rel)) {
        std::fprintf(stderr, "%s: WRONG RESULT: z[%u] = %.9g, expected %.9g (%s.spv)\n", who, i, get(z, i), ref[i],
                     shader.c_str());
        std::exit(1);
      }
  };
  check("driver");
  fill(z, -1.0f);
  axpy_threads(loop, a, x.mapped, y.mapped, z.mapped, n, cores);
  check("threads");

  const auto t_drv = time_reps(reps, [&] { ctx.submit_and_wait(cb); });
  const auto t_one = time_reps(reps, [&] { loop(a, x.mapped, y.mapped, z.mapped, 0, n); });
  const auto t_all = time_reps(reps, [&] { axpy_threads(loop, a, x.mapped, y.mapped, z.mapped, n, cores); });
  check("after timing");

  const double bytes = 3.0 * es * n;
  const double g_drv = bytes / bench::median(t_drv) * 1e-9;
  const double g_one = bytes / bench::median(t_one) * 1e-9;
  const double g_all = bytes / bench::median(t_all) * 1e-9;
  std::printf("z = a*x + y over %u %s (%s.spv, %zu bytes/element), median of %d reps, results match:\n", n,
              half ? "halves" : "floats", shader.c_str(), 3 * es, reps);
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
