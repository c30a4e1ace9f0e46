// The conversion commands of VK_NV_cooperative_vector through the loader:
// vkConvertCooperativeVectorMatrixNV between every pair of layouts for every component
// type pair the properties allow (VUID-VkConvertCooperativeVectorMatrixInfoNV-
// srcComponentType-10079/10080/10081); vkCmdConvertCooperativeVectorMatrixNV on device
// addresses, two conversions in one command, a barrier on
// VK_PIPELINE_STAGE_2_CONVERT_COOPERATIVE_VECTOR_MATRIX_BIT_NV, then a dispatch that
// multiplies with what it wrote (coopvec_matvec.h); and bad arguments: a clear VkResult,
// nothing written.
//
// Values are small integers, exact in every type, so a conversion chain ends at exactly
// the values it started from; row- and column-major bytes are written and read here.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "coopvec_matvec.h"
#include "coopvec_test_env.h"

using namespace coopvk::test;

namespace {

using Layout = VkCooperativeVectorMatrixLayoutNV;
constexpr Layout kRow = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV, kCol = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_COLUMN_MAJOR_NV;
constexpr Layout kLayouts[] = {kRow, kCol, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV,
                               VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_TRAINING_OPTIMAL_NV};
bool strided(Layout l) { return l == kRow || l == kCol; }

// A matrix of `rows` x `cols` values in one type and layout. Strided layouts get a
// padded stride whose gap bytes a conversion must never write.
struct Matrix {
  VkComponentTypeKHR type;
  NumberFormat f;
  Layout layout;
  size_t stride;
  std::vector<uint8_t> bytes;
};

// Where element (r, c) of a strided matrix is.
size_t element_offset(const Matrix& m, uint32_t r, uint32_t c) {
  const size_t esz = coopvk::kernels::format_size(m.f);
  return m.layout == kRow ? r * m.stride + c * esz : c * m.stride + r * esz;
}

size_t strided_stride(NumberFormat f, Layout l, uint32_t rows, uint32_t cols) {
  if (!strided(l)) return 0;
  return round_up((l == kRow ? cols : rows) * coopvk::kernels::format_size(f), 16) + 16;
}

// Converts src into a new matrix of type/layout (dst bytes prefilled with 0xCD).
VkResult convert(const Device& dev, const Matrix& src, uint32_t rows, uint32_t cols, VkComponentTypeKHR type,
                 NumberFormat f, Layout layout, Matrix* out) {
  out->type = type;
  out->f = f;
  out->layout = layout;
  out->stride = strided_stride(f, layout, rows, cols);
  auto info = convert_info(rows, cols, src.type, src.layout, src.stride, type, layout, out->stride);
  info.srcSize = src.bytes.size();
  info.srcData.hostAddress = src.bytes.data();
  size_t size = 0;
  info.pDstSize = &size;
  if (VkResult r = host_convert(dev)(dev.device, &info); r != VK_SUCCESS) return r;
  out->bytes.assign(size + 64, 0xCD);  // 64 bytes past the end: never written
  info.dstData.hostAddress = out->bytes.data();
  size_t capacity = out->bytes.size();
  info.pDstSize = &capacity;
  VkResult r = host_convert(dev)(dev.device, &info);
  if (r == VK_SUCCESS) {
    CHECK(capacity == size);
    CHECK(std::all_of(out->bytes.begin() + size, out->bytes.end(), [](uint8_t b) { return b == 0xCD; }));
  }
  return r;
}

// Whether the spec lets s convert to d (VUID-VkConvertCooperativeVectorMatrixInfoNV-
// srcComponentType-10081): the same type, or FLOAT32/FLOAT16 and a lower-precision float.
bool pair_allowed(NumberFormat s, NumberFormat d) {
  if (s == d) return true;
  auto precision = [](NumberFormat f) {
    switch (f) {
      case NumberFormat::F32: return 4;
      case NumberFormat::F16: return 3;
      case NumberFormat::E4M3: return 2;
      case NumberFormat::E5M2: return 1;
      default: return 0;
    }
  };
  const int ps = precision(s), pd = precision(d);
  if (!ps || !pd) return false;
  return (ps >= 3 && pd < ps) || (pd >= 3 && ps < pd);
}

}  // namespace

TEST_CASE("vkConvertCooperativeVectorMatrixNV converts every allowed type pair between every pair of layouts") {
  VectorDevice vd;
  Device dev(vd.opts);
  // FLOAT32 and every reported matrixInterpretation (VUID-...-10079/10080).
  std::set<VkComponentTypeKHR> types = {VK_COMPONENT_TYPE_FLOAT32_KHR};
  for (const auto& p : vector_properties(dev.inst)) types.insert(p.matrixInterpretation);
  REQUIRE(types.size() >= 5);
  const uint32_t rows = 19, cols = 37;  // odd sizes: the optimal layouts pad both
  size_t pairs = 0;
  for (VkComponentTypeKHR st : types)
    for (VkComponentTypeKHR dt : types) {
      VecType s, d;
      REQUIRE(vec_type(st, &s));
      REQUIRE(vec_type(dt, &d));
      if (!pair_allowed(s.f, d.f)) continue;
      ++pairs;
      // Values every type of the pair holds exactly.
      const bool ints = is_int_format(s.f);
      const int lo = ints ? int(std::max(int_lo(s.f), int_lo(d.f))) : -4, hi = ints ? int(std::min(int_hi(s.f), int_hi(d.f))) : 4;
      std::vector<double> v(size_t(rows) * cols);
      for (size_t k = 0; k < v.size(); ++k) v[k] = lo + int(k * 7 % size_t(hi - lo + 1));
      for (Layout sl : kLayouts)
        for (Layout dl : kLayouts) {
          INFO(s.tag << " " << sl << " -> " << d.tag << " " << dl);
          // float8 only in the optimal layouts (VUID-VkConvertCooperativeVectorMatrixInfoNV-srcLayout-10082).
          const bool fp8_strided = (is_fp8(s.f) && strided(sl)) || (is_fp8(d.f) && strided(dl));
          // The source: written here when strided, else converted from row-major.
          Matrix src{st, s.f, kRow, strided_stride(s.f, kRow, rows, cols), {}};
          src.bytes.assign(src.stride * rows, 0xEE);
          for (uint32_t r = 0; r < rows; ++r)
            for (uint32_t c = 0; c < cols; ++c) put(src.bytes, element_offset(src, r, c) / coopvk::kernels::format_size(s.f), s.f, v[r * cols + c]);
          if (is_fp8(s.f)) {
            // An fp8 source starts from f32 (row-major fp8 is no valid layout).
            Matrix f32{VK_COMPONENT_TYPE_FLOAT32_KHR, NumberFormat::F32, kRow, cols * 4, std::vector<uint8_t>(rows * cols * 4)};
            for (size_t k = 0; k < v.size(); ++k) put(f32.bytes, k, NumberFormat::F32, v[k]);
            if (strided(sl)) continue;  // the fp8_strided case below needs a source: skip it
            REQUIRE(convert(dev, f32, rows, cols, st, s.f, sl, &src) == VK_SUCCESS);
          } else if (sl != kRow) {
            Matrix row = src;
            REQUIRE(convert(dev, row, rows, cols, st, s.f, sl, &src) == VK_SUCCESS);
          }
          Matrix dst;
          const VkResult r = convert(dev, src, rows, cols, dt, d.f, dl, &dst);
          if (fp8_strided) {
            CHECK(r == VK_ERROR_VALIDATION_FAILED_EXT);
            continue;
          }
          REQUIRE(r == VK_SUCCESS);
          // Read back: strided bytes here, optimal through a conversion to row-major (fp8
          // to f32, others in their own type).
          Matrix back = dst;
          if (!strided(dl)) {
            const bool widen = is_fp8(d.f);
            REQUIRE(convert(dev, dst, rows, cols, widen ? VK_COMPONENT_TYPE_FLOAT32_KHR : dt,
                            widen ? NumberFormat::F32 : d.f, kRow, &back) == VK_SUCCESS);
          }
          const size_t esz = coopvk::kernels::format_size(back.f);
          for (uint32_t rr = 0; rr < rows; ++rr)
            for (uint32_t c = 0; c < cols; ++c) {
              INFO("element " << rr << " " << c);
              REQUIRE(get(back.bytes, element_offset(back, rr, c) / esz, back.f) == v[rr * cols + c]);
            }
          if (strided(dl)) {  // the gap bytes between rows / columns: untouched
            const size_t line = (dl == kRow ? cols : rows) * esz, lines = dl == kRow ? rows : cols;
            for (size_t l = 0; l + 1 < lines; ++l)
              REQUIRE(std::all_of(dst.bytes.begin() + l * dst.stride + line, dst.bytes.begin() + (l + 1) * dst.stride,
                                  [](uint8_t b) { return b == 0xCD; }));
          }
        }
    }
  CHECK(pairs >= 11);  // f32 <-> f16, e4m3, e5m2; f16 <-> e4m3, e5m2; and each type to itself
}

TEST_CASE("vkCmdConvertCooperativeVectorMatrixNV output behind a conversion-stage barrier feeds a multiply") {
  VectorDevice vd;
  Device dev(vd.opts);
  uint32_t n = 0;
  std::set<VkComponentTypeKHR> seen;
  for (const auto& p : vector_properties(dev.inst)) {
    const Entry e = entry_of(p);
    // One entry of each matrix type, in both optimal layouts, one of them transposed.
    if (!seen.insert(p.matrixInterpretation).second) continue;
    run_matvec(dev, e, {64, 129, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV, false, true, 0, 3, true}, 11 + n);
    run_matvec(dev, e, {7, 512, VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_TRAINING_OPTIMAL_NV, true, false, 0, 3, true}, 17 + n);
    ++n;
  }
  CHECK(n >= 4);  // f16, s8, e4m3, e5m2 at least
}

TEST_CASE("bad conversion arguments give a clear VkResult and write nothing") {
  VectorDevice vd;
  Device dev(vd.opts);
  auto host = host_convert(dev);
  const uint32_t R = 8, C = 16;
  std::vector<float> src(R * C, 1.0f);
  std::vector<uint8_t> dst(4096, 0xCD);
  auto base = [&] {
    auto info = convert_info(R, C, VK_COMPONENT_TYPE_FLOAT32_KHR, kRow, C * 4, VK_COMPONENT_TYPE_FLOAT16_KHR,
                             VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV, 0);
    info.srcSize = src.size() * 4;
    info.srcData.hostAddress = src.data();
    info.dstData.hostAddress = dst.data();
    return info;
  };
  auto untouched = [&] { return std::all_of(dst.begin(), dst.end(), [](uint8_t b) { return b == 0xCD; }); };
  SECTION("host: a destination too small is VK_INCOMPLETE") {
    auto info = base();
    size_t size = 16;
    info.pDstSize = &size;
    CHECK(host(dev.device, &info) == VK_INCOMPLETE);
    CHECK(untouched());
  }
  struct Bad {
    const char* what;
    void (*spoil)(VkConvertCooperativeVectorMatrixInfoNV&);
  };
  const Bad bad[] = {
      {"an unknown layout", [](VkConvertCooperativeVectorMatrixInfoNV& i) { i.dstLayout = VkCooperativeVectorMatrixLayoutNV(7); }},
      {"a stride shorter than a row", [](VkConvertCooperativeVectorMatrixInfoNV& i) { i.srcStride = 8; }},
      {"zero rows", [](VkConvertCooperativeVectorMatrixInfoNV& i) { i.numRows = 0; }},
      {"a source smaller than the matrix", [](VkConvertCooperativeVectorMatrixInfoNV& i) { i.srcSize = 64; }},
      {"s8 to f16 (no such pair)",
       [](VkConvertCooperativeVectorMatrixInfoNV& i) { i.srcComponentType = VK_COMPONENT_TYPE_SINT8_KHR, i.srcStride = 16; }},
      {"a float8 row-major destination",
       [](VkConvertCooperativeVectorMatrixInfoNV& i) { i.dstComponentType = VK_COMPONENT_TYPE_FLOAT_E4M3_NV, i.dstLayout = kRow, i.dstStride = 16; }},
      {"a type no property reports (float64)",
       [](VkConvertCooperativeVectorMatrixInfoNV& i) { i.dstComponentType = VK_COMPONENT_TYPE_FLOAT64_KHR; }},
  };
  SECTION("host: invalid infos are VK_ERROR_VALIDATION_FAILED_EXT") {
    for (const Bad& b : bad) {
      INFO(b.what);
      auto info = base();
      b.spoil(info);
      size_t size = dst.size();
      info.pDstSize = &size;
      CHECK(host(dev.device, &info) == VK_ERROR_VALIDATION_FAILED_EXT);
      CHECK(size == dst.size());  // *pDstSize is not written either
      CHECK(untouched());
    }
  }
  SECTION("command: an invalid info makes vkEndCommandBuffer fail and executes nothing") {
    auto cmd = reinterpret_cast<PFN_vkCmdConvertCooperativeVectorMatrixNV>(
        vkGetDeviceProcAddr(dev.device, "vkCmdConvertCooperativeVectorMatrixNV"));
    REQUIRE(cmd);
    Buffer s = dev.create_buffer(4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
    Buffer d = dev.create_buffer(4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT);
    std::memcpy(s.mapped, src.data(), src.size() * 4);
    std::memset(d.mapped, 0xCD, 4096);
    auto address = [&](const Buffer& b) {
      VkBufferDeviceAddressInfo bai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
      bai.buffer = b.buffer;
      return vkGetBufferDeviceAddress(dev.device, &bai);
    };
    std::vector<std::pair<std::string, VkConvertCooperativeVectorMatrixInfoNV>> infos;
    for (const Bad& b : bad) {
      auto info = base();
      b.spoil(info);
      infos.push_back({b.what, info});
    }
    auto misaligned = base();
    misaligned.dstData.deviceAddress = 32;  // replaced below by the buffer + 32
    infos.push_back({"a destination address not 64-byte aligned (VUID-10085)", misaligned});
    for (auto& [what, info] : infos) {
      INFO(what);
      const bool unaligned = info.dstData.deviceAddress == 32;
      info.srcData.deviceAddress = address(s);
      info.dstData.deviceAddress = address(d) + (unaligned ? 32 : 0);
      size_t size = 4096 - 64;
      info.pDstSize = &size;
      // A valid conversion first: the whole command must fail with the bad one.
      auto good = base();
      good.srcData.deviceAddress = address(s);
      good.dstData.deviceAddress = address(d) + 2048;
      good.pDstSize = &size;
      const VkConvertCooperativeVectorMatrixInfoNV both[2] = {good, info};
      VkCommandBuffer cb = dev.begin();
      cmd(cb, 2, both);
      CHECK(vkEndCommandBuffer(cb) == VK_ERROR_VALIDATION_FAILED_EXT);
      vkFreeCommandBuffers(dev.device, dev.pool, 1, &cb);
      const auto* bytes = static_cast<const uint8_t*>(d.mapped);
      CHECK(std::all_of(bytes, bytes + 4096, [](uint8_t b) { return b == 0xCD; }));
    }
    dev.destroy_buffer(s);
    dev.destroy_buffer(d);
  }
}
