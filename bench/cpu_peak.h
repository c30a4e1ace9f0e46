// This CPU's peak for one core, per instruction class, measured rather than looked up:
//  - the clock: a chain of dependent integer adds (one cycle each on every x86-64 core)
//    timed against the wall clock, so it is the frequency the core runs at under load;
//  - the issue rate of each class: instructions per cycle of a loop of 12 independent
//    chains of that instruction (enough to cover latency x units on current cores), which
//    is the number of units that execute it;
//  - peak ops per second = clock x instructions per cycle x ops per instruction, where a
//    multiply-add counts as 2 ops per lane-product (FLOP or integer OP).
//
// Each figure is the best of 10 runs. All times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not the wall clock, so that
// other processes sharing the core count against neither the peak nor the kernels.
#pragma once

#include <string>

namespace bench {

// Seconds of this thread's CPU time since an arbitrary origin.
double thread_seconds();

enum class PeakClass {
  Fma256,    // vfmadd231ps ymm: 8 lanes, 16 FLOP
  Fma512,    // vfmadd231ps zmm: 16 lanes, 32 FLOP
  Madd256,   // vpmaddwd + vpaddd ymm: 16 int16 products, 32 OP (the pair counts as one)
  Madd512,   // the same on zmm: 64 OP
  Vnni256,   // vpdpbusd ymm (AVX-VNNI, else AVX512-VNNI's EVEX form): 32 byte products, 64 OP
  Vnni512,   // vpdpbusd zmm (AVX512-VNNI): 128 OP
  Bf16_512,  // vdpbf16ps zmm: 32 bf16 products, 64 FLOP
  Fp16_512,  // vfmadd231ph zmm: 32 lanes, 64 FLOP
  Count,
};

const char* peak_class_name(PeakClass c);
// Whether this CPU runs the class (false for the AVX-512 ones on an AVX2 CPU).
bool peak_class_supported(PeakClass c);
double ops_per_instruction(PeakClass c);

// Measured clock in Hz (dependent adds) and /proc/cpuinfo's "cpu MHz" (0 if absent).
double measure_clock_hz();
double cpuinfo_mhz();
std::string cpu_model_name();
// Instructions per cycle of the class at `clock_hz`.
double measure_issue_rate(PeakClass c, double clock_hz);

}  // namespace bench
