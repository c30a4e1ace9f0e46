// A tiled cooperative-matrix GEMM (conformance/shaders/coopmat/gemm_body.glsl: each
// subgroup owns 2 x 2 accumulator tiles and walks K, 2 x 2 subgroups per workgroup) on
// whatever driver VK_DRIVER_FILES selects, with the largest tile shape the device's
// property entries list for the types. scripts/bench.sh runs it on coopvk and on lavapipe with
// identical SPIR-V and divides the two.
//
//   bench_coopmat_gemm TYPES [size=1024] [reps=3]
//     TYPES: f16_f32, f16_f16, bf16_f32, s8_s32 or e4m3_f32 (A and B, then C and D)
//
// Also prints this CPU's peak for the instruction class the combination maps to (measured
// in this process: clock x issue rate x ops per instruction x hardware threads, cpu_peak.h)
// and the GEMM's fraction of it. The result is checked against a double-precision
// reference on sampled entries before anything is timed. Machine-readable lines:
// coopmat_gemm_gflops (median), coopmat_gemm_best_gflops, coopmat_gemm_worst_gflops,
// coopmat_gemm_peak_gflops, coopmat_gemm_peak_fraction, coopmat_gemm_tile MxNxK;
// coopmat_gemm_concurrent_peak_gflops and _fraction, the peak measured on every thread at
// once (what they get together, which a peak measured on one thread overstates where threads
// share a core); coopmat_gemm_unsupported 1 when the device lists no entry for the types.
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "bench_vk.h"
#include "cpu_peak.h"
#include "fp16.h"

namespace {

struct Types {
  const char* name;
  VkComponentTypeKHR a, c;
  size_t a_size, c_size;
};
constexpr Types kTypes[] = {
    {"f16_f32", VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR, 2, 4},
    {"f16_f16", VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR, 2, 2},
    {"bf16_f32", VK_COMPONENT_TYPE_BFLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR, 2, 4},
    {"s8_s32", VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT32_KHR, 1, 4},
    {"e4m3_f32", VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT, VK_COMPONENT_TYPE_FLOAT32_KHR, 1, 4},
};

// Inputs are small integers (exact in every format, e4m3 included); these are their bits.
uint32_t encode_input(VkComponentTypeKHR t, int v) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: return bench::float_to_half(float(v));
    case VK_COMPONENT_TYPE_BFLOAT16_KHR: {
      float f = float(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b >> 16;  // small integers: exact, no rounding
    }
    case VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT: {
      // sign, 4 exponent bits (bias 7), 3 mantissa bits; |v| <= 2 here
      static const uint8_t pos[3] = {0x00, 0x38, 0x40};  // 0, 1, 2
      return v < 0 ? 0x80u | pos[-v] : pos[v];
    }
    default: return uint32_t(v) & 0xFF;  // s8
  }
}

double decode_result(VkComponentTypeKHR t, const void* p, size_t i) {
  if (t == VK_COMPONENT_TYPE_FLOAT32_KHR) return static_cast<const float*>(p)[i];
  if (t == VK_COMPONENT_TYPE_SINT32_KHR) return static_cast<const int32_t*>(p)[i];
  return bench::half_to_float(static_cast<const uint16_t*>(p)[i]);
}

// The peak the combination is held against: the instruction class a CPU would use for it.
bench::PeakClass peak_class_for(const Types& t) {
  using bench::PeakClass;
  const bool z = bench::peak_class_supported(PeakClass::Fma512);
  if (t.a == VK_COMPONENT_TYPE_SINT8_KHR) {
    if (bench::peak_class_supported(z ? PeakClass::Vnni512 : PeakClass::Vnni256)) return z ? PeakClass::Vnni512 : PeakClass::Vnni256;
    return z ? PeakClass::Madd512 : PeakClass::Madd256;
  }
  if (t.a == VK_COMPONENT_TYPE_FLOAT16_KHR && t.c == VK_COMPONENT_TYPE_FLOAT16_KHR &&
      bench::peak_class_supported(PeakClass::Fp16_512))
    return PeakClass::Fp16_512;
  if (t.a == VK_COMPONENT_TYPE_BFLOAT16_KHR && bench::peak_class_supported(PeakClass::Bf16_512)) return PeakClass::Bf16_512;
  return z ? PeakClass::Fma512 : PeakClass::Fma256;
}

struct Support {
  bool coopmat = false, bf16 = false, fp8 = false;
  std::vector<VkCooperativeMatrixPropertiesKHR> props;
};

// What the device offers, asked on an instance of its own before the bench's device exists
// (the device can only enable what is there).
Support query_support() {
  Support s;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance inst;
  BENCH_VK(vkCreateInstance(&ici, nullptr, &inst));
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(inst, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  vkEnumeratePhysicalDevices(inst, &n, pds.data());
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  for (VkPhysicalDevice p : pds) {
    VkPhysicalDeviceProperties pp;
    vkGetPhysicalDeviceProperties(p, &pp);
    if (pp.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) pd = p;
  }
  if (pd == VK_NULL_HANDLE && n) pd = pds[0];
  if (pd) {
    uint32_t en = 0;
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &en, nullptr);
    std::vector<VkExtensionProperties> exts(en);
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &en, exts.data());
    for (const auto& e : exts) {
      const std::string name = e.extensionName;
      s.coopmat |= name == VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;
      s.bf16 |= name == VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME;
      s.fp8 |= name == VK_EXT_SHADER_FLOAT8_EXTENSION_NAME;
    }
    if (s.coopmat) {
      auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
          vkGetInstanceProcAddr(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
      uint32_t pn = 0;
      fn(pd, &pn, nullptr);
      s.props.assign(pn, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
      fn(pd, &pn, s.props.data());
      s.props.resize(pn);
    }
  }
  vkDestroyInstance(inst, nullptr);
  return s;
}

// measure_clock_hz() and measure_issue_rate() run on `threads` threads at once, each phase
// started together; the sum of clock x rate x ops over the threads, in G(FL)OP/s.
double concurrent_peak(bench::PeakClass pc, unsigned threads) {
  std::vector<double> clock(threads), ipc(threads);
  std::atomic<unsigned> arrived{0};
  auto together = [&](unsigned phase) {  // a barrier: all threads at the same phase
    arrived.fetch_add(1);
    while (arrived.load() < phase * threads) std::this_thread::yield();
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      together(1);
      clock[t] = bench::measure_clock_hz();
      together(2);
      ipc[t] = bench::measure_issue_rate(pc, clock[t]);
    });
  for (std::thread& t : pool) t.join();
  double sum = 0;
  for (unsigned t = 0; t < threads; ++t) sum += clock[t] * ipc[t] * bench::ops_per_instruction(pc) / 1e9;
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  bench::report_crashes("bench_coopmat_gemm");
  const std::string which = argc > 1 ? argv[1] : "f16_f32";
  const uint32_t size = argc > 2 ? uint32_t(std::atoi(argv[2])) : 1024;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  const Types* types = nullptr;
  for (const Types& t : kTypes)
    if (which == t.name) types = &t;
  if (!types || size == 0 || size % 64 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_coopmat_gemm f16_f32|f16_f16|bf16_f32|s8_s32|e4m3_f32 [size, a multiple of 64] [reps>0]\n");
    return 2;
  }

  // This CPU's peak for the class, all hardware threads (cpu_peak.h).
  const bench::PeakClass pc = peak_class_for(*types);
  const double clock = bench::measure_clock_hz();
  const double ipc = bench::measure_issue_rate(pc, clock);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const double peak = clock * ipc * bench::ops_per_instruction(pc) * threads / 1e9;
  std::printf("cpu %s: %.2f GHz measured, %s %.2f per cycle x %.0f ops x %u threads = %.1f G(FL)OP/s peak\n",
              bench::cpu_model_name().c_str(), clock / 1e9, bench::peak_class_name(pc), ipc,
              bench::ops_per_instruction(pc), threads, peak);
  std::printf("coopmat_gemm_peak_gflops %.3f\ncoopmat_gemm_peak_class %s\n", peak, bench::peak_class_name(pc));
  // The same measured on every thread at once: what the machine gives the GEMM's threads
  // together (lower where they share a core's units or its clock budget; on this project's
  // VM, now and then half the VNNI rate).
  const double together = concurrent_peak(pc, threads);
  std::printf("peak with all %u threads measuring at once: %.1f G(FL)OP/s\ncoopmat_gemm_concurrent_peak_gflops %.3f\n",
              threads, together, together);

  const Support sup = query_support();
  const VkCooperativeMatrixPropertiesKHR* entry = nullptr;
  // The largest tile the device lists for the types (the first of equals): what a GEMM
  // written for speed picks.
  for (const auto& p : sup.props)
    if (p.scope == VK_SCOPE_SUBGROUP_KHR && p.AType == types->a && p.BType == types->a && p.CType == types->c &&
        p.ResultType == types->c && !p.saturatingAccumulation &&
        (!entry || p.MSize * p.NSize * p.KSize > entry->MSize * entry->NSize * entry->KSize))
      entry = &p;
  const bool need_bf16 = types->a == VK_COMPONENT_TYPE_BFLOAT16_KHR, need_fp8 = types->a == VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT;
  if (!entry || (need_bf16 && !sup.bf16) || (need_fp8 && !sup.fp8)) {
    std::printf("the device lists no subgroup entry for %s\ncoopmat_gemm_unsupported 1\n", types->name);
    return 0;
  }
  const uint32_t TM = entry->MSize, TN = entry->NSize, TK = entry->KSize;
  std::printf("coopmat_gemm_tile %ux%ux%u\n", TM, TN, TK);

  VkPhysicalDeviceShaderFloat8FeaturesEXT f8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT};
  f8.shaderFloat8 = f8.shaderFloat8CooperativeMatrix = VK_TRUE;
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  bf.shaderBFloat16Type = bf.shaderBFloat16CooperativeMatrix = VK_TRUE;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  cm.cooperativeMatrix = VK_TRUE;
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &cm};
  v13.subgroupSizeControl = VK_TRUE;
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
  v12.shaderFloat16 = v12.shaderInt8 = v12.storageBuffer8BitAccess = v12.vulkanMemoryModel = VK_TRUE;
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  v11.storageBuffer16BitAccess = VK_TRUE;
  std::vector<const char*> exts = {VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME};
  const void** tail = const_cast<const void**>(&cm.pNext);
  if (need_bf16) {
    *tail = &bf;
    tail = const_cast<const void**>(&bf.pNext);
    exts.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  }
  if (need_fp8) {
    *tail = &f8;
    exts.push_back(VK_EXT_SHADER_FLOAT8_EXTENSION_NAME);
  }
  bench::Context ctx(&v11, exts);
  bench::print_device(ctx);
  VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg};
  vkGetPhysicalDeviceProperties2(ctx.physical, &p2);

  const uint32_t M = size, N = size, K = size;
  bench::Buffer a = ctx.buffer(VkDeviceSize(M) * K * types->a_size), b = ctx.buffer(VkDeviceSize(K) * N * types->a_size),
                c = ctx.buffer(VkDeviceSize(M) * N * types->c_size), d = ctx.buffer(VkDeviceSize(M) * N * types->c_size);
  std::vector<int8_t> av(size_t(M) * K), bv(size_t(K) * N);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-2, 2);
  auto store = [&](bench::Buffer& buf, size_t elem, size_t i, uint32_t bits) {
    std::memcpy(static_cast<uint8_t*>(buf.mapped) + i * elem, &bits, elem);
  };
  for (size_t i = 0; i < av.size(); ++i) store(a, types->a_size, i, encode_input(types->a, av[i] = int8_t(dist(rng))));
  for (size_t i = 0; i < bv.size(); ++i) store(b, types->a_size, i, encode_input(types->a, bv[i] = int8_t(dist(rng))));
  std::memset(c.mapped, 0, c.size);

  bench::Compute comp(ctx.device, 4, 20);
  const uint32_t spec[5] = {4 * sg.subgroupSize, TM, TN, TK, 2};
  VkSpecializationMapEntry me[5];
  for (uint32_t i = 0; i < 5; ++i) me[i] = {i, i * 4, 4};
  VkSpecializationInfo si{5, me, sizeof(spec), spec};
  comp.pipeline = comp.create(bench::load_spv(std::string("gemm_") + types->name), VK_NULL_HANDLE, &si);
  comp.bind({&a, &b, &c, &d});
  const uint32_t push[5] = {K, K, N, N, N};
  // A workgroup computes (2 subgroups x 2 tiles) x TM rows and as many TN columns.
  VkCommandBuffer cb = comp.record(ctx, push, sizeof(push), N / (4 * TN), M / (4 * TM));
  if (N % (4 * TN) || M % (4 * TM)) {
    std::fprintf(stderr, "size %u is not a multiple of the %ux%u workgroup block\n", size, 4 * TM, 4 * TN);
    return 2;
  }
  ctx.submit_and_wait(cb);  // warm-up and correctness
  std::uniform_int_distribution<uint32_t> ri(0, M - 1), ci(0, N - 1);
  int bad = 0;
  for (int s = 0; s < 1000; ++s) {
    const uint32_t i = s < 2 ? 0 : s < 4 ? M - 1 : ri(rng), j = s % 2 ? N - 1 : s < 4 ? 0 : ci(rng);
    double ref = 0;
    for (uint32_t k = 0; k < K; ++k) ref += double(av[size_t(i) * K + k]) * bv[size_t(k) * N + j];
    const double got = decode_result(types->c, d.mapped, size_t(i) * N + j);
    // f16 results round once (2^-11 relative); the others are exact.
    const double tol = types->c == VK_COMPONENT_TYPE_FLOAT16_KHR ? std::ldexp(std::fabs(ref), -10) : 0.0;
    if (!(std::fabs(got - ref) <= tol)) {
      if (bad < 5) std::fprintf(stderr, "D[%u][%u] = %.7g, expected %.7g\n", i, j, got, ref);
      ++bad;
    }
  }
  if (bad) {
    std::printf("WRONG RESULT: %d of 1000 sampled entries\n", bad);
    return 1;
  }
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) times.push_back(ctx.submit_and_wait(cb));
  const double ops = 2.0 * M * N * K / 1e9;
  const double med = bench::median(times), best = bench::minimum(times);
  const double worst = *std::max_element(times.begin(), times.end());
  std::printf("%s %u^3 on %s, tile %ux%ux%u: median %.3f s, best %.3f s, worst %.3f s over %d runs\n", types->name, size,
              ctx.props.deviceName, TM, TN, TK, med, best, worst, reps);
  std::printf("coopmat_gemm_gflops %.3f\ncoopmat_gemm_best_gflops %.3f\ncoopmat_gemm_worst_gflops %.3f\n", ops / med,
              ops / best, ops / worst);
  std::printf("coopmat_gemm_peak_fraction %.4f\n", ops / med / peak);
  std::printf("coopmat_gemm_concurrent_peak_fraction %.4f\n", ops / med / together);
  return 0;
}
