// A tiled cooperative-matrix GEMM (conformance/shaders/coopmat/gemm_body.glsl: each
// subgroup owns 2 x 2 accumulator tiles and walks K, 2 x 2 subgroups per workgroup) on
// whatever driver VK_DRIVER_FILES selects, with the largest tile shape the device's
// property entries list for the types. scripts/bench.sh runs it on coopvk and on lavapipe with
// identical SPIR-V and divides the two.
//
//   bench_coopmat_gemm TYPES [size=1024] [reps=3] [shape=baseline]
//     TYPES: f16_f32, f16_f16, bf16_f32, s8_s32 or e4m3_f32 (A and B, then C and D)
//     shape: baseline (gemm_body.glsl), or a variant of gemm_staged_body.glsl that differs
//       from it in one way: staged (A and B copied through workgroup memory by 8 subgroups,
//       barriers around each stage), zero_init (accumulators from 0, C added after the K
//       loop), outer_loop (2 blocks per subgroup, one after the other), b_colmajor (B
//       column-major); several joined by commas; or all (the baseline, then every variant)
//
// Several shapes run in one process: each is checked, then the timed repetitions go round
// the shapes in turn, so that they share whatever else the machine does.
// Also prints this CPU's peak for the instruction class the combination maps to (measured
// in this process: clock x issue rate x ops per instruction x hardware threads, cpu_peak.h)
// and the GEMM's fraction of it. The result is checked against a double-precision
// reference on sampled entries before anything is timed. Machine-readable lines:
// coopmat_gemm_gflops (median), coopmat_gemm_best_gflops, coopmat_gemm_worst_gflops,
// coopmat_gemm_peak_gflops, coopmat_gemm_peak_fraction, coopmat_gemm_tile MxNxK;
// coopmat_gemm_concurrent_peak_gflops and _fraction, the peak measured on every thread at
// once (what they get together, which a peak measured on one thread overstates where threads
// share a core); coopmat_gemm_unsupported 1 when the device lists no entry for the types.
// Those lines describe the first shape named. With several shapes, each also gets
// `coopmat_gemm_shape NAME GFLOPS [RATIO]`, RATIO its speed over the baseline's when the
// baseline ran too; a shape alone that is not the baseline gets it without RATIO. A shape
// whose pipeline cannot be created or whose result is wrong prints PIPELINE FAILED or WRONG
// RESULT and `coopmat_gemm_shape_failed NAME`; the others still run and the exit status is 1.
#include <atomic>
#include <memory>
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

// C's bits for a small integer v (exact in f32, f16 and s32).
uint32_t encode_output(VkComponentTypeKHR t, int v) {
  if (t == VK_COMPONENT_TYPE_FLOAT32_KHR) {
    float f = float(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  if (t == VK_COMPONENT_TYPE_SINT32_KHR) return uint32_t(v);
  return bench::float_to_half(float(v));
}

double decode_result(VkComponentTypeKHR t, const void* p, size_t i) {
  if (t == VK_COMPONENT_TYPE_FLOAT32_KHR) return static_cast<const float*>(p)[i];
  if (t == VK_COMPONENT_TYPE_SINT32_KHR) return static_cast<const int32_t*>(p)[i];
  return bench::half_to_float(static_cast<const uint16_t*>(p)[i]);
}

// A GEMM shape (conformance/shaders/coopmat/gemm_staged_body.glsl): its shader is gemm_<types>
// for the baseline, gemm_<name>_<types> for a variant. Every shape has 2 x 2 accumulator
// tiles per subgroup and 2 subgroups across a workgroup's columns.
struct Shape {
  const char* name;
  bool variant;        // not the baseline (gemm_body.glsl)
  uint32_t subgroups;  // per workgroup (the rest of 2 down its rows)
  uint32_t blocks;     // blocks of tiles per subgroup, one after the other
  bool b_colmajor;     // B stored column-major
  bool staged;         // A and B through workgroup memory, kStageSteps x TK of K per stage
};
constexpr Shape kShapes[] = {
    {"baseline", false, 4, 1, false, false},  {"staged", true, 8, 1, false, true},
    {"zero_init", true, 4, 1, false, false},  {"outer_loop", true, 4, 2, false, false},
    {"b_colmajor", true, 4, 1, true, false},
};
constexpr uint32_t kStageSteps = 2;

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
  const std::string shape_arg = argc > 4 ? argv[4] : "baseline";
  const Types* types = nullptr;
  for (const Types& t : kTypes)
    if (which == t.name) types = &t;
  if (!types || size == 0 || size % 64 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_coopmat_gemm f16_f32|f16_f16|bf16_f32|s8_s32|e4m3_f32 [size, a multiple of 64] [reps>0] "
                         "[baseline|staged|zero_init|outer_loop|b_colmajor|all, or shapes joined by commas]\n");
    return 2;
  }
  // The shapes to run, in the order named; `all`: the baseline, then every variant.
  std::vector<const Shape*> shapes;
  if (shape_arg == "all") {
    for (const Shape& s : kShapes) shapes.push_back(&s);
  } else {
    for (size_t pos = 0; pos <= shape_arg.size();) {
      const size_t comma = std::min(shape_arg.find(',', pos), shape_arg.size());
      const std::string name = shape_arg.substr(pos, comma - pos);
      const Shape* found = nullptr;
      for (const Shape& s : kShapes)
        if (name == s.name) found = &s;
      if (!found) {
        std::fprintf(stderr, "unknown shape '%s' (baseline, staged, zero_init, outer_loop, b_colmajor, all)\n", name.c_str());
        return 2;
      }
      if (std::find(shapes.begin(), shapes.end(), found) == shapes.end()) shapes.push_back(found);
      pos = comma + 1;
    }
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
  bool need_colmajor = false;
  for (const Shape* s : shapes) need_colmajor |= s->b_colmajor;
  bench::Buffer a = ctx.buffer(VkDeviceSize(M) * K * types->a_size), b = ctx.buffer(VkDeviceSize(K) * N * types->a_size),
                c = ctx.buffer(VkDeviceSize(M) * N * types->c_size), d = ctx.buffer(VkDeviceSize(M) * N * types->c_size);
  bench::Buffer bt = need_colmajor ? ctx.buffer(VkDeviceSize(K) * N * types->a_size) : bench::Buffer{};
  std::vector<int8_t> av(size_t(M) * K), bv(size_t(K) * N), cv(size_t(M) * N);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-2, 2);
  auto store = [&](bench::Buffer& buf, size_t elem, size_t i, uint32_t bits) {
    std::memcpy(static_cast<uint8_t*>(buf.mapped) + i * elem, &bits, elem);
  };
  for (size_t i = 0; i < av.size(); ++i) store(a, types->a_size, i, encode_input(types->a, av[i] = int8_t(dist(rng))));
  for (size_t i = 0; i < bv.size(); ++i) store(b, types->a_size, i, encode_input(types->a, bv[i] = int8_t(dist(rng))));
  if (need_colmajor)  // the same B, column-major: element (k, n) at n * K + k
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t n = 0; n < N; ++n) store(bt, types->a_size, size_t(n) * K + k, encode_input(types->a, bv[size_t(k) * N + n]));
  // C is not zero, so that a shape that drops or mangles it fails the check.
  for (size_t i = 0; i < cv.size(); ++i) store(c, types->c_size, i, encode_output(types->c, cv[i] = int8_t(dist(rng) * 3)));

  // Each shape's pipeline and command buffer. Spec. constants: invocations, TM, TN, TK, WN,
  // and for the staged shape WM (subgroups down the rows) and KS (TK steps per stage).
  struct Run {
    const Shape* shape;
    std::string shader;
    std::unique_ptr<bench::Compute> comp;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    bool ok = false;
    std::vector<double> times;
  };
  std::vector<Run> runs;
  bool failed = false;
  for (const Shape* s : shapes) {
    Run r;
    r.shape = s;
    r.shader = std::string("gemm_") + (s->variant ? std::string(s->name) + "_" : std::string()) + types->name;
    const uint32_t group_rows = s->subgroups / 2 * 2 * TM * s->blocks, group_cols = 4 * TN;
    // The staged copies move 16 bytes, and its tiles start at 16-byte multiples in workgroup memory.
    const bool staged_ok = !s->staged || (K % (kStageSteps * TK) == 0 && TK * types->a_size % 16 == 0 &&
                                          TN * types->a_size % 16 == 0);
    if (M % group_rows || N % group_cols || !staged_ok) {
      std::printf("shape %s: size %u is not a multiple of its %ux%u workgroup block, or (staged) K of %u or the tile's "
                  "rows of 16 bytes\ncoopmat_gemm_shape_unsupported %s\n",
                  s->name, size, group_rows, group_cols, kStageSteps * TK, s->name);
      runs.push_back(std::move(r));
      continue;
    }
    const uint32_t spec[7] = {s->subgroups * sg.subgroupSize, TM, TN, TK, 2, s->subgroups / 2, kStageSteps};
    VkSpecializationMapEntry me[7];
    for (uint32_t i = 0; i < 7; ++i) me[i] = {i, i * 4, 4};
    VkSpecializationInfo si{7, me, sizeof(spec), spec};
    r.comp = std::make_unique<bench::Compute>(ctx.device, 4, 20);
    VkResult vr = VK_SUCCESS;
    r.comp->pipeline = r.comp->try_create(bench::load_spv(r.shader), VK_NULL_HANDLE, &si, &vr);
    if (!r.comp->pipeline) {
      std::printf("PIPELINE FAILED: shape %s (%s.spv): VkResult %d\ncoopmat_gemm_shape_failed %s\n", s->name,
                  r.shader.c_str(), int(vr), s->name);
      failed = true;
      runs.push_back(std::move(r));
      continue;
    }
    r.comp->bind({&a, s->b_colmajor ? &bt : &b, &c, &d});
    const uint32_t push[5] = {K, K, s->b_colmajor ? K : N, N, N};
    r.cb = r.comp->record(ctx, push, sizeof(push), N / group_cols, M / group_rows);
    r.ok = true;
    runs.push_back(std::move(r));
  }

  // Warm-up and correctness, each shape against the same double-precision reference.
  std::uniform_int_distribution<uint32_t> ri(0, M - 1), ci(0, N - 1);
  for (Run& r : runs) {
    if (!r.ok) continue;
    std::memset(d.mapped, 0, d.size);
    std::snprintf(bench::crash_info().shader, sizeof(bench::crash_info().shader), "%s", r.shader.c_str());
    ctx.submit_and_wait(r.cb);
    int bad = 0;
    for (int s = 0; s < 1000; ++s) {
      const uint32_t i = s < 2 ? 0 : s < 4 ? M - 1 : ri(rng), j = s % 2 ? N - 1 : s < 4 ? 0 : ci(rng);
      double ref = cv[size_t(i) * N + j];
      for (uint32_t k = 0; k < K; ++k) ref += double(av[size_t(i) * K + k]) * bv[size_t(k) * N + j];
      const double got = decode_result(types->c, d.mapped, size_t(i) * N + j);
      // f16 results round once (2^-11 relative); the others are exact.
      const double tol = types->c == VK_COMPONENT_TYPE_FLOAT16_KHR ? std::ldexp(std::fabs(ref), -10) : 0.0;
      if (!(std::fabs(got - ref) <= tol)) {
        if (bad < 5) std::fprintf(stderr, "shape %s: D[%u][%u] = %.7g, expected %.7g\n", r.shape->name, i, j, got, ref);
        ++bad;
      }
    }
    if (bad) {
      std::printf("WRONG RESULT: shape %s (%s.spv): %d of 1000 sampled entries\ncoopmat_gemm_shape_failed %s\n",
                  r.shape->name, r.shader.c_str(), bad, r.shape->name);
      r.ok = false;
      failed = true;
    }
  }

  // Timed: one repetition of every shape in turn, so that they share the machine's moods.
  for (int rep = 0; rep < reps; ++rep)
    for (Run& r : runs)
      if (r.ok) {
        std::snprintf(bench::crash_info().shader, sizeof(bench::crash_info().shader), "%s", r.shader.c_str());
        r.times.push_back(ctx.submit_and_wait(r.cb));
      }

  const double ops = 2.0 * M * N * K / 1e9;
  const Run* base = nullptr;
  for (const Run& r : runs)
    if (!r.shape->variant && r.ok) base = &r;
  const bool ratios = base && runs.size() > 1;
  bool first = true;
  for (const Run& r : runs) {
    if (!r.ok) {
      first = false;
      continue;
    }
    const double med = bench::median(r.times), best = bench::minimum(r.times);
    const double worst = *std::max_element(r.times.begin(), r.times.end());
    std::printf("%s %u^3 on %s, tile %ux%ux%u, shape %s: median %.3f s, best %.3f s, worst %.3f s over %d runs\n", types->name,
                size, ctx.props.deviceName, TM, TN, TK, r.shape->name, med, best, worst, reps);
    if (first) {  // the first shape named: the lines scripts/bench.sh reads
      std::printf("coopmat_gemm_gflops %.3f\ncoopmat_gemm_best_gflops %.3f\ncoopmat_gemm_worst_gflops %.3f\n", ops / med,
                  ops / best, ops / worst);
      std::printf("coopmat_gemm_peak_fraction %.4f\n", ops / med / peak);
      std::printf("coopmat_gemm_concurrent_peak_fraction %.4f\n", ops / med / together);
    }
    first = false;
    if (ratios)
      std::printf("coopmat_gemm_shape %s %.3f %.4f\n", r.shape->name, ops / med, bench::median(base->times) / med);
    else if (runs.size() > 1 || r.shape->variant)
      std::printf("coopmat_gemm_shape %s %.3f\n", r.shape->name, ops / med);
  }
  return failed ? 1 : 0;
}
