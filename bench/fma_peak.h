// The CPU's own f32 FMA peak, measured in the calling process so that a bench can state
// its result as a fraction of what this machine, right now, can do (the VM is shared and
// its clock is unknown, so a datasheet number would be a guess). A hand-written loop of
// independent fused multiply-adds and nothing else: AVX-512 where the CPU has it, else
// AVX2 + FMA, else a plain loop the compiler vectorizes as it likes. It runs on one thread
// and then on every hardware thread at once.
//
// The implied clock assumes 2 FMA units per core (Zen 2/3/4, Skylake and later with
// AVX2; Skylake-SP with two AVX-512 ports): GFLOP/s / (2 units x lanes x 2 FLOP). On a
// core with one unit it is half the real clock, which is itself a useful hint.
//
// Header-only (each bench stays one file). BENCH_CPU_PEAK_MS sets the time of one
// measurement (default 150 ms; the best of 3 is kept).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_CPU_PEAK_X86 1
#endif

#include "bench_vk.h"  // now_s

namespace bench {

struct CpuPeak {
  const char* isa = "";      // which loop ran
  int lanes = 1;             // f32 lanes per FMA instruction
  unsigned threads = 1;      // hardware threads of the all-threads run
  double gflops_1t = 0.0;    // one thread
  double gflops_all = 0.0;   // every hardware thread together
  double clock_ghz = 0.0;    // gflops_1t / (2 units x lanes x 2)
};

namespace cpu_peak_detail {

// Each loop keeps enough independent accumulators in flight to cover FMA latency x units
// (4 cycles x 2 units = 8 on Zen 3 and Skylake) with room to spare, and few enough to stay
// in registers (AVX2: 12 of 16, AVX-512: 24 of 32). c = c * m + d with m just below 1
// converges to d / (1 - m): no overflow, no denormals, nothing the compiler can fold.
// Returns a value that depends on every accumulator so that none is dead.
#ifdef BENCH_CPU_PEAK_X86
constexpr int kAcc256 = 12;
__attribute__((target("avx2,fma"))) inline float fma_avx2(uint64_t iters) {
  const __m256 m = _mm256_set1_ps(0.99999f), d = _mm256_set1_ps(1e-5f);
  __m256 acc[kAcc256];
  for (int k = 0; k < kAcc256; ++k) acc[k] = _mm256_set1_ps(float(k));
  for (uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kAcc256; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, d);
  }
  __m256 s = acc[0];
  for (int k = 1; k < kAcc256; ++k) s = _mm256_add_ps(s, acc[k]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0] + out[7];
}

constexpr int kAcc512 = 24;
__attribute__((target("avx512f"))) inline float fma_avx512(uint64_t iters) {
  const __m512 m = _mm512_set1_ps(0.99999f), d = _mm512_set1_ps(1e-5f);
  __m512 acc[kAcc512];
  for (int k = 0; k < kAcc512; ++k) acc[k] = _mm512_set1_ps(float(k));
  for (uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int k = 0; k < kAcc512; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, d);
  }
  __m512 s = acc[0];
  for (int k = 1; k < kAcc512; ++k) s = _mm512_add_ps(s, acc[k]);
  // a store, not _mm512_reduce_add_ps: GCC 12's version of it warns about undefined lanes
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0] + out[15];
}
#endif

// Portable fallback: 64 scalar chains, which a vectorizing compiler turns into whatever
// the build targets (the number is then the build's peak, not necessarily the CPU's).
constexpr int kAccPlain = 64;
inline float fma_plain(uint64_t iters) {
  float acc[kAccPlain];
  for (int k = 0; k < kAccPlain; ++k) acc[k] = float(k);
  for (uint64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kAccPlain; ++k) acc[k] = acc[k] * 0.99999f + 1e-5f;
  float s = 0.0f;
  for (float a : acc) s += a;
  return s;
}

struct Loop {
  const char* isa;
  int lanes;
  int flop_per_iter;  // accumulators x lanes x 2
  float (*run)(uint64_t);
};

inline Loop pick() {
#ifdef BENCH_CPU_PEAK_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", 16, kAcc512 * 16 * 2, fma_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2+fma", 8, kAcc256 * 8 * 2, fma_avx2};
#endif
  return {"plain loop", 1, kAccPlain * 2, fma_plain};
}

// Somewhere the result goes, so that the loops cannot be dropped.
inline std::atomic<float>& sink() {
  static std::atomic<float> s{0.0f};
  return s;
}

// Seconds for `threads` threads each running `iters` iterations, started together.
inline double run_threads(const Loop& loop, uint64_t iters, unsigned threads) {
  if (threads == 1) {
    const double t0 = now_s();
    sink().store(loop.run(iters), std::memory_order_relaxed);
    return now_s() - t0;
  }
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      sink().store(loop.run(iters), std::memory_order_relaxed);
    });
  while (ready.load() < threads) std::this_thread::yield();
  const double t0 = now_s();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return now_s() - t0;
}

}  // namespace cpu_peak_detail

inline CpuPeak measure_cpu_peak() {
  using namespace cpu_peak_detail;
  const Loop loop = pick();
  const char* ms_env = std::getenv("BENCH_CPU_PEAK_MS");
  const double target_s = (ms_env ? std::max(1.0, std::atof(ms_env)) : 150.0) * 1e-3;
  // calibrate: grow the count until one run takes a measurable time, then scale
  uint64_t iters = 1 << 16;
  double t = 0.0;
  while ((t = run_threads(loop, iters, 1)) < 0.01) iters *= 4;
  iters = std::max<uint64_t>(1, uint64_t(double(iters) * target_s / t));

  CpuPeak p;
  p.isa = loop.isa;
  p.lanes = loop.lanes;
  p.threads = std::max(1u, std::thread::hardware_concurrency());
  const double flop = double(loop.flop_per_iter) * double(iters);
  for (int r = 0; r < 3; ++r) {
    p.gflops_1t = std::max(p.gflops_1t, flop / run_threads(loop, iters, 1) * 1e-9);
    p.gflops_all = std::max(p.gflops_all, flop * p.threads / run_threads(loop, iters, p.threads) * 1e-9);
  }
  p.clock_ghz = p.gflops_1t / (2.0 * loop.lanes * 2.0);
  return p;
}

// Human line plus machine-readable `cpu_peak_*` lines.
inline void print_cpu_peak(const CpuPeak& p) {
  std::printf("cpu peak (f32 FMA loop, %s, measured in this process): %.1f GFLOP/s on 1 thread, "
              "%.1f GFLOP/s on %u threads; implied clock %.2f GHz assuming 2 FMA units x %d lanes\n",
              p.isa, p.gflops_1t, p.gflops_all, p.threads, p.clock_ghz, p.lanes);
  std::printf("cpu_peak_1t_gflops %.3f\ncpu_peak_gflops %.3f\ncpu_peak_threads %u\ncpu_peak_clock_ghz %.3f\n",
              p.gflops_1t, p.gflops_all, p.threads, p.clock_ghz);
}

// `gflops` as a fraction of the all-threads peak (a dispatch uses every core). Where the
// all-threads run came out below the one-thread run, other work on the machine got in
// its way (every thread can at least do what one does), so the one-thread number is used.
inline double peak_fraction(double gflops, const CpuPeak& p) {
  const double peak = std::max(p.gflops_all, p.gflops_1t);
  return peak > 0.0 ? gflops / peak : 0.0;
}

}  // namespace bench
