// VK_NV_cooperative_matrix2's tensor addressing through the loader: tensor_sg / tensor_wg
// (tensor_body.glsl) load a 16x16 f32 matrix through 2D and 3D tensor layouts, slices,
// every clamp mode, transposing and clipping views, explicit strides and a block size,
// and store through a clamping layout and a transposing view, at subgroup scope and at
// workgroup scope (several subgroups sharing the matrix). Each element is compared with
// what the SPIR-V text's addressing rules give, written out case by case here.
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "compute_job.h"
#include "coopmat_test_env.h"
#include "e2e_shader_env.h"
#include "coopvk/kernels/number_formats.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

struct TensorDevice : Nv2MatrixDevice {
  explicit TensorDevice(bool tensor_addressing = true) {
    nv2.cooperativeMatrixWorkgroupScope = nv2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
    nv2.cooperativeMatrixTensorAddressing = nv2.cooperativeMatrixBlockLoads = tensor_addressing ? VK_TRUE : VK_FALSE;
  }
};

std::vector<uint8_t> floats(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
float at(const std::vector<uint8_t>& b, size_t i) {
  float f;
  std::memcpy(&f, &b[4 * i], 4);
  return f;
}
int64_t pmod(int64_t x, int64_t d) { return ((x % d) + d) % d; }
int64_t mirror(int64_t x, int64_t d) {
  x = pmod(x, 2 * d - 2);
  return x >= d ? 2 * d - 2 - x : x;
}
int64_t clamp_to(int64_t x, int64_t d) { return x < 0 ? 0 : x >= d ? d - 1 : x; }

void run(Device& dev, const char* shader_name, uint32_t invocations) {
  INFO(shader_name << " with " << invocations << " invocations");
  std::vector<float> src(2048);
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(i);
  std::vector<uint8_t> S = floats(src), O(10 * 256 * 4, 0xCD), D = floats(std::vector<float>(960, -1.0f)),
                       E = floats(std::vector<float>(960, -1.0f));
  ComputeJob job;
  job.spirv = shader(shader_name);
  job.specialization = {spec(0, invocations)};
  job.buffers = {&S, &O, &D, &E};
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  uint32_t bad = 0;
  auto expect = [&](const char* what, const std::vector<uint8_t>& b, size_t i, double want) {
    if (at(b, i) == float(want)) return;
    if (bad++ < 10) UNSCOPED_INFO(what << "[" << i << "] = " << at(b, i) << ", expected " << want);
  };
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 16; ++c) {
      const size_t e = size_t(r * 16 + c);
      const auto s = [&](int64_t i, int64_t j) { return src[size_t(i * 24 + j)]; };
      expect("slice", O, e, s(5 + r, 3 + c));
      const bool in = 30 + r < 40 && 14 + c < 24;
      expect("Constant", O, 256 + e, in ? s(30 + r, 14 + c) : 7.5);
      expect("ClampToEdge", O, 2 * 256 + e, s(clamp_to(-3 + r, 40), clamp_to(20 + c, 24)));
      expect("Repeat", O, 3 * 256 + e, s(pmod(35 + r, 40), pmod(-5 + c, 24)));
      expect("RepeatMirrored", O, 4 * 256 + e, s(mirror(36 + r, 40), mirror(18 + c, 24)));
      expect("transposing view", O, 5 * 256 + e, s(5 + c, 3 + r));
      expect("3D layout", O, 6 * 256 + e, src[size_t(320 + (2 + r) * 16 + c)]);
      // Clip rows [2, 10) and columns [4, 12): those elements are numbered row-major
      // within the 8-wide clip region, the rest keep the Object's 100.
      double clipped = 100.0;
      if (r >= 2 && r < 10 && c >= 4 && c < 12) {
        const int64_t idx = (r - 2) * 8 + (c - 4);
        clipped = s(5 + idx / 16, 3 + idx % 16);
      }
      expect("clipping view", O, 7 * 256 + e, clipped);
      expect("strides", O, 8 * 256 + e, src[size_t((5 + r) * 48 + (3 + c) * 2)]);
      expect("block size", O, 9 * 256 + e, src[size_t((5 + r) * 24 + (3 + c) / 2)]);
    }
  // Stores: the in-bounds part of a slice at (30, 16) of a 40 x 24 Constant layout, and the
  // matrix transposed into (0, 0).
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 24; ++j) {
      const size_t e = size_t(i * 24 + j);
      const bool mine = i >= 30 && j >= 16;
      expect("clamped store", D, e, mine ? src[size_t((5 + i - 30) * 24 + 3 + j - 16)] : -1.0);
      const bool t = i < 16 && j < 16;
      expect("transposed store", E, e, t ? src[size_t((5 + j) * 24 + 3 + i)] : -1.0);
    }
  CHECK(bad == 0);
}

// decode_sg / decode_wg: blocks of an f16 scale and 32 int8 values, 4 a row, 16 rows.
void run_decode(Device& dev, const char* shader_name, uint32_t invocations) {
  INFO(shader_name << " with " << invocations << " invocations");
  constexpr uint32_t kBlock = 34;
  std::vector<uint8_t> Q(16 * 4 * kBlock);
  std::vector<float> scale(64);
  std::vector<int8_t> q(64 * 32);
  for (uint32_t b = 0; b < 64; ++b) {
    scale[b] = float(int(b % 5) - 2) * 0.5f + 0.25f;  // exact in f16
    const uint16_t h = coopvk::kernels::f32_to_f16(scale[b]);
    std::memcpy(&Q[b * kBlock], &h, 2);
    for (uint32_t i = 0; i < 32; ++i) {
      q[b * 32 + i] = int8_t(int(b * 7 + i * 3) % 17 - 8);
      Q[b * kBlock + 2 + i] = uint8_t(q[b * 32 + i]);
    }
  }
  std::vector<uint8_t> O(2 * 16 * 64 * 4, 0xCD);
  ComputeJob job;
  job.spirv = shader(shader_name);
  job.specialization = {spec(0, invocations)};
  job.buffers = {&Q, &O};
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  uint32_t bad = 0;
  auto expect = [&](const char* what, size_t i, double want) {
    if (at(O, i) == float(want)) return;
    if (bad++ < 10) UNSCOPED_INFO(what << "[" << i << "] = " << at(O, i) << ", expected " << want);
  };
  // Tensor element (i, j) is int8 j % 32 of block (i, j / 32), that block at index i * 4 + j / 32;
  // the decode function adds 1000 x block row + 100 x block column.
  auto decoded = [&](uint32_t i, uint32_t j) {
    const uint32_t b = i * 4 + j / 32;
    return double(q[b * 32 + j % 32]) * scale[b] + i * 1000.0 + (j / 32) * 100.0;
  };
  for (uint32_t r = 0; r < 16; ++r)
    for (uint32_t c = 0; c < 64; ++c) {
      expect("decoded", r * 64 + c, decoded(r, 32 + c));
      // Slice at (8, 96): rows past 15 and columns past 127 are out of bounds.
      const uint32_t i = 8 + r, j = 96 + c;
      expect("decoded, clamped", 1024 + r * 64 + c, i < 16 && j < 128 ? decoded(i, j) : -2.5);
    }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("block loads: a decode function on tensor loads, at subgroup and workgroup scope") {
  TensorDevice td;
  Device dev(td.md.opts);
  VkPhysicalDeviceSubgroupProperties sp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 pp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sp};
  vkGetPhysicalDeviceProperties2(dev.inst.physical, &pp);
  run_decode(dev, "decode_sg", sp.subgroupSize);
  for (uint32_t w = std::max(64u, sp.subgroupSize); w <= 256; w *= 2) run_decode(dev, "decode_wg", w);
}

TEST_CASE("tensor-addressed loads and stores follow the addressing rules at subgroup and workgroup scope") {
  TensorDevice td;
  Device dev(td.md.opts);
  VkPhysicalDeviceSubgroupProperties sp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 pp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sp};
  vkGetPhysicalDeviceProperties2(dev.inst.physical, &pp);
  run(dev, "tensor_sg", sp.subgroupSize);
  for (uint32_t w = std::max(64u, sp.subgroupSize); w <= 256; w *= 2) run(dev, "tensor_wg", w);
}

TEST_CASE("tensor addressing without its feature fails pipeline creation") {
  TensorDevice td(false);
  Device dev(td.md.opts);
  std::vector<uint8_t> buf(1 << 14);
  ComputeJob job;
  job.spirv = shader("tensor_sg");
  job.specialization = {spec(0, 32)};
  job.buffers = {&buf, &buf, &buf, &buf};
  CHECK(run_compute_job(dev, job) != VK_SUCCESS);
}
