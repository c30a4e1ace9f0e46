// Tile multiply-add kernels (kernels/tile_mma.h) as the JIT calls them: one call per K step of
// a cooperative-matrix loop, accumulator in place (D == C), A and B tiles cycling through a
// small set so they stay in L1/L2 as they would in a shader's frame. One core, the kernel
// arch the CPU picks (COOPVK_KERNEL_ARCH=portable|avx2|... chooses another). Times are the
// thread's CPU time.
//
//   bench_tile_mma [seconds per case = 0.2]   (the best of 5 slices of it)
//
// Prints calls/s, GFLOP/s (GOP/s for integers; a multiply-add is 2 ops), and the fraction of
// this core's peak for the instruction class the path uses (cpu_peak.h says how the peak is
// measured). The last column is that fraction.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "coopvk/kernels/cpu_dispatch.h"
#include "coopvk/kernels/tile_mma.h"
#include "cpu_peak.h"

using namespace coopvk::kernels;
using NF = NumberFormat;
using bench::PeakClass;

namespace {

struct Case {
  const char* label;
  NF a, b, c, d;
};
struct Shape {
  uint32_t m, n, k;
};

constexpr Case kFloatCases[] = {
    {"f16 x f16 + f32", NF::F16, NF::F16, NF::F32, NF::F32},
    {"f16 x f16 + f16", NF::F16, NF::F16, NF::F16, NF::F16},
    {"bf16 x bf16 + f32", NF::BF16, NF::BF16, NF::F32, NF::F32},
    {"e4m3 x e4m3 + f32", NF::E4M3, NF::E4M3, NF::F32, NF::F32},
    {"f32 x f32 + f32", NF::F32, NF::F32, NF::F32, NF::F32},
};
constexpr Case kIntCases[] = {
    {"s8 x s8 + s32", NF::I8, NF::I8, NF::I32, NF::I32},
    {"u8 x s8 + s32", NF::U8, NF::I8, NF::I32, NF::I32},
    {"u8 x u8 + u32", NF::U8, NF::U8, NF::U32, NF::U32},
};
constexpr Shape kFloatShapes[] = {{16, 16, 16}, {16, 8, 16}, {16, 8, 8}, {8, 8, 8}};
constexpr Shape kIntShapes[] = {{16, 16, 32}, {16, 8, 32}, {8, 8, 32}};

// The instruction class the active path spends its multiply-adds in (tile_mma.h lists the
// paths). On AVX-512 the zmm peak is the machine's, so it is the yardstick there even for
// the narrow shapes the kernels run on ymm.
PeakClass peak_class(const Case& c) {
  const KernelArch arch = active_kernel_arch();
  const uint32_t f = active_cpu_features();
  const bool z = arch == KernelArch::Avx512;
  if (c.d == NF::I32 || c.d == NF::U32) {
    if (z) return f & kAvx512Vnni ? PeakClass::Vnni512 : PeakClass::Madd512;
    return f & kAvxVnni ? PeakClass::Vnni256 : PeakClass::Madd256;
  }
  if (z && (f & kAvx512Fp16) && c.a == NF::F16 && c.d == NF::F16) return PeakClass::Fp16_512;
  if (z && (f & kAvx512Bf16) && c.a == NF::BF16) return PeakClass::Bf16_512;
  return z ? PeakClass::Fma512 : PeakClass::Fma256;
}

// Random tiles of a format: small values, so that long runs stay finite.
std::vector<uint8_t> random_tiles(NF f, size_t elements, std::mt19937& rng) {
  std::vector<float> v(elements);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : v) x = u(rng);
  std::vector<uint8_t> out(elements * format_size(f));
  if (f == NF::I8 || f == NF::U8 || f == NF::I32 || f == NF::U32) {
    for (auto& b : out) b = uint8_t(rng());
  } else {
    convert(NF::F32, v.data(), f, out.data(), elements);
  }
  return out;
}

double calls_per_second(TileMmaFn fn, const Case& c, const Shape& s, double seconds) {
  constexpr int kTiles = 16;  // A and B tiles cycled through, as a K loop reads new ones
  std::mt19937 rng(7);
  const size_t ta = size_t(s.m) * s.k, tb = size_t(s.k) * s.n;
  const auto a = random_tiles(c.a, ta * kTiles, rng), b = random_tiles(c.b, tb * kTiles, rng);
  auto acc = random_tiles(c.c, size_t(s.m) * s.n, rng);
  const size_t sa = ta * format_size(c.a), sb = tb * format_size(c.b);
  auto run = [&](long calls) {
    for (long i = 0; i < calls; ++i) {
      const int t = int(i % kTiles);
      fn(a.data() + t * sa, b.data() + t * sb, acc.data(), acc.data(), s.m, s.n, s.k);
    }
  };
  run(1000);  // warm-up
  // The best of 5 slices: a core shared with other guests loses whole slices to them.
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    long calls = 0;
    const double t0 = bench::thread_seconds();
    double elapsed = 0;
    do {
      run(1024);
      calls += 1024;
      elapsed = bench::thread_seconds() - t0;
    } while (elapsed < seconds / 5);
    best = std::max(best, double(calls) / elapsed);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
  if (!(seconds > 0)) {
    std::fprintf(stderr, "usage: bench_tile_mma [seconds per case > 0]\n");
    return 2;
  }
  const double hz = bench::measure_clock_hz();
  std::printf("cpu: %s, one core; kernel arch %s, extensions 0x%x\n", bench::cpu_model_name().c_str(),
              kernel_arch_name(active_kernel_arch()), active_cpu_features());
  std::printf("clock: %.0f MHz measured (1000 dependent adds per loop, 1 cycle each); "
              "/proc/cpuinfo says %.0f MHz\n", hz / 1e6, bench::cpuinfo_mhz());
  std::printf("peak = clock x instructions/cycle (12 independent chains of the instruction) x ops/instruction:\n");
  double peak[int(PeakClass::Count)] = {};
  for (int i = 0; i < int(PeakClass::Count); ++i) {
    const auto c = PeakClass(i);
    if (!bench::peak_class_supported(c)) continue;
    const double ipc = bench::measure_issue_rate(c, hz);
    peak[i] = hz * ipc * bench::ops_per_instruction(c);
    std::printf("  %-22s %.2f/cycle x %3.0f ops = %7.1f G/s\n", bench::peak_class_name(c), ipc,
                bench::ops_per_instruction(c), peak[i] / 1e9);
  }
  std::printf("\n%-20s %-9s %12s %10s  %s\n", "combination", "m x n x k", "calls/s", "G(FL)OP/s",
              "of peak (class)");
  auto report = [&](const Case& c, const Shape& s) {
    const TileMmaFn fn = tile_mma_kernel({c.a, c.b, c.c, c.d, s.m, s.n, s.k});
    if (fn == nullptr) return;
    const double cps = calls_per_second(fn, c, s, seconds);
    const double ops = cps * 2.0 * s.m * s.n * s.k;
    const PeakClass pc = peak_class(c);
    char shape[32];
    std::snprintf(shape, sizeof shape, "%ux%ux%u", s.m, s.n, s.k);
    std::printf("%-20s %-9s %12.0f %10.1f  %5.1f%% (%s)\n", c.label, shape, cps, ops / 1e9,
                100.0 * ops / peak[int(pc)], bench::peak_class_name(pc));
  };
  for (const Case& c : kFloatCases)
    for (const Shape& s : kFloatShapes) report(c, s);
  for (const Case& c : kIntCases)
    for (const Shape& s : kIntShapes) report(c, s);
  return 0;
}
