// vkConvertCooperativeVectorMatrixNV and vkCmdConvertCooperativeVectorMatrixNV, called
// directly on the driver: every valid-usage rule, with a scalar reference of its own
// (e2e_cooperative_vector_convert runs them through the loader, feeding shaders).
//
// Values are checked against a scalar fp16 rounding written here (independent of the
// kernels); the optimal layouts are implementation-defined, so they are checked by round
// trips and by the command form matching the host form byte for byte.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <coopvk/kernels/number_formats.h>

#include "coopvec_vk_info.h"
#include "direct_icd.h"

using coopvk::test::DirectIcd;

namespace {

// ---- independent scalar reference ---------------------------------------------------

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// fp32 -> fp16, round to nearest even, overflow to infinity (inputs here are never NaN).
uint16_t ref_f32_to_f16(float f) {
  const uint32_t x = bits_of(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const int exp = int((x >> 23) & 0xff);
  uint32_t man = x & 0x7fffff;
  if (exp == 0xff) return uint16_t(sign | 0x7c00);  // inf
  const int e = exp - 127 + 15;                      // biased fp16 exponent
  if (e >= 31) return uint16_t(sign | 0x7c00);       // >= 2^16 is past 65504 + half ulp
  if (e <= 0) {                                      // fp16 subnormal (or zero)
    if (exp == 0) return sign;                       // fp32 zero/subnormal: far below 2^-25
    man |= 0x800000;
    const int shift = 14 - e;                        // units of 2^-24
    if (shift > 24) return sign;                     // below half the smallest subnormal
    uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;  // may carry into the first normal
    return uint16_t(sign | q);
  }
  uint32_t q = (uint32_t(e) << 10) | (man >> 13);
  const uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;  // may carry up to infinity
  return uint16_t(sign | q);
}

float ref_f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  if (exp == 0x1f) return float_of(sign | 0x7f800000 | (man << 13));
  if (exp == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(float(man), -24);
  return float_of(sign | (uint32_t(exp - 15 + 127) << 23) | (man << 13));
}

// Values that exercise rounding: random magnitudes over the whole fp16 range, exact
// ties, subnormals, overflow, zeros of both signs.
std::vector<float> test_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mant(-2.0f, 2.0f);
  std::uniform_int_distribution<int> ex(-26, 16);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::ldexp(mant(rng), ex(rng));
  const float specials[] = {0.0f, -0.0f, 1.0f + std::ldexp(1.0f, -11),  // tie, rounds to even (1)
                            1.0f + 3 * std::ldexp(1.0f, -11),           // tie, rounds up
                            65504.0f, 65519.0f, 65520.0f, -1e9f, INFINITY, -INFINITY,
                            std::ldexp(1.0f, -24), std::ldexp(1.0f, -25), std::ldexp(3.0f, -26),
                            std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)};
  for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]) && i < n; ++i) v[i * 7 % n] = specials[i];
  return v;
}

// ---- the driver ----------------------------------------------------------------------

struct DeviceBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t* host = nullptr;
  VkDeviceAddress address = 0;
  size_t size = 0;
};

struct Driver {
  DirectIcd icd;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  PFN_vkConvertCooperativeVectorMatrixNV convert = nullptr;
  PFN_vkCmdConvertCooperativeVectorMatrixNV cmd_convert = nullptr;

  Driver() {
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueCount = 1;
    q.pQueuePriorities = &prio;
    VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &q;
    check(icd.get<PFN_vkCreateDevice>("vkCreateDevice")(icd.physical, &ci, nullptr, &device), "vkCreateDevice");
    icd.get<PFN_vkGetDeviceQueue>("vkGetDeviceQueue")(device, 0, 0, &queue);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    check(icd.get<PFN_vkCreateCommandPool>("vkCreateCommandPool")(device, &pci, nullptr, &pool),
          "vkCreateCommandPool");
    convert = icd.get<PFN_vkConvertCooperativeVectorMatrixNV>("vkConvertCooperativeVectorMatrixNV");
    cmd_convert = icd.get<PFN_vkCmdConvertCooperativeVectorMatrixNV>("vkCmdConvertCooperativeVectorMatrixNV");
  }
  ~Driver() {
    icd.get<PFN_vkDestroyCommandPool>("vkDestroyCommandPool")(device, pool, nullptr);
    icd.get<PFN_vkDestroyDevice>("vkDestroyDevice")(device, nullptr);
  }

  static void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(r));
  }

  DeviceBuffer create_buffer(size_t size) {
    DeviceBuffer b;
    b.size = size;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    check(icd.get<PFN_vkCreateBuffer>("vkCreateBuffer")(device, &bci, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    icd.get<PFN_vkGetBufferMemoryRequirements>("vkGetBufferMemoryRequirements")(device, b.buffer, &req);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = 0;  // coopvk's one host-visible, coherent type
    check(icd.get<PFN_vkAllocateMemory>("vkAllocateMemory")(device, &mai, nullptr, &b.memory), "vkAllocateMemory");
    check(icd.get<PFN_vkBindBufferMemory>("vkBindBufferMemory")(device, b.buffer, b.memory, 0),
          "vkBindBufferMemory");
    void* p = nullptr;
    check(icd.get<PFN_vkMapMemory>("vkMapMemory")(device, b.memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
    b.host = static_cast<uint8_t*>(p);
    VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, b.buffer};
    b.address = icd.get<PFN_vkGetBufferDeviceAddress>("vkGetBufferDeviceAddress")(device, &ai);
    return b;
  }
  void destroy_buffer(DeviceBuffer& b) {
    icd.get<PFN_vkDestroyBuffer>("vkDestroyBuffer")(device, b.buffer, nullptr);
    icd.get<PFN_vkFreeMemory>("vkFreeMemory")(device, b.memory, nullptr);
    b = {};
  }

  VkCommandBuffer begin() {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    check(icd.get<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers")(device, &ai, &cb),
          "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(icd.get<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer")(cb, &bi), "vkBeginCommandBuffer");
    return cb;
  }
  VkResult end(VkCommandBuffer cb) { return icd.get<PFN_vkEndCommandBuffer>("vkEndCommandBuffer")(cb); }
  void free(VkCommandBuffer cb) {
    icd.get<PFN_vkFreeCommandBuffers>("vkFreeCommandBuffers")(device, pool, 1, &cb);
  }
  void submit_and_wait(VkCommandBuffer cb) {
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    check(icd.get<PFN_vkCreateFence>("vkCreateFence")(device, &fci, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check(icd.get<PFN_vkQueueSubmit>("vkQueueSubmit")(queue, 1, &si, fence), "vkQueueSubmit");
    check(icd.get<PFN_vkWaitForFences>("vkWaitForFences")(device, 1, &fence, VK_TRUE, UINT64_MAX),
          "vkWaitForFences");
    icd.get<PFN_vkDestroyFence>("vkDestroyFence")(device, fence, nullptr);
  }
  // Records one vkCmdConvertCooperativeVectorMatrixNV into a fresh command buffer and
  // returns what vkEndCommandBuffer says.
  VkResult record_only(uint32_t count, const VkConvertCooperativeVectorMatrixInfoNV* infos) {
    VkCommandBuffer cb = begin();
    cmd_convert(cb, count, infos);
    VkResult r = end(cb);
    free(cb);
    return r;
  }
};

VkConvertCooperativeVectorMatrixInfoNV make_info(VkComponentTypeKHR st, VkCooperativeVectorMatrixLayoutNV sl,
                                                 size_t sstride, VkComponentTypeKHR dt,
                                                 VkCooperativeVectorMatrixLayoutNV dl, size_t dstride,
                                                 uint32_t rows, uint32_t cols) {
  return coopvk::test::convert_info(rows, cols, st, sl, sstride, dt, dl, dstride);
}

// Size of a matrix in a layout, by the size query.
size_t query_size(Driver& d, VkConvertCooperativeVectorMatrixInfoNV i) {
  size_t size = 0xdeadbeef;
  i.srcData.hostAddress = nullptr;
  i.dstData.hostAddress = nullptr;
  i.pDstSize = &size;
  REQUIRE(d.convert(d.device, &i) == VK_SUCCESS);
  return size;
}

bool all_bytes(const uint8_t* p, size_t n, uint8_t v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return false;
  return true;
}

constexpr auto F32 = VK_COMPONENT_TYPE_FLOAT32_KHR;
constexpr auto F16 = VK_COMPONENT_TYPE_FLOAT16_KHR;
constexpr auto E4M3 = VK_COMPONENT_TYPE_FLOAT_E4M3_NV;
constexpr auto ROW = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV;
constexpr auto COL = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_COLUMN_MAJOR_NV;
constexpr auto INFER = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV;
constexpr auto TRAIN = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_TRAINING_OPTIMAL_NV;

// A 37 x 23 matrix: neither dimension a multiple of any block or packing size.
constexpr uint32_t R = 37, C = 23;
constexpr size_t kRowStride = C * 4 + 12;  // fp32 row-major with a 12-byte gap per row

}  // namespace

// The reference above is the test's own; the kernels' scalar f32_to_f16 serves only as an
// oracle that the reference itself is right, on a sweep of every exponent.
TEST_CASE("the test's fp16 reference agrees with an independent one") {
  std::mt19937 rng(1);
  size_t checked = 0, wrong = 0;
  for (uint32_t exp = 0; exp < 255; ++exp)
    for (int k = 0; k < 2000; ++k) {
      const uint32_t man = (k < 4) ? (k == 0 ? 0u : k == 1 ? 0x1000u : k == 2 ? 0x3000u : 0x7fffffu)
                                   : uint32_t(rng()) & 0x7fffff;
      const float f = float_of((uint32_t(k & 1) << 31) | (exp << 23) | man);
      const uint16_t h = ref_f32_to_f16(f);
      if (h != coopvk::kernels::f32_to_f16(f) ||
          bits_of(ref_f16_to_f32(h)) != bits_of(coopvk::kernels::f16_to_f32(h))) {
        if (++wrong <= 5) UNSCOPED_INFO("bits " << std::hex << bits_of(f) << " -> ref " << h);
      }
      ++checked;
    }
  CHECK(checked == 255u * 2000u);
  CHECK(wrong == 0);
}

TEST_CASE("host: fp32 row-major -> fp16 inferencing-optimal -> fp32 column-major matches fp16 rounding") {
  Driver d;
  const std::vector<float> vals = test_values(R * C, 7);
  std::vector<uint8_t> src(size_t(R - 1) * kRowStride + C * 4, 0x77);
  for (uint32_t r = 0; r < R; ++r) std::memcpy(&src[r * kRowStride], &vals[r * C], C * 4);

  // Step 1: to fp16, optimal. The size comes from the size query, as the spec intends.
  auto to_opt = make_info(F32, ROW, kRowStride, F16, INFER, 0, R, C);
  const size_t opt_size = query_size(d, to_opt);
  REQUIRE(opt_size >= size_t(R) * C * 2);
  std::vector<uint8_t> opt(opt_size + 64, 0xEE);  // 64 canary bytes past the end
  size_t opt_written = opt_size;
  to_opt.srcSize = src.size();
  to_opt.srcData.hostAddress = src.data();
  to_opt.dstData.hostAddress = opt.data();
  to_opt.pDstSize = &opt_written;
  REQUIRE(d.convert(d.device, &to_opt) == VK_SUCCESS);
  CHECK(opt_written == opt_size);  // "overwritten with the number of bytes actually written"
  CHECK(all_bytes(opt.data() + opt_size, 64, 0xEE));

  // Step 2: back to fp32, column-major with a gap after each column.
  const size_t col_stride = R * 4 + 20;
  auto back = make_info(F16, INFER, 0, F32, COL, col_stride, R, C);
  const size_t back_size = query_size(d, back);
  CHECK(back_size == size_t(C - 1) * col_stride + R * 4);  // the standard layout's span
  std::vector<uint8_t> out(back_size, 0x5A);
  size_t out_written = out.size();
  back.srcSize = opt_size;
  back.srcData.hostAddress = opt.data();
  back.dstData.hostAddress = out.data();
  back.pDstSize = &out_written;
  REQUIRE(d.convert(d.device, &back) == VK_SUCCESS);
  CHECK(out_written == back_size);

  size_t mismatches = 0;
  for (uint32_t r = 0; r < R; ++r)
    for (uint32_t c = 0; c < C; ++c) {
      float got;
      std::memcpy(&got, &out[c * col_stride + r * 4], 4);
      const float want = ref_f16_to_f32(ref_f32_to_f16(vals[r * C + c]));
      if (bits_of(got) != bits_of(want)) {
        if (++mismatches <= 5)
          UNSCOPED_INFO("(" << r << "," << c << ") in " << vals[r * C + c] << " got " << got << " want " << want);
      }
    }
  CHECK(mismatches == 0);
  // The gap bytes between columns are not part of the matrix and stay as they were.
  for (uint32_t c = 0; c + 1 < C; ++c) CHECK(all_bytes(&out[c * col_stride + R * 4], 20, 0x5A));
}

TEST_CASE("host: the size query needs no source and writes nothing but *pDstSize") {
  Driver d;
  auto info = make_info(F32, ROW, C * 4, F16, ROW, C * 2 + 6, R, C);
  CHECK(query_size(d, info) == size_t(R - 1) * (C * 2 + 6) + C * 2);
  info = make_info(F32, ROW, C * 4, F32, COL, R * 4, R, C);
  CHECK(query_size(d, info) == size_t(R) * C * 4);
  // The destination size depends only on the destination ("does not depend on the
  // source layout information").
  const size_t a = query_size(d, make_info(F32, ROW, C * 4, F16, INFER, 0, R, C));
  const size_t b = query_size(d, make_info(F16, COL, R * 2 + 2, F16, INFER, 0, R, C));
  CHECK(a == b);
  CHECK(a >= size_t(R) * C * 2);
}

TEST_CASE("host: a destination too small gives VK_INCOMPLETE and is left untouched") {
  Driver d;
  std::vector<float> src = test_values(R * C, 3);
  auto info = make_info(F32, ROW, C * 4, F16, INFER, 0, R, C);
  const size_t need = query_size(d, info);
  std::vector<uint8_t> dst(need, 0xCD);
  size_t size = need - 1;
  info.srcSize = src.size() * 4;
  info.srcData.hostAddress = src.data();
  info.dstData.hostAddress = dst.data();
  info.pDstSize = &size;
  CHECK(d.convert(d.device, &info) == VK_INCOMPLETE);
  CHECK(all_bytes(dst.data(), dst.size(), 0xCD));
  CHECK(size == 0);  // the number of bytes actually written
  size = need;
  CHECK(d.convert(d.device, &info) == VK_SUCCESS);
  CHECK_FALSE(all_bytes(dst.data(), dst.size(), 0xCD));
}

TEST_CASE("host: invalid input fails with VK_ERROR_VALIDATION_FAILED and writes nothing") {
  Driver d;
  std::vector<float> src = test_values(R * C, 5);
  std::vector<uint8_t> dst(1 << 16, 0xCD);
  size_t size = 0;
  auto good = make_info(F32, ROW, C * 4, F16, INFER, 0, R, C);
  good.srcSize = src.size() * 4;
  good.srcData.hostAddress = src.data();
  good.dstData.hostAddress = dst.data();
  good.pDstSize = &size;

  auto expect_rejected = [&](VkConvertCooperativeVectorMatrixInfoNV info, const char* what) {
    INFO(what);
    size = dst.size();
    CHECK(d.convert(d.device, &info) == VK_ERROR_VALIDATION_FAILED_EXT);
    CHECK(size == dst.size());  // *pDstSize untouched
    CHECK(all_bytes(dst.data(), dst.size(), 0xCD));
  };

  // The good info works (so the failures below are the changed field's doing) -- but
  // on a scratch copy, so that dst stays pristine.
  {
    std::vector<uint8_t> scratch(dst.size());
    auto g = good;
    g.dstData.hostAddress = scratch.data();
    size = scratch.size();
    REQUIRE(d.convert(d.device, &g) == VK_SUCCESS);
  }

  CHECK(d.convert(d.device, nullptr) == VK_ERROR_VALIDATION_FAILED_EXT);
  auto i = good;
  i.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  expect_rejected(i, "wrong sType");
  i = good;
  i.pDstSize = nullptr;
  CHECK(d.convert(d.device, &i) == VK_ERROR_VALIDATION_FAILED_EXT);
  CHECK(all_bytes(dst.data(), dst.size(), 0xCD));
  i = good;
  i.srcComponentType = VK_COMPONENT_TYPE_SINT8_KHR;  // int8 -> fp16: VUID-10081
  expect_rejected(i, "unsupported type pair sint8 -> fp16");
  i = good;
  i.dstComponentType = VK_COMPONENT_TYPE_SINT32_KHR;
  expect_rejected(i, "sint32 is not a matrix element type");
  i = good;
  i.dstComponentType = VK_COMPONENT_TYPE_UINT8_PACKED_NV;
  expect_rejected(i, "packed types are input interpretations only");
  i = good;
  i.dstComponentType = E4M3;
  i.dstLayout = ROW;
  i.dstStride = C;
  expect_rejected(i, "fp8 into row-major: VUID-10082");
  i = good;
  i.srcStride = C * 4 - 4;
  expect_rejected(i, "source stride shorter than a row: VUID-10077");
  i = good;
  i.srcStride = C * 4 + 2;
  expect_rejected(i, "source stride not a multiple of the element size: VUID-10077");
  i = good;
  i.dstLayout = COL;
  i.dstStride = R * 2 - 2;
  expect_rejected(i, "destination stride shorter than a column: VUID-10078");
  i = good;
  i.srcLayout = VkCooperativeVectorMatrixLayoutNV(7);
  expect_rejected(i, "layout value out of range");
  i = good;
  i.srcSize = src.size() * 4 - 1;
  expect_rejected(i, "srcSize too small: VUID-10074");
  i = good;
  i.srcData.hostAddress = nullptr;
  expect_rejected(i, "srcData NULL with dstData not NULL: VUID-10073");
  i = good;
  i.numRows = 0;
  expect_rejected(i, "zero rows");
  // Overlap (VUID-10076): convert in place inside the canary buffer.
  i = good;
  std::memcpy(dst.data(), src.data(), src.size() * 4);
  i.srcData.hostAddress = dst.data();
  i.dstData.hostAddress = dst.data() + 64;
  std::vector<uint8_t> before = dst;
  size = dst.size() - 64;
  CHECK(d.convert(d.device, &i) == VK_ERROR_VALIDATION_FAILED_EXT);
  CHECK(dst == before);
}

TEST_CASE("host: only FLOAT32 and reported matrixInterpretation types convert (VUID-10079/10080)") {
  Driver d;
  auto props = d.icd.get<PFN_vkGetPhysicalDeviceCooperativeVectorPropertiesNV>(
      "vkGetPhysicalDeviceCooperativeVectorPropertiesNV");
  uint32_t n = 0;
  REQUIRE(props(d.icd.physical, &n, nullptr) == VK_SUCCESS);
  std::vector<VkCooperativeVectorPropertiesNV> list(n, {VK_STRUCTURE_TYPE_COOPERATIVE_VECTOR_PROPERTIES_NV});
  REQUIRE(props(d.icd.physical, &n, list.data()) == VK_SUCCESS);
  auto reported = [&](VkComponentTypeKHR t) {
    for (const auto& p : list)
      if (p.matrixInterpretation == t) return true;
    return false;
  };
  std::vector<float> src = test_values(R * C, 9);
  std::vector<uint8_t> dst(1 << 14, 0xCD);
  // F32 -> T (a narrowing float pair, 10081) and T -> T (a layout change, always a valid
  // pair) for the float types a matrix can hold: each converts exactly when T is reported.
  const VkComponentTypeKHR floats[] = {F16, VK_COMPONENT_TYPE_BFLOAT16_KHR, E4M3,
                                       VK_COMPONENT_TYPE_FLOAT_E5M2_NV};
  for (VkComponentTypeKHR t : floats) {
    INFO("component type " << t << (reported(t) ? " (reported)" : " (not reported)"));
    auto info = make_info(F32, ROW, C * 4, t, INFER, 0, R, C);
    size_t size = dst.size();
    info.srcSize = src.size() * 4;
    info.srcData.hostAddress = src.data();
    info.dstData.hostAddress = dst.data();
    info.pDstSize = &size;
    const VkResult r = d.convert(d.device, &info);
    CHECK(r == (reported(t) ? VK_SUCCESS : VK_ERROR_VALIDATION_FAILED_EXT));
    if (r != VK_SUCCESS) CHECK(all_bytes(dst.data(), dst.size(), 0xCD));
    std::memset(dst.data(), 0xCD, dst.size());
  }
  // SINT8 -> SINT8 (same type, layout change only) exactly when SINT8 is reported; UINT8
  // likewise. The source bytes are any int8 values.
  for (VkComponentTypeKHR t : {VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_UINT8_KHR}) {
    INFO("component type " << t << (reported(t) ? " (reported)" : " (not reported)"));
    std::vector<uint8_t> bytes(size_t(R) * C, 0x42);
    auto info = make_info(t, ROW, C, t, INFER, 0, R, C);
    size_t size = dst.size();
    info.srcSize = bytes.size();
    info.srcData.hostAddress = bytes.data();
    info.dstData.hostAddress = dst.data();
    info.pDstSize = &size;
    const VkResult r = d.convert(d.device, &info);
    CHECK(r == (reported(t) ? VK_SUCCESS : VK_ERROR_VALIDATION_FAILED_EXT));
    if (r != VK_SUCCESS) CHECK(all_bytes(dst.data(), dst.size(), 0xCD));
    std::memset(dst.data(), 0xCD, dst.size());
  }
  // The required combinations of VkCooperativeVectorPropertiesNV make these reported.
  CHECK(reported(F16));
  CHECK(reported(VK_COMPONENT_TYPE_SINT8_KHR));
}

TEST_CASE("command: several conversions on device addresses equal the host conversions byte for byte") {
  Driver d;
  // Two sources: fp32 row-major (strided) and fp16 column-major.
  const std::vector<float> vals = test_values(R * C, 11);
  std::vector<uint8_t> src0(size_t(R - 1) * kRowStride + C * 4, 0x11);
  for (uint32_t r = 0; r < R; ++r) std::memcpy(&src0[r * kRowStride], &vals[r * C], C * 4);
  std::vector<uint8_t> src1(size_t(R) * C * 2);
  for (uint32_t c = 0; c < C; ++c)
    for (uint32_t r = 0; r < R; ++r) {
      const uint16_t h = ref_f32_to_f16(vals[(r * 5 + c) % (R * C)]);
      std::memcpy(&src1[(c * R + r) * 2], &h, 2);
    }

  // Four conversions; info 0 and 1 read the same source (allowed: sources only read).
  std::vector<VkConvertCooperativeVectorMatrixInfoNV> infos = {
      make_info(F32, ROW, kRowStride, F16, INFER, 0, R, C),
      make_info(F32, ROW, kRowStride, F16, ROW, C * 2 + 10, R, C),
      make_info(F16, COL, R * 2, F32, TRAIN, 0, R, C),
      make_info(F32, ROW, kRowStride, E4M3, INFER, 0, R, C),
  };
  const std::vector<uint8_t>* srcs[] = {&src0, &src0, &src1, &src0};

  // Lay everything out in one buffer at 64-byte aligned offsets.
  auto align64 = [](size_t x) { return (x + 63) & ~size_t(63); };
  std::vector<size_t> src_off, dst_off, dst_size;
  size_t total = 0;
  const size_t s0 = total;
  total = align64(total + src0.size());
  const size_t s1 = total;
  total = align64(total + src1.size());
  for (size_t k = 0; k < infos.size(); ++k) {
    dst_size.push_back(query_size(d, infos[k]));
    dst_off.push_back(total);
    total = align64(total + dst_size[k]) + 64;  // 64 canary bytes between destinations
    src_off.push_back(srcs[k] == &src0 ? s0 : s1);
  }
  DeviceBuffer buf = d.create_buffer(total);
  REQUIRE(buf.address % 64 == 0);
  std::memset(buf.host, 0xA5, total);
  std::memcpy(buf.host + s0, src0.data(), src0.size());
  std::memcpy(buf.host + s1, src1.data(), src1.size());

  std::vector<size_t> dst_sizes = dst_size;  // the command reads these at record time
  std::vector<VkConvertCooperativeVectorMatrixInfoNV> cmd = infos;
  for (size_t k = 0; k < cmd.size(); ++k) {
    cmd[k].srcSize = srcs[k]->size();
    cmd[k].srcData.deviceAddress = buf.address + src_off[k];
    cmd[k].dstData.deviceAddress = buf.address + dst_off[k];
    cmd[k].pDstSize = &dst_sizes[k];
  }
  VkCommandBuffer cb = d.begin();
  d.cmd_convert(cb, uint32_t(cmd.size()), cmd.data());
  // Recording must not have run the conversion.
  CHECK(all_bytes(buf.host + dst_off[0], dst_size[0], 0xA5));
  // The application owns pInfos and *pDstSize again once the call returned.
  for (auto& c : cmd) c = {};
  for (auto& s : dst_sizes) s = 0;
  REQUIRE(d.end(cb) == VK_SUCCESS);
  d.submit_and_wait(cb);
  d.free(cb);
  for (size_t s : dst_sizes) CHECK(s == 0);  // the command form never writes *pDstSize

  for (size_t k = 0; k < infos.size(); ++k) {
    INFO("conversion " << k);
    std::vector<uint8_t> host(dst_size[k], 0xA5);
    size_t n = host.size();
    auto h = infos[k];
    h.srcSize = srcs[k]->size();
    h.srcData.hostAddress = srcs[k]->data();
    h.dstData.hostAddress = host.data();
    h.pDstSize = &n;
    REQUIRE(d.convert(d.device, &h) == VK_SUCCESS);
    CHECK(std::memcmp(buf.host + dst_off[k], host.data(), host.size()) == 0);
    CHECK(all_bytes(buf.host + dst_off[k] + dst_size[k], align64(dst_size[k]) - dst_size[k] + 64, 0xA5));
  }
  // The fp16 row-major result, element by element against the scalar reference.
  for (uint32_t r = 0; r < R; ++r)
    for (uint32_t c = 0; c < C; ++c) {
      uint16_t got;
      std::memcpy(&got, buf.host + dst_off[1] + r * (C * 2 + 10) + c * 2, 2);
      REQUIRE(got == ref_f32_to_f16(vals[r * C + c]));
    }
  // The sources were only read.
  CHECK(std::memcmp(buf.host + s0, src0.data(), src0.size()) == 0);
  CHECK(std::memcmp(buf.host + s1, src1.data(), src1.size()) == 0);
  d.destroy_buffer(buf);
}

TEST_CASE("command: invalid input makes vkEndCommandBuffer fail and nothing is written") {
  Driver d;
  const size_t src_bytes = size_t(R) * C * 4;
  auto base = make_info(F32, ROW, C * 4, F16, INFER, 0, R, C);
  const size_t need = query_size(d, base);
  DeviceBuffer buf = d.create_buffer(8192 + 2 * 4096);
  REQUIRE(src_bytes <= 4096);
  REQUIRE(need <= 4096);
  std::memset(buf.host, 0xCD, buf.size);
  size_t size = need;
  base.srcSize = src_bytes;
  base.srcData.deviceAddress = buf.address;
  base.dstData.deviceAddress = buf.address + 4096;
  base.pDstSize = &size;
  // Baseline: the good info records fine (and is never submitted).
  REQUIRE(d.record_only(1, &base) == VK_SUCCESS);

  auto expect_rejected = [&](std::vector<VkConvertCooperativeVectorMatrixInfoNV> infos, const char* what) {
    INFO(what);
    CHECK(d.record_only(uint32_t(infos.size()), infos.data()) == VK_ERROR_VALIDATION_FAILED_EXT);
    CHECK(size == need);
  };
  auto i = base;
  i.srcData.deviceAddress += 16;
  expect_rejected({i}, "source address not 64-byte aligned: VUID-10084");
  i = base;
  i.dstData.deviceAddress += 32;
  expect_rejected({i}, "destination address not 64-byte aligned: VUID-10085");
  i = base;
  i.dstData.deviceAddress = 0;
  expect_rejected({i}, "null destination address: VUID-10895");
  i = base;
  i.srcSize = src_bytes - 4;
  expect_rejected({i}, "srcSize too small: VUID-10086");
  i = base;
  size_t small = need - 1;
  i.pDstSize = &small;
  expect_rejected({i}, "*pDstSize too small: VUID-10087 (no VK_INCOMPLETE here)");
  i = base;
  i.pDstSize = nullptr;
  expect_rejected({i}, "null pDstSize");
  i = base;
  i.srcComponentType = VK_COMPONENT_TYPE_UINT8_KHR;
  expect_rejected({i}, "unsupported type pair uint8 -> fp16");
  i = base;
  i.srcStride = C * 4 + 1;
  expect_rejected({i}, "bad source stride");
  i = base;
  i.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  expect_rejected({i}, "wrong sType");
  expect_rejected({}, "infoCount 0");
  {
    VkCommandBuffer cb = d.begin();
    d.cmd_convert(cb, 1, nullptr);
    CHECK(d.end(cb) == VK_ERROR_VALIDATION_FAILED_EXT);
    d.free(cb);
  }
  // Overlaps across conversions (VUID-10088).
  auto j = base;
  j.srcData.deviceAddress = buf.address + 4096 + 1024;  // inside info 0's destination
  j.dstData.deviceAddress = buf.address + 8192 + 4096;
  expect_rejected({base, j}, "a source overlaps another conversion's destination");
  j = base;
  j.srcData.deviceAddress = buf.address + 8192;
  j.dstData.deviceAddress = buf.address + 4096 + 64 * (need / 128);  // inside info 0's destination
  expect_rejected({base, j}, "two destinations overlap");
  i = base;
  i.dstData.deviceAddress = buf.address + 64 * (src_bytes / 128);
  expect_rejected({i}, "a destination overlaps its own source");
  // One bad info among good ones spoils the whole command.
  i = base;
  i.dstData.deviceAddress = buf.address + 8192;
  j = base;
  j.dstData.deviceAddress = buf.address + 8192 + 4096 + 8;
  expect_rejected({i, j}, "second of two infos misaligned");
  // ... while distinct destinations reading one source are fine.
  j.dstData.deviceAddress = buf.address + 8192 + 4096;
  CHECK(d.record_only(2, std::vector{i, j}.data()) == VK_SUCCESS);

  // None of the failed recordings ran or wrote anything (the good ones were never submitted).
  CHECK(all_bytes(buf.host, buf.size, 0xCD));
  d.destroy_buffer(buf);
}
