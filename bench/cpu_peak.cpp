// The probes behind cpu_peak.h. Each throughput loop runs only after __builtin_cpu_supports
// said the CPU has its instructions, so the binary runs on any x86-64 CPU.
#include "cpu_peak.h"

#include <time.h>

#include <cstdint>
#include <cstring>
#include <fstream>

namespace bench {
namespace {

double seconds_since(double t0) { return thread_seconds() - t0; }

constexpr int kChains = 12;
constexpr long kSteps = 1 << 22;  // per chain: about 50M instructions, tens of milliseconds

// Keeps a value alive without letting the compiler see what is done with it.
template <class T>
void keep(const T& v) {
  asm volatile("" : : "m"(v) : "memory");
}

// The throughput loops are written in assembly so that what runs is exactly kChains
// independent accumulators (registers 0-11) fed by two constant operands (14, 15), with
// register 12 as the temporary of the multiply + add pair; compiled intrinsics spilled.
#define COOPVK_ACC12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define COOPVK_CLOBBER                                                                          \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
#define COOPVK_LOOP(INIT, BODY)                                                               \
  do {                                                                                        \
    long n = kSteps;                                                                          \
    asm volatile(INIT "1:\n\t" BODY "dec %0\n\tjnz 1b\n\tvzeroupper" : "+r"(n) : : COOPVK_CLOBBER, "cc"); \
  } while (0)
#define COOPVK_ZERO(R) "vpxor %%xmm" #R ", %%xmm" #R ", %%xmm" #R "\n\t"
#define COOPVK_INIT COOPVK_ACC12(COOPVK_ZERO) COOPVK_ZERO(14) COOPVK_ZERO(15)

#define FMA256(R) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #R "\n\t"
#define MADD256(R) "vpmaddwd %%ymm14, %%ymm15, %%ymm12\n\tvpaddd %%ymm12, %%ymm" #R ", %%ymm" #R "\n\t"
#define VNNI256(R) "%{vex%} vpdpbusd %%ymm14, %%ymm15, %%ymm" #R "\n\t"
#define VNNI256E(R) "vpdpbusd %%ymm14, %%ymm15, %%ymm" #R "\n\t"
#define FMA512(R) "vfmadd231ps %%zmm14, %%zmm15, %%zmm" #R "\n\t"
#define MADD512(R) "vpmaddwd %%zmm14, %%zmm15, %%zmm12\n\tvpaddd %%zmm12, %%zmm" #R ", %%zmm" #R "\n\t"
#define VNNI512(R) "vpdpbusd %%zmm14, %%zmm15, %%zmm" #R "\n\t"
#define BF16_512(R) "vdpbf16ps %%zmm14, %%zmm15, %%zmm" #R "\n\t"
#define FP16_512(R) "vfmadd231ph %%zmm14, %%zmm15, %%zmm" #R "\n\t"

void loop_fma256() { COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(FMA256)); }
void loop_madd256() { COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(MADD256)); }
// AVX-VNNI's VEX form, else AVX512-VNNI's EVEX form on ymm.
void loop_vnni256() {
  if (__builtin_cpu_supports("avxvnni"))
    COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(VNNI256));
  else
    COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(VNNI256E));
}
void loop_fma512() { COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(FMA512)); }
void loop_madd512() { COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(MADD512)); }
void loop_vnni512() { COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(VNNI512)); }
void loop_bf16_512() { COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(BF16_512)); }
void loop_fp16_512() { COOPVK_LOOP(COOPVK_INIT, COOPVK_ACC12(FP16_512)); }

struct ClassInfo {
  const char* name;
  double ops;
  void (*loop)();
  bool (*supported)();
};

const ClassInfo& info(PeakClass c) {
  static const ClassInfo table[] = {
      {"vfmadd231ps ymm", 16, loop_fma256, [] { return bool(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")); }},
      {"vfmadd231ps zmm", 32, loop_fma512, [] { return bool(__builtin_cpu_supports("avx512f")); }},
      {"vpmaddwd+vpaddd ymm", 32, loop_madd256, [] { return bool(__builtin_cpu_supports("avx2")); }},
      {"vpmaddwd+vpaddd zmm", 64, loop_madd512, [] { return bool(__builtin_cpu_supports("avx512bw")); }},
      {"vpdpbusd ymm", 64, loop_vnni256,
       [] { return bool(__builtin_cpu_supports("avxvnni") || __builtin_cpu_supports("avx512vnni")); }},
      {"vpdpbusd zmm", 128, loop_vnni512, [] { return bool(__builtin_cpu_supports("avx512vnni")); }},
      {"vdpbf16ps zmm", 64, loop_bf16_512, [] { return bool(__builtin_cpu_supports("avx512bf16")); }},
      {"vfmadd231ph zmm", 64, loop_fp16_512, [] { return bool(__builtin_cpu_supports("avx512fp16")); }},
  };
  return table[int(c)];
}

}  // namespace

double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

const char* peak_class_name(PeakClass c) { return info(c).name; }
bool peak_class_supported(PeakClass c) { return info(c).supported(); }
double ops_per_instruction(PeakClass c) { return info(c).ops; }

double measure_clock_hz() {
  // 1000 dependent adds per iteration; the loop counter runs beside them.
  constexpr long kIters = 200000;
  double best = 0;
  for (int rep = 0; rep < 10; ++rep) {
    uint64_t x = 0;
    const double t0 = thread_seconds();
    for (long i = 0; i < kIters; ++i) asm volatile(".rept 1000\n\taddq $1, %0\n\t.endr" : "+r"(x));
    const double hz = double(kIters) * 1000 / seconds_since(t0);
    keep(x);
    if (hz > best) best = hz;
  }
  return best;
}

double cpuinfo_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0) return std::atof(line.c_str() + line.find(':') + 1);
  return 0;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

double measure_issue_rate(PeakClass c, double clock_hz) {
  const ClassInfo& ci = info(c);
  ci.loop();  // warm-up: wakes the wide units (AVX-512 licences, Zen's power gating)
  double best = 1e30;
  for (int rep = 0; rep < 10; ++rep) {
    const double t0 = thread_seconds();
    ci.loop();
    const double s = seconds_since(t0);
    if (s < best) best = s;
  }
  return double(kSteps) * kChains / best / clock_hz;
}

}  // namespace bench
