// Tests of the cooperative-vector matrix layouts and convert_matrix (kernels/coopvec_layout.h).
//
// The reference here is written from the layout formulas documented in the header, not
// from the implementation: ref_offset()/ref_size() below place element (r, c) by hand,
// and float encodings are spelled out as literal bit patterns.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coopvk/kernels/coopvec_layout.h"

using namespace coopvk::kernels;
using NF = NumberFormat;
using ML = MatrixLayout;

namespace {

constexpr uint8_t kCanary = 0xA5;

struct Shape {
  uint32_t rows, cols;
};
const Shape kShapes[] = {{1, 1}, {3, 5}, {17, 33}, {64, 64}, {16, 4}, {33, 17}, {2, 70}};
const NF kFormats[] = {NF::F32, NF::F16, NF::BF16, NF::E4M3, NF::E5M2, NF::I8, NF::U8};
const ML kLayouts[] = {ML::RowMajor, ML::ColumnMajor, ML::InferencingOptimal, ML::TrainingOptimal};

size_t elem(NF f) {
  switch (f) {
    case NF::F32: return 4;
    case NF::F16:
    case NF::BF16: return 2;
    default: return 1;
  }
}

bool is_fp8(NF f) { return f == NF::E4M3 || f == NF::E5M2; }

bool optimal(ML l) { return l == ML::InferencingOptimal || l == ML::TrainingOptimal; }

// Element (r, c) of a rows x cols matrix, straight from the header's formulas.
size_t ref_offset(ML l, uint32_t cols, size_t e, size_t stride, uint32_t r, uint32_t c) {
  switch (l) {
    case ML::RowMajor: return r * stride + c * e;
    case ML::ColumnMajor: return c * stride + r * e;
    default: {
      const size_t g = 4 / e;
      const size_t cp = (cols + g - 1) / g * g;
      return (r / 16) * (cp / g) * 64 + (c / g) * 64 + (r % 16) * 4 + (c % g) * e;
    }
  }
}

size_t ref_size(ML l, uint32_t rows, uint32_t cols, size_t e, size_t stride) {
  switch (l) {
    case ML::RowMajor: return (rows - 1) * stride + cols * e;
    case ML::ColumnMajor: return (cols - 1) * stride + rows * e;
    default: {
      const size_t g = 4 / e;
      return (rows + 15) / 16 * 16 * ((cols + g - 1) / g * g) * e;
    }
  }
}

// A stride for a strided layout: tight, or with `extra` elements of gap.
size_t stride_for(ML l, uint32_t rows, uint32_t cols, size_t e, size_t extra) {
  if (optimal(l)) return 0;
  return ((l == ML::RowMajor ? cols : rows) + extra) * e;
}

// A distinct-ish bit pattern for element (r, c): exact byte copies are all that the
// same-format tests need, so any bits will do, NaN encodings included.
uint32_t pattern(uint32_t r, uint32_t c, uint32_t salt) {
  uint32_t x = r * 0x9E3779B1u ^ (c + 1) * 0x85EBCA77u ^ salt;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 13;
  return x;
}

struct Matrix {
  MatrixDesc desc;
  std::vector<uint8_t> bytes;
  size_t e;

  uint8_t* at(uint32_t r, uint32_t c) {
    return bytes.data() + ref_offset(desc.layout, desc.cols, e, desc.stride, r, c);
  }
};

// Builds a matrix by hand in layout l: gaps hold the canary, optimal padding is zero.
Matrix make_matrix(Shape s, NF f, ML l, size_t extra, uint32_t salt) {
  Matrix m;
  m.e = elem(f);
  m.desc = MatrixDesc{s.rows, s.cols, f, l, stride_for(l, s.rows, s.cols, m.e, extra)};
  m.bytes.assign(ref_size(l, s.rows, s.cols, m.e, m.desc.stride), optimal(l) ? 0 : kCanary);
  for (uint32_t r = 0; r < s.rows; ++r)
    for (uint32_t c = 0; c < s.cols; ++c) {
      const uint32_t v = pattern(r, c, salt);
      std::memcpy(m.at(r, c), &v, m.e);
    }
  return m;
}

// An empty destination of the right size (all canary), to be filled by convert_matrix.
Matrix blank(Shape s, NF f, ML l, size_t extra) {
  Matrix m;
  m.e = elem(f);
  m.desc = MatrixDesc{s.rows, s.cols, f, l, stride_for(l, s.rows, s.cols, m.e, extra)};
  m.bytes.assign(ref_size(l, s.rows, s.cols, m.e, m.desc.stride), kCanary);
  return m;
}

// Every element equals pattern(salt); every other byte is 0 (optimal padding) or the
// untouched canary (gaps of strided layouts).
void check_pattern(Matrix& m, uint32_t salt) {
  std::vector<bool> is_elem(m.bytes.size(), false);
  for (uint32_t r = 0; r < m.desc.rows; ++r)
    for (uint32_t c = 0; c < m.desc.cols; ++c) {
      const uint32_t v = pattern(r, c, salt);
      uint32_t got = 0;
      std::memcpy(&got, m.at(r, c), m.e);
      const uint32_t mask = m.e == 4 ? 0xFFFFFFFFu : (1u << (8 * m.e)) - 1;
      INFO("element (" << r << ", " << c << ")");
      REQUIRE(got == (v & mask));
      for (size_t i = 0; i < m.e; ++i) is_elem[m.at(r, c) - m.bytes.data() + i] = true;
    }
  const uint8_t filler = optimal(m.desc.layout) ? 0 : kCanary;
  for (size_t i = 0; i < m.bytes.size(); ++i)
    if (!is_elem[i]) {
      INFO("non-element byte " << i);
      REQUIRE(m.bytes[i] == filler);
    }
}

ConvertStatus run(Matrix& src, Matrix& dst, size_t* size_io = nullptr) {
  size_t size = dst.bytes.size();
  if (size_io == nullptr) size_io = &size;
  return convert_matrix(src.desc, src.bytes.data(), src.bytes.size(), dst.desc, dst.bytes.data(),
                        size_io);
}

}  // namespace

TEST_CASE("layout sizes follow the documented formulas", "[coopvec_layout]") {
  // Hand-computed examples of the optimal layout: rows to 16, columns to 4/E.
  CHECK(layout_required_size({1, 1, NF::F32, ML::InferencingOptimal, 0}) == 64);
  CHECK(layout_required_size({3, 5, NF::I8, ML::InferencingOptimal, 0}) == 16 * 8);
  CHECK(layout_required_size({17, 33, NF::F16, ML::TrainingOptimal, 0}) == 32 * 34 * 2);
  CHECK(layout_required_size({64, 64, NF::E4M3, ML::InferencingOptimal, 0}) == 64 * 64);
  // Strided layouts: the span touched, no trailing gap.
  CHECK(layout_required_size({3, 5, NF::F16, ML::RowMajor, 16}) == 2 * 16 + 10);
  CHECK(layout_required_size({3, 5, NF::F16, ML::ColumnMajor, 8}) == 4 * 8 + 6);
  CHECK(layout_required_size({0, 5, NF::F16, ML::RowMajor, 16}) == 0);

  for (Shape s : kShapes)
    for (NF f : kFormats)
      for (ML l : kLayouts) {
        const size_t e = elem(f);
        const size_t stride = stride_for(l, s.rows, s.cols, e, 3);
        INFO(s.rows << "x" << s.cols << " format " << int(f) << " layout " << int(l));
        CHECK(layout_required_size({s.rows, s.cols, f, l, stride}) ==
              ref_size(l, s.rows, s.cols, e, stride));
        if (optimal(l)) {
          CHECK(layout_required_size({s.rows, s.cols, f, l, 0}) % 64 == 0);
          for (uint32_t r = 0; r < s.rows; ++r)
            for (uint32_t c = 0; c < s.cols; ++c)
              REQUIRE(optimal_element_offset(r, c, s.cols, e) == ref_offset(l, s.cols, e, 0, r, c));
        }
      }
}

TEST_CASE("size query: dstData null returns the destination size", "[coopvec_layout]") {
  for (Shape s : kShapes)
    for (ML l : kLayouts) {
      const MatrixDesc src{s.rows, s.cols, NF::F32, ML::RowMajor, s.cols * 4u};
      const MatrixDesc dst{s.rows, s.cols, NF::F16, l, stride_for(l, s.rows, s.cols, 2, 1)};
      size_t size = 12345;
      // srcData may be NULL when dstData is NULL.
      REQUIRE(convert_matrix(src, nullptr, 0, dst, nullptr, &size) == ConvertStatus::Success);
      CHECK(size == ref_size(l, s.rows, s.cols, 2, dst.stride));
      // "The size of the destination is only a function of the destination layout".
      const MatrixDesc src2{s.rows, s.cols, NF::F16, ML::ColumnMajor, (s.rows + 7) * 2u};
      size_t size2 = 0;
      REQUIRE(convert_matrix(src2, nullptr, 0, dst, nullptr, &size2) == ConvertStatus::Success);
      CHECK(size2 == size);
    }
}

TEST_CASE("every layout pair places elements where the formulas say", "[coopvec_layout]") {
  const NF f = GENERATE(NF::F32, NF::F16, NF::BF16, NF::E4M3, NF::E5M2, NF::I8, NF::U8);
  for (Shape s : kShapes)
    for (ML sl : kLayouts)
      for (ML dl : kLayouts) {
        INFO(s.rows << "x" << s.cols << " format " << int(f) << " " << int(sl) << " -> " << int(dl));
        Matrix src = make_matrix(s, f, sl, 2, 7);
        const std::vector<uint8_t> src_before = src.bytes;
        Matrix dst = blank(s, f, dl, 3);
        size_t size = dst.bytes.size();
        if (is_fp8(f) && !optimal(dl)) {
          // VUID-VkConvertCooperativeVectorMatrixInfoNV-dstComponentType-10082 holds for
          // same-type conversions too.
          REQUIRE(run(src, dst, &size) == ConvertStatus::InvalidArgument);
          for (uint8_t b : dst.bytes) REQUIRE(b == kCanary);
          continue;
        }
        REQUIRE(run(src, dst, &size) == ConvertStatus::Success);
        CHECK(size == dst.bytes.size());  // bytes "actually written" = the layout's size
        check_pattern(dst, 7);
        CHECK(src.bytes == src_before);
      }
}

TEST_CASE("round trip row -> optimal -> column -> row is exact", "[coopvec_layout]") {
  const NF f = GENERATE(NF::F32, NF::F16, NF::BF16, NF::E4M3, NF::E5M2, NF::I8, NF::U8);
  const ML opt = GENERATE(ML::InferencingOptimal, ML::TrainingOptimal);
  for (Shape s : kShapes) {
    INFO(s.rows << "x" << s.cols << " format " << int(f));
    Matrix row = make_matrix(s, f, ML::RowMajor, 1, 99);
    Matrix o = blank(s, f, opt, 0);
    REQUIRE(run(row, o) == ConvertStatus::Success);
    if (!is_fp8(f)) {  // fp8 cannot be written back to a strided layout (10082)
      Matrix col = blank(s, f, ML::ColumnMajor, 5);
      Matrix back = blank(s, f, ML::RowMajor, 1);
      REQUIRE(run(o, col) == ConvertStatus::Success);
      REQUIRE(run(col, back) == ConvertStatus::Success);
      CHECK(back.bytes == row.bytes);  // gaps: canary in both
    }
    // Inferencing <-> training optimal is a plain copy.
    Matrix other = blank(s, f, opt == ML::TrainingOptimal ? ML::InferencingOptimal : ML::TrainingOptimal, 0);
    REQUIRE(run(o, other) == ConvertStatus::Success);
    CHECK(other.bytes == o.bytes);
  }
}

namespace {

// Values exact in every float format tested, with their encodings written out.
struct Known {
  float f32;
  uint16_t f16, bf16;
  uint8_t e4m3, e5m2;
};
const Known kKnown[] = {
    {0.0f, 0x0000, 0x0000, 0x00, 0x00},  {0.5f, 0x3800, 0x3F00, 0x30, 0x38},
    {-0.75f, 0xBA00, 0xBF40, 0xB4, 0xBA}, {1.0f, 0x3C00, 0x3F80, 0x38, 0x3C},
    {-1.25f, 0xBD00, 0xBFA0, 0xBA, 0xBD}, {1.5f, 0x3E00, 0x3FC0, 0x3C, 0x3E},
    {2.0f, 0x4000, 0x4000, 0x40, 0x40},  {-3.0f, 0xC200, 0xC040, 0xC4, 0xC2},
    {4.0f, 0x4400, 0x4080, 0x48, 0x44},  {0.25f, 0x3400, 0x3E80, 0x28, 0x34},
    {6.0f, 0x4600, 0x40C0, 0x4C, 0x46},  {-8.0f, 0xC800, 0xC100, 0xD0, 0xC8},
};
constexpr size_t kNumKnown = sizeof(kKnown) / sizeof(kKnown[0]);

uint32_t encode(const Known& k, NF f) {
  switch (f) {
    case NF::F32: return std::bit_cast<uint32_t>(k.f32);
    case NF::F16: return k.f16;
    case NF::BF16: return k.bf16;
    case NF::E4M3: return k.e4m3;
    default: return k.e5m2;
  }
}

// A matrix in layout l whose element (r, c) is kKnown[(r * 5 + c * 3) % n] in format f.
Matrix known_matrix(Shape s, NF f, ML l) {
  Matrix m = blank(s, f, l, 2);
  if (optimal(l)) std::fill(m.bytes.begin(), m.bytes.end(), 0);
  for (uint32_t r = 0; r < s.rows; ++r)
    for (uint32_t c = 0; c < s.cols; ++c) {
      const uint32_t v = encode(kKnown[(r * 5 + c * 3) % kNumKnown], f);
      std::memcpy(m.at(r, c), &v, m.e);
    }
  return m;
}

}  // namespace

TEST_CASE("format conversions land the right encodings in every layout", "[coopvec_layout]") {
  struct Pair {
    NF s, d;
  };
  const Pair pairs[] = {{NF::F32, NF::F16},  {NF::F16, NF::F32},  {NF::F32, NF::BF16}, {NF::BF16, NF::F32},
                        {NF::F32, NF::E4M3}, {NF::F32, NF::E5M2}, {NF::F16, NF::E4M3}, {NF::F16, NF::E5M2},
                        {NF::E4M3, NF::F16}, {NF::E5M2, NF::F32}, {NF::F16, NF::BF16}, {NF::BF16, NF::F16}};
  for (const Pair& p : pairs)
    for (Shape s : kShapes)
      for (ML sl : kLayouts)
        for (ML dl : kLayouts) {
          // fp8 may only be written in an optimal layout (10082); reading it from any
          // layout is allowed.
          if ((p.d == NF::E4M3 || p.d == NF::E5M2) && !optimal(dl)) continue;
          INFO(int(p.s) << " -> " << int(p.d) << " " << s.rows << "x" << s.cols << " " << int(sl) << " -> "
                        << int(dl));
          Matrix src = known_matrix(s, p.s, sl);
          Matrix dst = blank(s, p.d, dl, 1);
          REQUIRE(run(src, dst) == ConvertStatus::Success);
          Matrix want = known_matrix(s, p.d, dl);
          want.desc.stride = dst.desc.stride;
          want.bytes.assign(dst.bytes.size(), optimal(dl) ? 0 : kCanary);
          for (uint32_t r = 0; r < s.rows; ++r)
            for (uint32_t c = 0; c < s.cols; ++c) {
              const uint32_t v = encode(kKnown[(r * 5 + c * 3) % kNumKnown], p.d);
              std::memcpy(want.at(r, c), &v, want.e);
            }
          REQUIRE(dst.bytes == want.bytes);
        }
}

TEST_CASE("narrowing rounds to nearest even and does not saturate", "[coopvec_layout]") {
  auto one = [](NF sf, uint32_t in, NF df) {
    const MatrixDesc s{1, 1, sf, ML::RowMajor, elem(sf)};
    const MatrixDesc d{1, 1, df, ML::InferencingOptimal, 0};
    std::vector<uint8_t> out(64, kCanary);
    size_t size = out.size();
    REQUIRE(convert_matrix(s, &in, elem(sf), d, out.data(), &size) == ConvertStatus::Success);
    uint32_t v = 0;
    std::memcpy(&v, out.data(), elem(df));
    return v;
  };
  const auto f32 = [](float f) { return std::bit_cast<uint32_t>(f); };
  CHECK(one(NF::F32, f32(1.0f + 0x1p-11f), NF::F16) == 0x3C00);      // tie -> even
  CHECK(one(NF::F32, f32(1.0f + 3 * 0x1p-11f), NF::F16) == 0x3C02);  // tie -> even
  CHECK(one(NF::F32, f32(1.0f + 0x1p-9f), NF::BF16) == 0x3F80);      // tie -> even
  CHECK(one(NF::F16, 0x3C40, NF::E4M3) == 0x38);                     // 1.0625 tie -> 1.0
  CHECK(one(NF::F16, 0x3CC0, NF::E4M3) == 0x3A);                     // 1.1875 tie -> 1.25
  CHECK(one(NF::BF16, 0x3F81, NF::F16) == 0x3C08);                   // exact through F32
  // No saturation option in the command: the default SPIR-V rule (SPV_EXT_float8).
  CHECK((one(NF::F32, f32(1000.0f), NF::E4M3) & 0x7F) == 0x7F);  // NaN
  CHECK(one(NF::F32, f32(1e6f), NF::E5M2) == 0x7C);              // +inf
}

TEST_CASE("a too-small destination gives Incomplete and writes no element", "[coopvec_layout]") {
  for (ML l : kLayouts) {
    const Shape s{17, 33};
    Matrix src = make_matrix(s, NF::F16, ML::RowMajor, 0, 3);
    Matrix dst = blank(s, NF::F16, l, 1);
    const size_t need = dst.bytes.size();
    for (size_t given : {size_t(0), size_t(1), need / 2, need - 1}) {
      INFO("layout " << int(l) << " given " << given);
      size_t size = given;
      REQUIRE(run(src, dst, &size) == ConvertStatus::Incomplete);
      // "no bytes will be written"; the size variable gets the bytes actually written.
      CHECK(size == 0);
      for (uint8_t b : dst.bytes) REQUIRE(b == kCanary);
    }
    // Exactly enough, and more than enough (the extra bytes stay untouched).
    size_t size = need;
    REQUIRE(run(src, dst, &size) == ConvertStatus::Success);
    CHECK(size == need);
    Matrix big = blank(s, NF::F16, l, 1);
    big.bytes.resize(need + 100, kCanary);
    size = big.bytes.size();
    REQUIRE(run(src, big, &size) == ConvertStatus::Success);
    CHECK(size == need);
    for (size_t i = need; i < big.bytes.size(); ++i) REQUIRE(big.bytes[i] == kCanary);
  }
}

TEST_CASE("conversion rules of VUID-...-10081", "[coopvec_layout]") {
  const NF floats[] = {NF::F32, NF::F16, NF::BF16, NF::E4M3, NF::E5M2};
  for (NF f : kFormats) CHECK(coopvec_conversion_allowed(f, f));
  CHECK(coopvec_conversion_allowed(NF::F32, NF::F16));
  CHECK(coopvec_conversion_allowed(NF::F16, NF::F32));
  CHECK(coopvec_conversion_allowed(NF::F32, NF::E4M3));
  CHECK(coopvec_conversion_allowed(NF::E5M2, NF::F16));
  CHECK(coopvec_conversion_allowed(NF::F16, NF::BF16));
  CHECK_FALSE(coopvec_conversion_allowed(NF::BF16, NF::E4M3));  // neither is F32/F16
  CHECK_FALSE(coopvec_conversion_allowed(NF::E4M3, NF::E5M2));
  for (NF f : floats) {
    CHECK_FALSE(coopvec_conversion_allowed(NF::I8, f));
    CHECK_FALSE(coopvec_conversion_allowed(f, NF::U8));
  }
  CHECK_FALSE(coopvec_conversion_allowed(NF::I8, NF::U8));
  CHECK_FALSE(coopvec_conversion_allowed(NF::F64, NF::F64));
  CHECK_FALSE(coopvec_conversion_allowed(NF::I32, NF::I32));
}

TEST_CASE("bad input returns InvalidArgument and writes nothing", "[coopvec_layout]") {
  const Shape s{3, 5};
  Matrix good_src = make_matrix(s, NF::F32, ML::RowMajor, 1, 11);

  struct Case {
    const char* name;
    MatrixDesc src, dst;
    bool null_src = false, null_size = false, overlap = false;
    long src_size_delta = 0;
  };
  const MatrixDesc rs = good_src.desc;                           // 3x5 F32, stride 24
  const MatrixDesc od{3, 5, NF::F16, ML::InferencingOptimal, 0};  // 3x5 F16 optimal
  auto with = [](MatrixDesc d, auto f) {
    f(d);
    return d;
  };
  std::vector<Case> cases = {
      {"zero rows", with(rs, [](auto& d) { d.rows = 0; }), with(od, [](auto& d) { d.rows = 0; })},
      {"zero cols", with(rs, [](auto& d) { d.cols = 0; }), with(od, [](auto& d) { d.cols = 0; })},
      {"shape mismatch", rs, with(od, [](auto& d) { d.rows = 4; })},
      {"src row stride < row", with(rs, [](auto& d) { d.stride = 16; }), od},
      {"src col stride < column", with(rs, [](auto& d) { d.layout = ML::ColumnMajor, d.stride = 8; }), od},
      {"src stride misaligned", with(rs, [](auto& d) { d.stride = 22; }), od},
      {"dst row stride < row", rs, with(od, [](auto& d) { d.layout = ML::RowMajor, d.stride = 8; })},
      {"dst col stride misaligned", rs, with(od, [](auto& d) { d.layout = ML::ColumnMajor, d.stride = 7; })},
      {"src layout out of range", with(rs, [](auto& d) { d.layout = static_cast<ML>(4); }), od},
      {"dst layout out of range", rs, with(od, [](auto& d) { d.layout = static_cast<ML>(0x7FFFFFFF); })},
      {"int8 -> float", with(rs, [](auto& d) { d.format = NF::I8, d.stride = 8; }), od},
      {"float -> int8", rs, with(od, [](auto& d) { d.format = NF::I8; })},
      {"bf16 -> e4m3", with(rs, [](auto& d) { d.format = NF::BF16; }), with(od, [](auto& d) { d.format = NF::E4M3; })},
      {"f64 element", with(rs, [](auto& d) { d.format = NF::F64; }), with(od, [](auto& d) { d.format = NF::F64; })},
      {"i32 element", with(rs, [](auto& d) { d.format = NF::I32; }), with(od, [](auto& d) { d.format = NF::I32; })},
      {"fp8 into row-major",
       rs, with(od, [](auto& d) { d.format = NF::E4M3, d.layout = ML::RowMajor, d.stride = 5; })},
      {"fp8 -> fp8 into row-major",
       with(od, [](auto& d) { d.format = NF::E4M3; }),
       with(od, [](auto& d) { d.format = NF::E4M3, d.layout = ML::RowMajor, d.stride = 5; })},
      {"fp8 into column-major",
       rs, with(od, [](auto& d) { d.format = NF::E5M2, d.layout = ML::ColumnMajor, d.stride = 3; })},
      {"srcSize one byte short", rs, od, false, false, false, -1},
      {"null srcData with dstData", rs, od, true},
      {"null dstSize", rs, od, false, true},
      {"src and dst overlap", rs, od, false, false, true},
      {"size overflows", with(rs, [](auto& d) { d.rows = 0xFFFFFFFFu, d.stride = SIZE_MAX / 4 & ~size_t(3); }),
       with(od, [](auto& d) { d.rows = 0xFFFFFFFFu; })},
      {"optimal size overflows",
       with(od, [](auto& d) { d.format = NF::F32, d.rows = 0xFFFFFFFFu, d.cols = 0xFFFFFFFFu; }),
       with(od, [](auto& d) { d.rows = 0xFFFFFFFFu, d.cols = 0xFFFFFFFFu; })},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<uint8_t> arena(4096, kCanary);  // dst lives here; src too for the overlap case
    // A source buffer big enough for whatever c.src describes, so that only the change
    // under test is wrong.
    std::vector<uint8_t> src_bytes = good_src.bytes;
    src_bytes.resize(1024, 0);
    const std::vector<uint8_t> src_before = src_bytes;
    const void* src = c.null_src ? nullptr : src_bytes.data();
    const size_t src_need = layout_required_size(c.src);
    size_t src_size = (src_need != 0 && src_need <= src_bytes.size() ? src_need : src_bytes.size()) +
                      c.src_size_delta;
    uint8_t* dst = arena.data() + 1024;
    if (c.overlap) {
      std::memcpy(arena.data() + 1024 + 64, src_bytes.data(), src_size);
      src = arena.data() + 1024 + 64;
    }
    const std::vector<uint8_t> arena_before = arena;
    size_t size = 777;
    const char* why = nullptr;
    CHECK(convert_matrix(c.src, src, src_size, c.dst, dst, c.null_size ? nullptr : &size, &why) ==
          ConvertStatus::InvalidArgument);
    CHECK(why != nullptr);
    CHECK(size == 777);
    CHECK(arena == arena_before);
    CHECK(src_bytes == src_before);
    // The size query rejects the same descriptions (the buffers are not needed there).
    if (!c.null_src && !c.overlap) {
      size = 777;
      CHECK(convert_matrix(c.src, c.src_size_delta ? src : nullptr, src_size, c.dst, nullptr,
                           c.null_size ? nullptr : &size) == ConvertStatus::InvalidArgument);
      CHECK(size == 777);
    }
  }
  // Sanity: the unmodified case succeeds, so the failures above come from the changes.
  std::vector<uint8_t> arena(4096, kCanary);
  size_t size = 4096 - 1024;
  CHECK(convert_matrix(rs, good_src.bytes.data(), good_src.bytes.size(), od, arena.data() + 1024, &size) ==
        ConvertStatus::Success);
  CHECK(size == 16 * 6 * 2);  // rows to 16, 5 columns to 3 fp16 pairs
}
