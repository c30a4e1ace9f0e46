// A small MLP the way neural-shading shaders run one, 64 -> 64 (ReLU) -> 64, one input
// vector per invocation, weights in the inferencing-optimal layout, computed two ways over
// the same data with every core:
//  - kernel: coopvk's batched cooperative-vector products (kernels/coopvec_batch.h) over
//    subgroup-sized batches, as the JIT runs OpCooperativeVectorMatrixMulAddNV when every
//    lane multiplies by the same matrix, including the per-lane loads and stores (each
//    invocation's vector is contiguous in memory; the kernel wants them side by side);
//  - xsimd: a hand-written C++ loop with xsimd, the same batches, weights widened to f32
//    once, four outputs per pass over the inputs.
// Both accumulate in f32 in the same order and round each layer to the result format, so
// their outputs must agree bit for bit (checked before anything is timed).
//
//   bench_coopvec_mlp [f16|s8] [vectors = 1048576] [reps = 5]
//
// f16: f16 inputs, weights, biases and results (a ReLU between the layers). s8: s8 inputs
// and weights, s32 biases and results; between the layers the ReLU'd s32 values are scaled
// back to s8 (>> 8, clamped), as quantized networks do. Prints vectors/s, GFLOP/s (GOP/s),
// the fraction of this CPU's peak for the instruction class (f16: AVX512-FP16's vfmadd231ph
// where the CPU has it, else the f32 FMA the kernels widen to; s8: vpdpbusd, else
// vpmaddwd+vpaddd; measured per core in this process, times the threads) and kernel /
// xsimd. Machine-readable lines: mlp_<path>_vectors_per_s (median), mlp_<path>_best,
// mlp_<path>_worst, mlp_peak_gops, mlp_<path>_peak_fraction, mlp_kernel_over_xsimd.
// Then, where the device (VK_DRIVER_FILES) has VK_NV_cooperative_vector, the same MLP as a
// GLSL shader (shaders/coopvec_mlp_*.comp) through Vulkan, its output checked against the
// xsimd loop's: mlp_shader_vectors_per_s, mlp_shader_peak_fraction, mlp_shader_over_xsimd; or
// mlp_shader_unsupported 1.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <immintrin.h>
#include <xsimd/xsimd.hpp>

#include "coopvk/kernels/coopvec_layout.h"
#include "bench_vk.h"
#include "coopvk/kernels/coopvec_batch.h"
#include "coopvk/kernels/cpu_dispatch.h"
#include "cpu_peak.h"

using namespace coopvk::kernels;
using NF = NumberFormat;

namespace {

constexpr uint32_t kN = 64;  // every layer is 64 x 64

struct Net {
  bool f16 = true;
  NF in = NF::F16, w = NF::F16, bias = NF::F16, out = NF::F16;
  size_t ein() const { return format_size(in); }
  size_t eout() const { return format_size(out); }
  std::vector<uint8_t> w_opt[2];    // inferencing-optimal, what the kernel path reads
  std::vector<float> w_f32[2];      // row-major f32, the xsimd path's once-widened copy
  std::vector<uint8_t> b_bytes[2];  // bias in its format
  std::vector<float> b_f32[2];
};

uint16_t f16_bits(float v) { return f32_to_f16(v); }

Net make_net(bool f16, std::mt19937& rng) {
  Net n;
  n.f16 = f16;
  if (!f16) n.in = n.w = NF::I8, n.bias = n.out = NF::I32;
  std::uniform_int_distribution<int> small(-8, 8), byte(-128, 127), wide(-2000, 2000);
  for (int l = 0; l < 2; ++l) {
    std::vector<uint8_t> row_major(kN * kN * format_size(n.w));
    n.w_f32[l].resize(kN * kN);
    for (uint32_t i = 0; i < kN * kN; ++i) {
      if (f16) {
        const float v = float(small(rng)) / 64.0f;  // exact in f16
        const uint16_t h = f16_bits(v);
        std::memcpy(&row_major[i * 2], &h, 2);
        n.w_f32[l][i] = v;
      } else {
        const int8_t v = int8_t(byte(rng));
        row_major[i] = uint8_t(v);
        n.w_f32[l][i] = v;
      }
    }
    MatrixDesc src{kN, kN, n.w, MatrixLayout::RowMajor, kN * format_size(n.w)};
    MatrixDesc dst{kN, kN, n.w, MatrixLayout::InferencingOptimal, 0};
    size_t size = 0;
    convert_matrix(src, nullptr, 0, dst, nullptr, &size);
    n.w_opt[l].resize(size);
    convert_matrix(src, row_major.data(), row_major.size(), dst, n.w_opt[l].data(), &size);
    n.b_bytes[l].resize(kN * 4);
    n.b_f32[l].resize(kN);
    for (uint32_t i = 0; i < kN; ++i) {
      if (f16) {
        const float v = float(small(rng)) / 8.0f;
        const uint16_t h = f16_bits(v);
        std::memcpy(&n.b_bytes[l][i * 2], &h, 2);
        n.b_f32[l][i] = v;
      } else {
        const int32_t v = wide(rng);
        std::memcpy(&n.b_bytes[l][i * 4], &v, 4);
        n.b_f32[l][i] = float(v);
      }
    }
  }
  return n;
}

// Between the layers: ReLU, and for s8 the scale back to 8 bits.
uint32_t between_s8(int32_t v) { return uint32_t(uint8_t(int8_t(std::clamp(std::max(v, 0) >> 8, -128, 127)))); }

// ---- kernel path ----

// One layer over `lanes` vectors held component-major, as the JIT calls it.
void layer(const CoopVecMatMulDesc& d, const uint8_t* w, const uint8_t* bias, const uint8_t* x, size_t ein, uint8_t* y,
           size_t eout, uint32_t lanes, uint64_t token) {
  const CoopVecMatMulArgs a{w, 0, x, int64_t(lanes * ein), bias, y, int64_t(lanes * eout), nullptr, nullptr, nullptr, nullptr};
  coopvec_matmul_lanes(d, a, lanes, token);
}

void run_kernel(const Net& n, const uint8_t* in, uint8_t* out, size_t first, size_t count, uint32_t lanes,
                uint64_t token) {
  CoopVecMatMulDesc d{uint32_t(n.in), uint32_t(n.in), 0, uint32_t(n.w), uint32_t(n.bias), uint32_t(n.out),
                      kN, kN, uint32_t(MatrixLayout::InferencingOptimal), 0, 1, 0};
  const size_t ein = n.ein(), eout = n.eout();
  std::vector<uint8_t> x(kN * lanes * ein), h(kN * lanes * eout), hx(kN * lanes * ein), y(kN * lanes * eout);
  // each lane's OpCooperativeVectorLoadNV / StoreNV: its vector, to and from component-major order
  auto gather = [&](const uint8_t* src, uint8_t* dst, size_t v0) {
    if (ein == 2) {
      auto* d16 = reinterpret_cast<uint16_t*>(dst);
      const auto* s16 = reinterpret_cast<const uint16_t*>(src);
      for (uint32_t l = 0; l < lanes; ++l)
        for (uint32_t j = 0; j < kN; ++j) d16[j * lanes + l] = s16[(v0 + l) * kN + j];
    } else {
      for (uint32_t l = 0; l < lanes; ++l)
        for (uint32_t j = 0; j < kN; ++j) dst[j * lanes + l] = src[(v0 + l) * kN + j];
    }
  };
  for (size_t v0 = first; v0 < first + count; v0 += lanes) {
    gather(in, x.data(), v0);
    layer(d, n.w_opt[0].data(), n.b_bytes[0].data(), x.data(), ein, h.data(), eout, lanes, token);
    const uint8_t* next = h.data();
    if (n.f16) {  // ReLU on f16: negative values (sign bit set) become +0
      for (size_t i = 0; i < kN * lanes; ++i)
        if (h[i * 2 + 1] & 0x80) h[i * 2] = h[i * 2 + 1] = 0;
    } else {
      for (size_t i = 0; i < kN * lanes; ++i) {
        int32_t v;
        std::memcpy(&v, &h[i * 4], 4);
        hx[i] = uint8_t(between_s8(v));
      }
      next = hx.data();
    }
    layer(d, n.w_opt[1].data(), n.b_bytes[1].data(), next, ein, y.data(), eout, lanes, token);
    if (eout == 2) {
      auto* o16 = reinterpret_cast<uint16_t*>(out);
      const auto* y16 = reinterpret_cast<const uint16_t*>(y.data());
      for (uint32_t l = 0; l < lanes; ++l)
        for (uint32_t j = 0; j < kN; ++j) o16[(v0 + l) * kN + j] = y16[j * lanes + l];
    } else {
      auto* o32 = reinterpret_cast<uint32_t*>(out);
      const auto* y32 = reinterpret_cast<const uint32_t*>(y.data());
      for (uint32_t l = 0; l < lanes; ++l)
        for (uint32_t j = 0; j < kN; ++j) o32[(v0 + l) * kN + j] = y32[j * lanes + l];
    }
  }
}

// ---- xsimd path ----

using Batch = xsimd::batch<float>;
constexpr uint32_t kL = uint32_t(Batch::size);

// One layer over kL vectors held component-major (x[j] = component j of every vector).
void layer_xsimd(const float* w, const float* b, const Batch* x, Batch* y) {
  for (uint32_t o = 0; o < kN; o += 4) {
    Batch acc0(b[o]), acc1(b[o + 1]), acc2(b[o + 2]), acc3(b[o + 3]);
    for (uint32_t j = 0; j < kN; ++j) {
      acc0 = xsimd::fma(Batch(w[o * kN + j]), x[j], acc0);
      acc1 = xsimd::fma(Batch(w[(o + 1) * kN + j]), x[j], acc1);
      acc2 = xsimd::fma(Batch(w[(o + 2) * kN + j]), x[j], acc2);
      acc3 = xsimd::fma(Batch(w[(o + 3) * kN + j]), x[j], acc3);
    }
    y[o] = acc0, y[o + 1] = acc1, y[o + 2] = acc2, y[o + 3] = acc3;
  }
}

// f16 <-> f32 for a batch, with the CPU's conversion instructions where the build has them
// (F16C / AVX-512), as a hand-tuned loop would use; rounding to nearest even either way.
Batch halves_to_batch(const uint16_t* h) {
#if defined(__AVX512F__)
  if constexpr (kL == 16) return Batch(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h))));
#elif defined(__F16C__)
  if constexpr (kL == 8) return Batch(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h))));
#endif
  alignas(64) float f[kL];
  for (uint32_t l = 0; l < kL; ++l) f[l] = f16_to_f32(h[l]);
  return Batch::load_aligned(f);
}
void batch_to_halves(const Batch& b, uint16_t* h) {
#if defined(__AVX512F__)
  if constexpr (kL == 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h), _mm512_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT));
    return;
  }
#elif defined(__F16C__)
  if constexpr (kL == 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT));
    return;
  }
#endif
  alignas(64) float f[kL];
  b.store_aligned(f);
  for (uint32_t l = 0; l < kL; ++l) h[l] = f16_bits(f[l]);
}

void run_xsimd(const Net& n, const uint8_t* in, uint8_t* out, size_t first, size_t count) {
  alignas(64) Batch x[kN], h[kN], y[kN];
  alignas(64) float lane[kL];
  alignas(64) uint16_t half[kL];
  const size_t ein = n.ein(), eout = n.eout();
  const auto* in16 = reinterpret_cast<const uint16_t*>(in);
  auto* out16 = reinterpret_cast<uint16_t*>(out);
  for (size_t v0 = first; v0 < first + count; v0 += kL) {
    for (uint32_t j = 0; j < kN; ++j) {  // component j of kL vectors
      if (n.f16) {
        for (uint32_t l = 0; l < kL; ++l) half[l] = in16[(v0 + l) * kN + j];
        x[j] = halves_to_batch(half);
      } else {
        for (uint32_t l = 0; l < kL; ++l) lane[l] = float(int8_t(in[((v0 + l) * kN + j) * ein]));
        x[j] = Batch::load_aligned(lane);
      }
    }
    layer_xsimd(n.w_f32[0].data(), n.b_f32[0].data(), x, h);
    for (uint32_t j = 0; j < kN; ++j) {  // round to the result, then ReLU (and for s8 rescale)
      if (n.f16) {
        batch_to_halves(h[j], half);
        h[j] = xsimd::max(halves_to_batch(half), Batch(0.0f));  // -0 -> +0 as well
      } else {
        h[j].store_aligned(lane);
        for (uint32_t l = 0; l < kL; ++l) lane[l] = float(int8_t(between_s8(int32_t(lane[l]))));
        h[j] = Batch::load_aligned(lane);
      }
    }
    layer_xsimd(n.w_f32[1].data(), n.b_f32[1].data(), h, y);
    for (uint32_t j = 0; j < kN; ++j) {
      if (n.f16) {
        batch_to_halves(y[j], half);
        for (uint32_t l = 0; l < kL; ++l) out16[(v0 + l) * kN + j] = half[l];
      } else {
        y[j].store_aligned(lane);
        for (uint32_t l = 0; l < kL; ++l) {
          const int32_t v = int32_t(lane[l]);
          std::memcpy(out + ((v0 + l) * kN + j) * eout, &v, 4);
        }
      }
    }
  }
}

// Runs f(first, count) over [0, vectors) split across `threads`, returns the wall seconds.
template <class F>
double parallel(size_t vectors, unsigned threads, size_t granule, F&& f) {
  const size_t chunks = vectors / granule;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const size_t a = chunks * t / threads * granule, b = chunks * (t + 1) / threads * granule;
    pool.emplace_back([&, a, b, t] { f(a, b - a, t); });
  }
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- shader path ----

// Whether the driver VK_DRIVER_FILES picks lists VK_NV_cooperative_vector.
bool device_has_coopvec() {
  bench::Context probe;
  uint32_t n = 0;
  BENCH_VK(vkEnumerateDeviceExtensionProperties(probe.physical, nullptr, &n, nullptr));
  std::vector<VkExtensionProperties> exts(n);
  BENCH_VK(vkEnumerateDeviceExtensionProperties(probe.physical, nullptr, &n, exts.data()));
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, VK_NV_COOPERATIVE_VECTOR_EXTENSION_NAME) == 0) return true;
  return false;
}

// The same MLP as a GLSL shader with GL_NV_cooperative_vector (shaders/coopvec_mlp_*.comp), one
// invocation per vector: the seconds of each of `reps` dispatches (after a warm-up whose output
// lands in `out`), or nothing when the device lacks the extension.
std::vector<double> run_shader(const Net& n, const std::vector<uint8_t>& in, std::vector<uint8_t>& out, size_t vectors,
                               int reps) {
  if (!device_has_coopvec()) return {};
  VkPhysicalDeviceCooperativeVectorFeaturesNV cv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV};
  cv.cooperativeVector = VK_TRUE;
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &cv};
  v12.shaderFloat16 = v12.shaderInt8 = v12.storageBuffer8BitAccess = v12.vulkanMemoryModel = VK_TRUE;
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  v11.storageBuffer16BitAccess = VK_TRUE;
  bench::Context ctx(&v11, {VK_NV_COOPERATIVE_VECTOR_EXTENSION_NAME});
  bench::print_device(ctx);
  const size_t w0 = n.w_opt[0].size(), b0 = n.b_bytes[0].size();
  bench::Buffer bin = ctx.buffer(in.size()), bw = ctx.buffer(w0 + n.w_opt[1].size()), bb = ctx.buffer(2 * b0),
                bout = ctx.buffer(out.size());
  std::memcpy(bin.mapped, in.data(), in.size());
  std::memcpy(bw.mapped, n.w_opt[0].data(), w0);
  std::memcpy(static_cast<uint8_t*>(bw.mapped) + w0, n.w_opt[1].data(), n.w_opt[1].size());
  std::memcpy(bb.mapped, n.b_bytes[0].data(), b0);
  std::memcpy(static_cast<uint8_t*>(bb.mapped) + b0, n.b_bytes[1].data(), b0);
  bench::Compute comp(ctx.device, 4, 8);
  comp.pipeline = comp.create(bench::load_spv(n.f16 ? "coopvec_mlp_f16" : "coopvec_mlp_s8"));
  comp.bind({&bin, &bw, &bb, &bout});
  const uint32_t push[2] = {uint32_t(w0), uint32_t(b0)};
  VkCommandBuffer cb = comp.record(ctx, push, sizeof(push), uint32_t(vectors / 64), 1);
  ctx.submit_and_wait(cb);
  std::memcpy(out.data(), bout.mapped, out.size());
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    ctx.submit_and_wait(cb);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return t;
}

// Element-wise equal results, with +0 and -0 the same (the ReLU may give either for -0).
bool same_results(const Net& n, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t* at) {
  for (size_t i = 0; i < a.size(); i += n.eout()) {
    uint32_t x = 0, y = 0;
    std::memcpy(&x, &a[i], n.eout());
    std::memcpy(&y, &b[i], n.eout());
    if (x != y && !(n.f16 && ((x | y) & 0x7FFF) == 0)) {
      *at = i / n.eout();
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bench::report_crashes("bench_coopvec_mlp");
  const std::string kind = argc > 1 ? argv[1] : "f16";
  const size_t vectors = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (size_t(1) << 20);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  if ((kind != "f16" && kind != "s8") || vectors == 0 || vectors % 256 != 0 || reps < 1) {
    std::fprintf(stderr, "usage: bench_coopvec_mlp [f16|s8] [vectors, a multiple of 256] [reps >= 1]\n");
    return 2;
  }
  const bool f16 = kind == "f16";
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // The subgroup the JIT would batch: its default size for this CPU (8 lanes of ymm, 32
  // with AVX-512).
  const uint32_t lanes = active_kernel_arch() == KernelArch::Avx512 ? 32 : 8;
  std::mt19937 rng(5);
  const Net n = make_net(f16, rng);
  std::vector<uint8_t> in(vectors * kN * n.ein()), out_k(vectors * kN * n.eout()), out_x(out_k.size());
  std::uniform_int_distribution<int> xs(-16, 16), xb(-128, 127);
  for (size_t i = 0; i < vectors * kN; ++i) {
    if (f16) {
      const uint16_t h = f16_bits(float(xs(rng)) / 16.0f);
      std::memcpy(&in[i * 2], &h, 2);
    } else {
      in[i] = uint8_t(int8_t(xb(rng)));
    }
  }
  uint64_t token = 1;
  auto kernel_pass = [&] {
    const uint64_t t = token++;  // one dispatch: one token
    return parallel(vectors, threads, 256,
                    [&](size_t a, size_t c, unsigned) { run_kernel(n, in.data(), out_k.data(), a, c, lanes, t); });
  };
  auto xsimd_pass = [&] {
    return parallel(vectors, threads, 256, [&](size_t a, size_t c, unsigned) { run_xsimd(n, in.data(), out_x.data(), a, c); });
  };
  kernel_pass();
  xsimd_pass();
  if (out_k != out_x) {
    for (size_t i = 0; i < out_k.size(); ++i)
      if (out_k[i] != out_x[i]) {
        std::fprintf(stderr, "mismatch at byte %zu (vector %zu): kernel %02x, xsimd %02x\n", i, i / (kN * n.eout()),
                     out_k[i], out_x[i]);
        break;
      }
    return 1;
  }

  using bench::PeakClass;
  const bool z = bench::peak_class_supported(PeakClass::Fma512);
  PeakClass pc = z ? PeakClass::Fma512 : PeakClass::Fma256;
  if (f16 && bench::peak_class_supported(PeakClass::Fp16_512)) pc = PeakClass::Fp16_512;
  if (!f16) {
    pc = z ? PeakClass::Madd512 : PeakClass::Madd256;
    if (bench::peak_class_supported(z ? PeakClass::Vnni512 : PeakClass::Vnni256)) pc = z ? PeakClass::Vnni512 : PeakClass::Vnni256;
  }
  const double hz = bench::measure_clock_hz();
  const double peak = hz * bench::measure_issue_rate(pc, hz) * bench::ops_per_instruction(pc) * threads;
  const double ops_per_vector = 2.0 * 2 * kN * kN;
  std::printf("MLP %s 64 -> 64 -> 64, %zu vectors, %u threads, kernel batches of %u lanes (%s); peak %s x %u = %.1f G/s\n",
              kind.c_str(), vectors, threads, lanes, kernel_arch_name(active_kernel_arch()), bench::peak_class_name(pc),
              threads, peak / 1e9);
  std::printf("mlp_peak_gops %.3f\nmlp_peak_class %s\n", peak / 1e9, bench::peak_class_name(pc));
  double median[2] = {};
  const char* names[2] = {"kernel", "xsimd"};
  for (int p = 0; p < 2; ++p) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) t.push_back(p == 0 ? kernel_pass() : xsimd_pass());
    std::sort(t.begin(), t.end());
    const double med = t[t.size() / 2];
    median[p] = vectors / med;
    std::printf("%-6s median %.4f s, best %.4f s, worst %.4f s over %d runs: %.2f M vectors/s, %.1f G(FL)OP/s, %.1f%% of peak\n",
                names[p], med, t.front(), t.back(), reps, vectors / med / 1e6, vectors * ops_per_vector / med / 1e9,
                100.0 * vectors * ops_per_vector / med / peak);
    std::printf("mlp_%s_vectors_per_s %.0f\nmlp_%s_best %.0f\nmlp_%s_worst %.0f\nmlp_%s_peak_fraction %.4f\n", names[p],
                vectors / med, names[p], vectors / t.front(), names[p], vectors / t.back(), names[p],
                vectors * ops_per_vector / med / peak);
  }
  std::printf("mlp_kernel_over_xsimd %.3f\n", median[0] / median[1]);

  std::vector<uint8_t> out_s(out_k.size());
  std::vector<double> t = run_shader(n, in, out_s, vectors, reps);
  if (t.empty()) {
    std::printf("shader: the device has no VK_NV_cooperative_vector\nmlp_shader_unsupported 1\n");
    return 0;
  }
  size_t bad = 0;
  if (!same_results(n, out_s, out_x, &bad)) {
    std::fprintf(stderr, "shader result %zu (vector %zu, component %zu) differs from the xsimd loop's\n", bad, bad / kN,
                 bad % kN);
    return 1;
  }
  std::sort(t.begin(), t.end());
  const double med = t[t.size() / 2];
  std::printf("%-6s median %.4f s, best %.4f s, worst %.4f s over %d runs: %.2f M vectors/s, %.1f G(FL)OP/s, %.1f%% of peak\n",
              "shader", med, t.front(), t.back(), reps, vectors / med / 1e6, vectors * ops_per_vector / med / 1e9,
              100.0 * vectors * ops_per_vector / med / peak);
  std::printf("mlp_shader_vectors_per_s %.0f\nmlp_shader_best %.0f\nmlp_shader_worst %.0f\nmlp_shader_peak_fraction %.4f\n",
              vectors / med, vectors / t.front(), vectors / t.back(), vectors * ops_per_vector / med / peak);
  std::printf("mlp_shader_over_xsimd %.3f\n", vectors / med / median[1]);
  return 0;
}
