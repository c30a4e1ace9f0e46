// Arithmetic throughput of shader code, on whatever driver VK_DRIVER_FILES selects:
// shaders/peak_<variant>.comp run independent chains of c = a * c + b per invocation,
// the shape third-party GPU peak benchmarks use, over fp32, fp16 and int32. Every variant
// keeps the same 8 scalar components live (8 scalar chains, 4 vec2 chains, 2 vec4
// chains; shaders/peak_body.glsl), so vector and scalar variants of a type do the same
// work per invocation and should run at the same speed per component: where a vector
// row falls behind its scalar row, the JIT is handling vector locals worse than scalars.
//
//   bench_peak [invocations=262144] [iters=2048] [reps=3] [variant...]
//
// Each result is checked against the same arithmetic on the CPU (int32 exactly, fp32
// within 1e-4, fp16 with every operation rounded to fp16, within 2%) before timing. The
// CPU's own f32 FMA peak is measured first, in this process (fma_peak.h). Prints per
// variant `peak_<variant>_gops <median>` (an FMA, or an integer multiply and add, counts
// as 2 operations), `peak_<variant>_vs_scalar <vector GOP/s / scalar GOP/s of its type>`
// for the vector variants, and `peak_<variant>_peak_fraction <of the all-threads f32
// peak>` for the float variants (without native fp16 arithmetic, as on AVX2, fp16 runs
// through f32 units, so the f32 peak is its ceiling too).
#include <cmath>
#include <cstring>
#include <map>

#include "bench_vk.h"
#include "fma_peak.h"
#include "fp16.h"

namespace {

enum class Type { f32, f16, i32 };

struct Variant {
  const char* name;
  const char* scalar;  // the scalar variant of the same type
  int width;           // components per value; 8 / width chains
  Type type;
};

const Variant kVariants[] = {
    {"f32", "f32", 1, Type::f32},      {"vec2_f32", "f32", 2, Type::f32}, {"vec4_f32", "f32", 4, Type::f32},
    {"f16", "f16", 1, Type::f16},      {"vec2_f16", "f16", 2, Type::f16}, {"vec4_f16", "f16", 4, Type::f16},
    {"i32", "i32", 1, Type::i32},      {"vec4_i32", "i32", 4, Type::i32},
};
constexpr int kComponents = 8;

// What invocation i writes: the same for every width of a type, since each variant runs
// the same 8 components and sums them in component order (peak_body.glsl).
double reference(Type type, uint32_t i, uint32_t iters) {
  const uint32_t lid = i % 64;
  if (type == Type::i32) {
    const uint32_t a = lid | 1u, b = 3;
    uint32_t sum = 0;
    for (uint32_t k = 0; k < kComponents; ++k) {
      uint32_t c = i + k;
      for (uint32_t n = 0; n < iters; ++n) c = a * c + b;  // wraps like GLSL int
      sum += c;
    }
    return double(int32_t(sum));
  }
  if (type == Type::f16) {
    // Every fp16 operation rounds to fp16 (the shader may fuse the multiply and add,
    // which the tolerance in main() allows for).
    using bench::round_half;
    const float a = 0.9990234375f, b = round_half(0.0009765625f * float(lid & 7u));
    float sum = 0.0f;
    for (uint32_t k = 0; k < kComponents; ++k) {
      float c = round_half(float(k) * 0.125f);
      for (uint32_t n = 0; n < iters; ++n) c = round_half(round_half(a * c) + b);
      sum = round_half(sum + c);
    }
    return sum;
  }
  // 1 - 2^-10 and 2^-10 are exact in fp16 and fp32: no literal rounding to agree on.
  const double a = 0.9990234375, b = 0.0009765625 * double(lid & 7u);
  double sum = 0.0;
  for (uint32_t k = 0; k < kComponents; ++k) {
    double c = double(k) * 0.125;
    for (uint32_t n = 0; n < iters; ++n) c = a * c + b;
    sum += c;
  }
  return sum;
}

double read_result(Type type, const void* out, uint32_t i) {
  const uint8_t* p = static_cast<const uint8_t*>(out);
  if (type == Type::f16) {
    uint16_t h;
    std::memcpy(&h, p + 2 * size_t(i), 2);
    return bench::half_to_float(h);
  }
  if (type == Type::i32) {
    int32_t x;
    std::memcpy(&x, p + 4 * size_t(i), 4);
    return x;
  }
  float f;
  std::memcpy(&f, p + 4 * size_t(i), 4);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  bench::report_crashes("bench_peak");
  const uint32_t n = argc > 1 ? uint32_t(std::atoi(argv[1])) : 262144;
  const uint32_t iters = argc > 2 ? uint32_t(std::atoi(argv[2])) : 2048;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  std::vector<std::string> only(argv + std::min(argc, 4), argv + argc);
  if (n == 0 || n % 64 || iters == 0 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_peak [invocations, a multiple of 64] [iters>0] [reps>0] [variant...]\n");
    return 2;
  }
  const bench::CpuPeak cpu = bench::measure_cpu_peak();
  bench::print_cpu_peak(cpu);
  bench::Fp16Features f16;
  bench::Context ctx(f16.chain());
  bench::print_device(ctx);
  bench::Buffer out = ctx.buffer(VkDeviceSize(n) * 4);
  std::map<std::string, double> gops;
  int failures = 0;
  for (const Variant& v : kVariants) {
    if (!only.empty() && std::find(only.begin(), only.end(), v.name) == only.end()) continue;
    bench::Compute comp(ctx.device, 1, 4);
    comp.pipeline = comp.create(bench::load_spv(std::string("peak_") + v.name));
    comp.bind({&out});
    VkCommandBuffer cb = comp.record(ctx, &iters, 4, n / 64, 1);
    std::memset(out.mapped, 0xFF, out.size);  // NaN / -1: a result never written shows
    ctx.submit_and_wait(cb);
    // a sample of invocations across the grid, and the last one
    std::vector<uint32_t> samples;
    for (uint32_t i = 0; i < n; i += n / 64 + 7) samples.push_back(i);
    samples.push_back(n - 1);
    int bad = 0;
    for (uint32_t i : samples) {
      const double got = read_result(v.type, out.mapped, i), ref = reference(v.type, i, iters);
      // fp16: per-operation rounding against a possibly fused multiply-add settles at a
      // slightly different fixed point; 2% covers it, a wrong computation misses by far more.
      const double tol = v.type == Type::i32   ? 0.0
                         : v.type == Type::f16 ? 0.02 * std::fabs(ref) + 0.01
                                               : 1e-4 * std::fabs(ref) + 1e-5;
      if (!(std::fabs(got - ref) <= tol)) {
        if (bad < 3) std::fprintf(stderr, "peak_%s: invocation %u gives %.6g, expected %.6g\n", v.name, i, got, ref);
        ++bad;
      }
    }
    if (bad) {
      std::fprintf(stderr, "peak_%s: WRONG RESULT in %d of %d sampled invocations; not timed\n", v.name, bad, int(samples.size()));
      ++failures;
      vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
      continue;
    }
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) times.push_back(ctx.submit_and_wait(cb));
    const double ops = 2.0 * kComponents * double(iters) * n;
    const double g = ops / bench::median(times) * 1e-9;
    gops[v.name] = g;
    std::printf("peak %-9s %u invocations x %u iterations x %d chains: median %.1f ms, best %.1f ms (%.1f GOP/s median",
                v.name, n, iters, kComponents / v.width, bench::median(times) * 1e3, bench::minimum(times) * 1e3, g);
    if (v.type != Type::i32) std::printf(", %.1f%% of the f32 FMA peak", 100.0 * bench::peak_fraction(g, cpu));
    if (v.width > 1 && gops.count(v.scalar)) std::printf(", %.2fx its scalar variant per component", g / gops[v.scalar]);
    std::printf(")\n");
    std::printf("peak_%s_gops %.3f\n", v.name, g);
    if (v.type != Type::i32) std::printf("peak_%s_peak_fraction %.4f\n", v.name, bench::peak_fraction(g, cpu));
    if (v.width > 1 && gops.count(v.scalar)) std::printf("peak_%s_vs_scalar %.3f\n", v.name, g / gops[v.scalar]);
    vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  }
  ctx.destroy(out);
  return failures ? 1 : 0;
}
