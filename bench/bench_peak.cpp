// Peak arithmetic throughput of shader code, on whatever driver VK_DRIVER_FILES selects:
// shaders/peak_<variant>.comp run 8 independent chains of c = a * c + b per invocation
// (scalars and vec4; fp32, fp16, int32), the shape third-party GPU peak benchmarks use.
// Where a JIT keeps vec4 locals in registers the vec4 rows beat the scalar rows; where
// it does not they fall behind them. scripts/bench.sh runs it on coopvk and lavapipe.
//
//   bench_peak [invocations=262144] [iters=2048] [reps=3] [variant...]
//
// Each result is checked against the same arithmetic on the CPU (int32 exactly, floats
// within a bound) before timing. Prints one line per variant: `peak_<variant>_gops <median>`
// (an FMA counts as 2 operations).
#include <cmath>
#include <cstring>

#include "bench_vk.h"

namespace {

struct Variant {
  const char* name;
  int width;  // components per value
  bool f16;
  bool integer;
};

const Variant kVariants[] = {
    {"f32", 1, false, false},     {"vec4_f32", 4, false, false}, {"f16", 1, true, false},
    {"vec4_f16", 4, true, false}, {"i32", 1, false, true},       {"vec4_i32", 4, false, true},
};

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
  uint32_t bits;
  if (exp == 0) {
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  bits = exp == 31 ? sign | 0x7F800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even, as the GPU's fp16 arithmetic does (finite, normal-range inputs).
uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = int32_t((x >> 23) & 255) - 127 + 15;
  uint32_t man = x & 0x7FFFFFu;
  if (exp <= 0) {  // subnormal or zero in fp16
    if (exp < -10) return uint16_t(sign);
    man |= 0x800000u;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(exp) << 10) | (man >> 13), rem = man & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return uint16_t(sign | std::min<uint32_t>(h, 0x7C00u));
}

// What invocation i computes (component 0; the shader's components are all equal).
double reference(const Variant& v, uint32_t i, uint32_t iters) {
  uint32_t lid = i % 64;
  if (v.integer) {
    uint32_t a = lid | 1u, b = 3, sum = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      uint32_t c = i + k;
      for (uint32_t n = 0; n < iters; ++n) c = a * c + b;  // wraps like GLSL int
      sum += c;
    }
    return double(int32_t(sum));
  }
  if (v.f16) {
    // Every fp16 operation rounds to fp16 (the shader may fuse the multiply and add,
    // which the bound in main() allows for).
    auto r = [](float x) { return half_to_float(float_to_half(x)); };
    float a = 0.9990234375f, b = r(0.0009765625f * float(lid & 7u)), sum = 0.0f;
    for (uint32_t k = 0; k < 8; ++k) {
      float c = r(float(k) * 0.125f);
      for (uint32_t n = 0; n < iters; ++n) c = r(r(a * c) + b);
      sum = r(sum + c);
    }
    return sum;
  }
  // Constants exact in fp16 and fp32 (1 - 2^-10, 2^-10): no literal rounding to agree on.
  double a = 0.9990234375, b = 0.0009765625 * double(lid & 7u), sum = 0.0;
  for (uint32_t k = 0; k < 8; ++k) {
    double c = double(k) * 0.125;
    for (uint32_t n = 0; n < iters; ++n) c = a * c + b;
    sum += c;
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? uint32_t(std::atoi(argv[1])) : 262144;
  const uint32_t iters = argc > 2 ? uint32_t(std::atoi(argv[2])) : 2048;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  std::vector<std::string> only(argv + std::min(argc, 4), argv + argc);
  if (n == 0 || n % 64 || iters == 0 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_peak [invocations, a multiple of 64] [iters>0] [reps>0] [variant...]\n");
    return 2;
  }
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  f16.shaderFloat16 = VK_TRUE;
  bench::Context ctx(&f16);
  bench::print_device(ctx);
  bench::Buffer out = ctx.buffer(VkDeviceSize(n) * 16);
  int failures = 0;
  for (const Variant& v : kVariants) {
    if (!only.empty() && std::find(only.begin(), only.end(), v.name) == only.end()) continue;
    bench::Compute comp(ctx.device, 1, 4);
    comp.pipeline = comp.create(bench::load_spv(std::string("peak_") + v.name));
    comp.bind({&out});
    VkCommandBuffer cb = comp.record(ctx, &iters, 4, n / 64, 1);
    ctx.submit_and_wait(cb);
    // Check a sample of invocations.
    int bad = 0;
    const size_t stride = size_t(v.width) * (v.f16 ? 2 : 4);
    for (uint32_t i = 0; i < n; i += n / 64 + 7) {
      const uint8_t* p = static_cast<const uint8_t*>(out.mapped) + i * stride;
      double got;
      if (v.integer) {
        int32_t x;
        std::memcpy(&x, p, 4);
        got = x;
      } else if (v.f16) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        got = half_to_float(h);
      } else {
        float f;
        std::memcpy(&f, p, 4);
        got = f;
      }
      double ref = reference(v, i, iters);
      // fp16 carries ~3 decimal digits through thousands of dependent steps.
      // fp16: per-operation rounding against a possibly fused multiply-add settles at a
      // slightly different fixed point; 2% covers it, a wrong computation misses by far more.
      double tol = v.integer ? 0.0 : v.f16 ? 0.02 * std::fabs(ref) + 0.01 : 1e-4 * std::fabs(ref) + 1e-5;
      if (!(std::fabs(got - ref) <= tol)) {
        if (bad < 3) std::fprintf(stderr, "peak_%s: invocation %u gives %.6g, expected %.6g\n", v.name, i, got, ref);
        ++bad;
      }
    }
    if (bad) {
      ++failures;
      vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
      continue;
    }
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) times.push_back(ctx.submit_and_wait(cb));
    const double ops = 2.0 * 8 * v.width * double(iters) * n;
    std::printf("peak %-9s %u invocations x %u iterations: median %.1f ms, best %.1f ms (%.1f GOP/s best)\n",
                v.name, n, iters, bench::median(times) * 1e3, bench::minimum(times) * 1e3,
                ops / bench::minimum(times) * 1e-9);
    std::printf("peak_%s_gops %.3f\n", v.name, ops / bench::median(times) * 1e-9);
    vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  }
  ctx.destroy(out);
  return failures ? 1 : 0;
}
