// The cooperative-vector multiply of the end-to-end tests (matmul_body.glsl through
// ComputeJob) with one advertised entry and its CPU reference, for test_cooperative_vector
// (every entry, layout, length and subgroup size) and test_cooperative_vector_convert
// (matrices made by vkCmdConvertCooperativeVectorMatrixNV).
//
// References are computed here from the logical values: the optimal layouts are opaque,
// so those matrices are made by the driver's conversion commands from row-major bytes,
// as an application makes them; row- and column-major bytes are written here. Exactness:
// every input and matrix value is a small integer, exact in its format (and in float8), so
// each product and partial sum is exact in f32 (|sum| <= 512 * 8 * 8) and a float result
// is the exact sum rounded once to the result format, what muladd_result() computes.
// Integer results are exact sums wrapped modulo 2^32 (biases near the top of the range
// make some wrap). Integer interpretations of float or wider inputs round to nearest even
// and saturate (SPV_NV_cooperative_vector, 'InputInterpretation'): the inputs include
// halves and values past the 8-bit range.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coopvec_test_env.h"

namespace coopvk::test {

constexpr uint32_t kMatvecLocal = 16;  // matmul_body.glsl
using NF = NumberFormat;

// One advertised entry, its types by tag and the shader that multiplies with it.
struct Entry {
  VkCooperativeVectorPropertiesNV p;
  VecType input, interp, matrix, bias, result;
  std::string shader;
};

inline Entry entry_of(const VkCooperativeVectorPropertiesNV& p) {
  Entry e{p, {}, {}, {}, {}, {}, {}};
  REQUIRE(vec_type(p.inputType, &e.input));
  REQUIRE(vec_type(p.inputInterpretation, &e.interp));
  REQUIRE(vec_type(p.matrixInterpretation, &e.matrix));
  REQUIRE(vec_type(p.biasInterpretation, &e.bias));
  REQUIRE(vec_type(p.resultType, &e.result));
  e.shader = std::string("matmul_") + e.input.tag + "_" + e.interp.tag + "_" + e.matrix.tag + "_" + e.bias.tag + "_" +
             e.result.tag;
  return e;
}

inline bool is_fp8(NF f) { return f == NF::E4M3 || f == NF::E5M2; }

struct Case {
  uint32_t m, k;
  VkCooperativeVectorMatrixLayoutNV layout;
  bool transpose, bias;
  uint32_t subgroup = 0;  // 0: the default
  uint32_t groups = 3;
  // Optimal layouts: the matrices are made by one vkCmdConvertCooperativeVectorMatrixNV
  // (two conversions, on device addresses) in the dispatch's own command buffer, ordered
  // before the shader by a barrier on the conversion stage; else by the host command.
  bool device_convert = false;
};

// InputInterpretation of one input value: float -> int rounds to nearest even and
// saturates, int -> int saturates, anything else is exact here.
inline double interpret(const Entry& e, double x) {
  if (!is_int_format(e.interp.f)) return x;
  double r = is_int_format(e.input.f) ? x : std::nearbyint(x);
  return std::min(std::max(r, int_lo(e.interp.f)), int_hi(e.interp.f));
}

// What a conversion to the stored matrix starts from: the logical M x K matrix `a` (A^T,
// K x M, when transposed) as dense row-major bytes, in the matrix's own format for
// integers and f32 for floats, and the conversion's info (no addresses or size yet).
struct Source {
  std::vector<uint8_t> bytes;
  VkConvertCooperativeVectorMatrixInfoNV info;
};
inline Source conversion_source(const Entry& e, const std::vector<double>& a, const Case& c) {
  const uint32_t rows = c.transpose ? c.k : c.m, cols = c.transpose ? c.m : c.k;
  const NF sf = is_int_format(e.matrix.f) ? e.matrix.f : NF::F32;
  const VkComponentTypeKHR st = is_int_format(e.matrix.f) ? e.p.matrixInterpretation : VK_COMPONENT_TYPE_FLOAT32_KHR;
  const size_t ssz = coopvk::kernels::format_size(sf);
  Source src{std::vector<uint8_t>(size_t(rows) * cols * ssz),
             convert_info(rows, cols, st, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV, cols * ssz,
                          e.p.matrixInterpretation, c.layout, 0)};
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t col = 0; col < cols; ++col)
      put(src.bytes, size_t(r) * cols + col, sf, c.transpose ? a[size_t(col) * c.k + r] : a[size_t(r) * c.k + col]);
  src.info.srcSize = src.bytes.size();
  return src;
}

// The stored matrix in c.layout as bytes (a multiple of 64: matrices sit at 64-byte
// aligned offsets, VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10097), how many of
// them the matrix itself takes, and its MatrixStride.
struct Stored {
  std::vector<uint8_t> bytes;
  size_t size = 0;
  uint32_t stride = 0;
};
inline Stored store(const Device& dev, const Entry& e, const std::vector<double>& a, const Case& c) {
  const uint32_t rows = c.transpose ? c.k : c.m, cols = c.transpose ? c.m : c.k;
  const NF f = e.matrix.f;
  const size_t esz = coopvk::kernels::format_size(f);
  Stored s;
  if (c.layout == VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV ||
      c.layout == VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_COLUMN_MAJOR_NV) {
    // Padded past the 16-byte multiple (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10096).
    const bool row = c.layout == VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV;
    s.stride = uint32_t(round_up((row ? cols : rows) * esz, 16) + 16);
    s.size = size_t(s.stride) * (row ? rows : cols);
    s.bytes.assign(round_up(s.size, 64), 0xEE);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t col = 0; col < cols; ++col)
        put(s.bytes, (row ? size_t(r) * s.stride + col * esz : size_t(col) * s.stride + r * esz) / esz, f,
            c.transpose ? a[size_t(col) * c.k + r] : a[size_t(r) * c.k + col]);
    return s;
  }
  // Optimal: converted by the driver.
  Source src = conversion_source(e, a, c);
  src.info.srcData.hostAddress = src.bytes.data();
  src.info.pDstSize = &s.size;
  auto convert = host_convert(dev);
  REQUIRE(convert(dev.device, &src.info) == VK_SUCCESS);  // the size query
  s.bytes.assign(round_up(s.size, 64), 0);
  src.info.dstData.hostAddress = s.bytes.data();
  REQUIRE(convert(dev.device, &src.info) == VK_SUCCESS);
  return s;
}

// Records, into cb, one vkCmdConvertCooperativeVectorMatrixNV making the two stored
// matrices of c at dst and dst + stride from row-major copies of a[0] and a[1] it puts in
// `sources` (a buffer it creates), then the barrier that makes them visible to a compute
// shader: the conversion stage's transfer writes before shader reads (Vulkan spec,
// VK_PIPELINE_STAGE_2_CONVERT_COOPERATIVE_VECTOR_MATRIX_BIT_NV and the access-mask rules
// VUID-...-03914/03915, which name that stage for TRANSFER_READ/WRITE).
inline void record_device_conversions(Device& dev, VkCommandBuffer cb, const Entry& e, const std::vector<double> a[2],
                                      const Case& c, VkDeviceAddress dst, size_t stride, size_t size, Buffer* sources) {
  Source src[2] = {conversion_source(e, a[0], c), conversion_source(e, a[1], c)};
  const size_t src_stride = round_up(src[0].bytes.size(), 64);
  *sources = dev.create_buffer(2 * src_stride, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
  VkBufferDeviceAddressInfo bai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  bai.buffer = sources->buffer;
  const VkDeviceAddress src_addr = vkGetBufferDeviceAddress(dev.device, &bai);
  // The sizes are read when recorded (*pDstSize must hold the destination's size).
  size_t sizes[2] = {size, size};
  VkConvertCooperativeVectorMatrixInfoNV infos[2];
  for (int s = 0; s < 2; ++s) {
    std::memcpy(static_cast<uint8_t*>(sources->mapped) + s * src_stride, src[s].bytes.data(), src[s].bytes.size());
    infos[s] = src[s].info;
    infos[s].srcData.deviceAddress = src_addr + s * src_stride;
    infos[s].dstData.deviceAddress = dst + s * stride;
    infos[s].pDstSize = &sizes[s];
  }
  auto cmd = reinterpret_cast<PFN_vkCmdConvertCooperativeVectorMatrixNV>(
      vkGetDeviceProcAddr(dev.device, "vkCmdConvertCooperativeVectorMatrixNV"));
  REQUIRE(cmd);
  cmd(cb, 2, infos);
  VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb.srcStageMask = VK_PIPELINE_STAGE_2_CONVERT_COOPERATIVE_VECTOR_MATRIX_BIT_NV;
  mb.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
  mb.dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
  mb.dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT;
  VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  di.memoryBarrierCount = 1;
  di.pMemoryBarriers = &mb;
  vkCmdPipelineBarrier2(cb, &di);
}

// Input, matrix and bias values for the entry's formats (see the header comment).
struct Ranges {
  int in_lo, in_hi, m_lo, m_hi;
  bool halves;  // float inputs read as integers: add .5 to some (ties to even)
};
inline Ranges ranges_of(const Entry& e) {
  if (!is_int_format(e.result.f)) {
    const int r = is_fp8(e.matrix.f) ? 4 : 8;
    return {-r, r, -r, r, false};
  }
  const int m_lo = int(int_lo(e.matrix.f)), m_hi = int(int_hi(e.matrix.f));
  if (!is_int_format(e.input.f)) return {-300, 300, m_lo, m_hi, true};  // past int8 both ways
  if (e.input.f == NF::I32) return {-1000, 1000, m_lo, m_hi, false};
  return {int(int_lo(e.interp.f)), int(int_hi(e.interp.f)), m_lo, m_hi, false};
}

inline void run_matvec(Device& dev, const Entry& e, const Case& c, uint32_t seed) {
  INFO(e.shader << " M " << c.m << " K " << c.k << " layout " << c.layout << (c.transpose ? " transposed" : "")
                << (c.bias ? " with bias" : " without bias") << " subgroup " << c.subgroup);
  const uint32_t M = c.m, K = c.k, invocations = kMatvecLocal * c.groups;
  const uint32_t in_len = e.interp.packed ? (K + 3) / 4 : K;
  const Ranges rg = ranges_of(e);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> in_dist(rg.in_lo, rg.in_hi), m_dist(rg.m_lo, rg.m_hi), small(-8, 8);
  // Two matrices and biases: odd invocations use the second (lane-varying offsets).
  std::vector<double> a[2], bias[2];
  Stored stored[2];
  for (int s = 0; s < 2; ++s) {
    a[s].resize(size_t(M) * K);
    for (double& x : a[s]) x = m_dist(rng);
    stored[s] = store(dev, e, a[s], c);
    bias[s].assign(M, 0.0);
    for (uint32_t m = 0; m < M; ++m) {
      if (!c.bias) continue;
      if (!is_int_format(e.bias.f)) bias[s][m] = small(rng);
      else if (m % 3 == 0) bias[s][m] = int_hi(e.bias.f) - small(rng) - 8;  // sums past the top wrap
      else bias[s][m] = e.bias.f == NF::U32 ? std::abs(small(rng)) * 1000 : small(rng) * 1000;
    }
  }
  REQUIRE(stored[0].bytes.size() == stored[1].bytes.size());
  const size_t mat_bytes = stored[0].bytes.size();
  std::vector<uint8_t> mat = stored[0].bytes;
  mat.insert(mat.end(), stored[1].bytes.begin(), stored[1].bytes.end());
  const bool optimal = c.layout >= VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV;
  const bool device_convert = c.device_convert && optimal;
  const std::vector<uint8_t> host_converted = mat;
  if (device_convert) std::fill(mat.begin(), mat.end(), uint8_t(0xCD));  // until the command writes it
  const size_t bsz = coopvk::kernels::format_size(e.bias.f), bias_bytes = round_up(M * bsz, 16);
  std::vector<uint8_t> bias_buf(2 * bias_bytes, 0xEE);
  for (int s = 0; s < 2; ++s)
    for (uint32_t m = 0; m < M && c.bias; ++m) put(bias_buf, s * bias_bytes / bsz + m, e.bias.f, bias[s][m]);
  // Inputs; packed ones are bytes, four to a 32-bit component (the rest of the last one
  // random: K values are read).
  const size_t in_esz = coopvk::kernels::format_size(e.input.f), in_stride = round_up(in_len * in_esz, 16);
  std::vector<uint8_t> in(invocations * in_stride);
  std::vector<std::vector<double>> x(invocations, std::vector<double>(K));
  for (uint32_t i = 0; i < invocations; ++i) {
    for (uint32_t k = 0; k < K; ++k) {
      double v = in_dist(rng);
      if (rg.halves && k % 3 == 1) v += 0.5;
      x[i][k] = v;
      if (e.interp.packed) in[i * in_stride + k] = uint8_t(int(v));
      else put(in, i * in_stride / in_esz + k, e.input.f, v);
    }
    for (uint32_t k = K; e.interp.packed && k < in_len * 4; ++k) in[i * in_stride + k] = uint8_t(rng());
  }
  const size_t rsz = coopvk::kernels::format_size(e.result.f), out_stride = round_up(M * rsz, 16);
  std::vector<uint8_t> out(invocations * out_stride, 0xAB);
  ComputeJob job;
  job.spirv = shader(e.shader);
  job.buffers = {&in, &mat, &bias_buf, &out};
  job.push = u32_bytes({uint32_t(in_stride), uint32_t(out_stride), stored[0].stride, uint32_t(mat_bytes), uint32_t(bias_bytes)});
  job.specialization = {spec(0, M), spec(1, K), spec(2, in_len), spec(3, uint32_t(c.layout)), spec(4, c.transpose),
                        spec(5, c.bias)};
  job.required_subgroup_size = c.subgroup;
  job.groups[0] = c.groups;
  Buffer sources{};
  if (device_convert)
    job.before_dispatch = [&](VkCommandBuffer cb, const std::vector<Buffer>& bufs) {
      VkBufferDeviceAddressInfo bai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
      bai.buffer = bufs[1].buffer;
      record_device_conversions(dev, cb, e, a, c, vkGetBufferDeviceAddress(dev.device, &bai), mat_bytes,
                                stored[0].size, &sources);
    };
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  if (device_convert) {
    dev.destroy_buffer(sources);
    // The command's matrices are the host command's, byte for byte; past them, nothing written.
    for (size_t s = 0; s < 2; ++s) {
      const size_t at = s * mat_bytes;
      INFO("matrix " << s);
      REQUIRE(std::equal(mat.begin() + at, mat.begin() + at + stored[0].size, host_converted.begin() + at));
      REQUIRE(std::all_of(mat.begin() + at + stored[0].size, mat.begin() + at + mat_bytes, [](uint8_t b) { return b == 0xCD; }));
    }
  }
  const std::vector<uint8_t> untouched(8, 0xAB);
  for (uint32_t i = 0; i < invocations; ++i) {
    const int s = i & 1;
    for (uint32_t m = 0; m < M; ++m) {
      const uint64_t got = get_bits(out, i * out_stride / rsz + m, e.result.f);
      if (i % 5 == 3) {  // inactive: untouched
        INFO("inactive invocation " << i << " component " << m);
        REQUIRE(got == get_bits(untouched, 0, e.result.f));
        continue;
      }
      double exact = bias[s][m];
      for (uint32_t k = 0; k < K; ++k) exact += a[s][size_t(m) * K + k] * interpret(e, x[i][k]);
      INFO("invocation " << i << " component " << m << " exact " << exact);
      REQUIRE(got == muladd_result(e.result.f, exact, false));
    }
  }
}

}  // namespace coopvk::test
