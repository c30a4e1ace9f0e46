// Number-format conversions against an oracle written a different way: values decoded
// with ldexp into long double, narrowing by searching the table of every representable
// value for the nearest one (ties to the even code), integer rounding with nearbyintl.
// Then the bulk convert() on every arch this CPU runs, bit for bit against the scalar
// reference, at ragged lengths.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "coopvk/kernels/cpu_dispatch.h"
#include "coopvk/kernels/number_formats.h"

using namespace coopvk::kernels;
using NF = NumberFormat;

namespace {

constexpr NF kAll[] = {NF::F32, NF::F16, NF::BF16, NF::E4M3, NF::E5M2, NF::F64, NF::I8,
                       NF::U8,  NF::I16, NF::U16,  NF::I32,  NF::U32,  NF::I64, NF::U64};

struct Layout {
  int e, m, bias;
  bool fn;  // E4M3: no infinity, only all-ones is NaN
};
Layout layout(NF f) {
  switch (f) {
    case NF::F32: return {8, 23, 127, false};
    case NF::F16: return {5, 10, 15, false};
    case NF::BF16: return {8, 7, 127, false};
    case NF::E4M3: return {4, 3, 7, true};
    case NF::E5M2: return {5, 2, 15, false};
    default: return {11, 52, 1023, false};
  }
}
bool is_float(NF f) {
  return f == NF::F32 || f == NF::F16 || f == NF::BF16 || f == NF::E4M3 || f == NF::E5M2 || f == NF::F64;
}
int width(NF f) {
  const auto l = layout(f);
  return is_float(f) ? 1 + l.e + l.m
                     : (f == NF::I8 || f == NF::U8 ? 8 : f == NF::I16 || f == NF::U16 ? 16 : f == NF::I32 || f == NF::U32 ? 32 : 64);
}
bool is_signed_int(NF f) { return f == NF::I8 || f == NF::I16 || f == NF::I32 || f == NF::I64; }
uint64_t mask_of(NF f) { return width(f) == 64 ? ~0ull : (1ull << width(f)) - 1; }

// ---- the oracle ----

enum class Cls { Num, Inf, NaN };
struct Decoded {
  Cls cls;
  long double v;     // for Num (signed; -0.0 keeps its sign)
  bool neg;
  uint64_t payload;  // NaN mantissa, left-aligned to bit 63
};

Decoded decode_ref(NF f, uint64_t bits) {
  if (!is_float(f)) {
    long double v;
    if (is_signed_int(f)) {
      const int w = width(f);
      int64_t s = int64_t(bits << (64 - w)) >> (64 - w);
      v = (long double)s;
    } else {
      v = (long double)(bits & mask_of(f));
    }
    return {Cls::Num, v, v < 0, 0};
  }
  const auto l = layout(f);
  const uint64_t mant = bits & ((1ull << l.m) - 1);
  const uint64_t ex = (bits >> l.m) & ((1ull << l.e) - 1);
  const bool neg = (bits >> (l.e + l.m)) & 1;
  const uint64_t top = (1ull << l.e) - 1;
  if ((!l.fn && ex == top) || (l.fn && ex == top && mant == (1ull << l.m) - 1)) {
    if (!l.fn && mant == 0) return {Cls::Inf, 0, neg, 0};
    return {Cls::NaN, 0, neg, mant << (64 - l.m)};
  }
  long double mag = ex == 0 ? std::ldexp((long double)mant, 1 - l.bias - l.m)
                            : std::ldexp(1.0L + (long double)mant / (long double)(1ull << l.m), int(ex) - l.bias);
  return {Cls::Num, neg ? -mag : mag, neg, 0};
}

// Every non-negative finite value of a narrow format with its code, ascending, plus the
// value one step past the largest (code max+1) to decide overflow by the same search.
struct Table {
  std::vector<long double> v;
  std::vector<uint64_t> code;
};
const Table& table(NF f) {
  static std::map<NF, Table> cache;
  auto it = cache.find(f);
  if (it != cache.end()) return it->second;
  Table t;
  const auto l = layout(f);
  const uint64_t pos_codes = 1ull << (l.e + l.m);
  uint64_t last = 0;
  for (uint64_t c = 0; c < pos_codes; ++c) {
    const Decoded d = decode_ref(f, c);
    if (d.cls != Cls::Num) break;
    t.v.push_back(d.v);
    t.code.push_back(c);
    last = c;
  }
  const long double gap = t.v[last] - t.v[last - 1];
  t.v.push_back(t.v[last] + gap);
  t.code.push_back(last + 1);
  return cache[f] = t;
}

uint64_t ref_float_special(NF df, const Decoded& d, Overflow o) {
  const auto l = layout(df);
  const uint64_t sign = uint64_t(d.neg) << (l.e + l.m);
  const uint64_t all = (1ull << (l.e + l.m)) - 1, exp_ones = ((1ull << l.e) - 1) << l.m;
  const uint64_t maxc = l.fn ? all - 1 : exp_ones - 1;
  if (d.cls == Cls::NaN) {
    if (l.fn) return sign | all;
    return sign | exp_ones | (1ull << (l.m - 1)) | (d.payload >> (64 - l.m));
  }
  // Inf, or overflow of a finite value.
  if (o == Overflow::Saturate) return sign | maxc;
  return sign | (l.fn ? all : exp_ones);
}

uint64_t ref_to_float(NF df, const Decoded& d, Overflow o) {
  if (d.cls != Cls::Num) return ref_float_special(df, d, o);
  const auto l = layout(df);
  const bool neg = std::signbit(d.v);
  const long double a = std::fabs(d.v);
  if (df == NF::F32 || df == NF::F64) {
    // The hardware's own rounding of long double, nearest-even by default.
    uint64_t bits;
    bool inf;
    if (df == NF::F32) {
      const float r = (float)a;
      bits = std::bit_cast<uint32_t>(r);
      inf = std::isinf(r);
    } else {
      const double r = (double)a;
      bits = std::bit_cast<uint64_t>(r);
      inf = std::isinf(r);
    }
    if (inf) return ref_float_special(df, {Cls::Inf, 0, neg, 0}, o);
    return bits | (uint64_t(neg) << (l.e + l.m));
  }
  const Table& t = table(df);
  const auto hi = std::lower_bound(t.v.begin(), t.v.end(), a);
  uint64_t code;
  if (hi == t.v.end()) {
    code = t.code.back();
  } else if (*hi == a || hi == t.v.begin()) {
    code = t.code[hi - t.v.begin()];
  } else {
    const size_t i = hi - t.v.begin();
    const long double dlo = a - t.v[i - 1], dhi = t.v[i] - a;
    code = dlo < dhi ? t.code[i - 1] : dhi < dlo ? t.code[i] : ((t.code[i] & 1) ? t.code[i - 1] : t.code[i]);
  }
  if (code == t.code.back()) return ref_float_special(df, {Cls::Inf, 0, neg, 0}, o);
  return code | (uint64_t(neg) << (l.e + l.m));
}

uint64_t ref_to_int(NF df, const Decoded& d) {
  const int w = width(df);
  const long double lo = is_signed_int(df) ? -std::ldexp(1.0L, w - 1) : 0.0L;
  const long double hi = is_signed_int(df) ? std::ldexp(1.0L, w - 1) - 1 : std::ldexp(1.0L, w) - 1;
  long double r;
  if (d.cls == Cls::NaN) r = 0;
  else if (d.cls == Cls::Inf) r = d.neg ? lo : hi;
  else r = std::clamp(std::nearbyintl(d.v), lo, hi);
  uint64_t u;
  if (r < 0) u = uint64_t(int64_t(r));
  else if (r >= std::ldexp(1.0L, 63)) u = uint64_t(r - std::ldexp(1.0L, 63)) | (1ull << 63);
  else u = uint64_t(r);
  return u & mask_of(df);
}

uint64_t oracle(NF sf, uint64_t bits, NF df, Overflow o) {
  const Decoded d = decode_ref(sf, bits);
  return is_float(df) ? ref_to_float(df, d, o) : ref_to_int(df, d);
}

// ---- sample inputs ----

uint64_t f32b(float f) { return std::bit_cast<uint32_t>(f); }

std::vector<uint64_t> f32_samples() {
  static std::vector<uint64_t> s;
  if (!s.empty()) return s;
  auto add = [&](float f) {
    for (float g : {f, -f, std::nextafter(f, INFINITY), std::nextafter(f, -INFINITY)}) {
      s.push_back(f32b(g));
      s.push_back(f32b(-g));
    }
  };
  for (NF f : {NF::F16, NF::BF16, NF::E4M3, NF::E5M2}) {
    const Table& t = table(f);
    for (size_t i = 0; i < t.v.size(); ++i) {
      add((float)t.v[i]);
      if (i + 1 < t.v.size()) add((float)((t.v[i] + t.v[i + 1]) / 2));  // every midpoint is an f32
    }
  }
  std::mt19937 rng(1234);
  for (int i = 0; i < 100000; ++i) s.push_back(rng());
  for (uint32_t b : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fbfffffu,
                     0x7fe01234u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x4f000000u, 0xcf000000u,
                     0x4effffffu, 0x4f800000u, 0x5f000000u, 0x5f800000u, 0xdf000000u})
    s.push_back(b);
  for (float f : {0.5f, 1.5f, 2.5f, -2.5f, 3.5f, 127.5f, 128.5f, -128.5f, 255.5f, 256.f, 32767.5f,
                  65535.5f, -0.4f, -0.5f, -0.6f, 1e10f, -1e10f})
    s.push_back(f32b(f));
  return s;
}

std::vector<uint64_t> samples(NF f) {
  if (f == NF::F32) return f32_samples();
  std::vector<uint64_t> s;
  if (width(f) <= 16) {
    for (uint64_t c = 0; c <= mask_of(f); ++c) s.push_back(c);
    return s;
  }
  std::mt19937_64 rng(99);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t r = rng();
    s.push_back(r & mask_of(f));
    s.push_back((r >> (rng() % 64)) & mask_of(f));  // small magnitudes too
  }
  for (int64_t v : std::initializer_list<int64_t>{0ll, 1ll, -1ll, 127ll, 128ll, -128ll, -129ll, 255ll, 256ll, 32767ll, 32768ll,
                    65535ll, 65536ll, 65519ll, 65520ll, 16777217ll, 2147483647ll, -2147483647ll - 1,
                    4294967295ll, 448ll, 464ll, 465ll, 57344ll, 61440ll, 61439ll, (1ll << 30) + (1ll << 22) + 1,
                    INT64_MAX, INT64_MIN, INT64_MAX - 1})
    s.push_back(uint64_t(v) & mask_of(f));
  if (f == NF::F64)
    for (double d : std::initializer_list<double>{0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-310, 65520.0, 65519.99999, 448.0, 464.0,
                     464.00000001, 2.5, -2.5, 3.4028235677973366e+38, 3.4028235677973362e+38, 1e300,
                     1.401298464324817e-45, 7.006492321624085e-46, 7.006492321624087e-46})
      s.push_back(std::bit_cast<uint64_t>(d));
  return s;
}

void store(NF f, std::vector<uint8_t>& buf, const std::vector<uint64_t>& bits) {
  const size_t sz = format_size(f);
  buf.assign(bits.size() * sz, 0);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&buf[i * sz], &bits[i], sz);
}
uint64_t load(NF f, const uint8_t* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, format_size(f));
  return v;
}

std::vector<KernelArch> arches() {
  std::vector<KernelArch> out;
  for (KernelArch a : {KernelArch::Scalar, KernelArch::Portable, KernelArch::Avx2, KernelArch::Avx512})
    if (kernel_arch_supported(a)) out.push_back(a);
  return out;
}

struct ArchGuard {
  KernelArch saved = active_kernel_arch();
  ~ArchGuard() { force_kernel_arch(saved); }
};

}  // namespace

TEST_CASE("decode: every fp16, bf16 and fp8 pattern matches the ldexp oracle", "[number_formats]") {
  struct Case {
    NF f;
    float (*fn)(uint64_t);
  };
  const Case cases[] = {
      {NF::F16, [](uint64_t b) { return f16_to_f32(uint16_t(b)); }},
      {NF::BF16, [](uint64_t b) { return bf16_to_f32(uint16_t(b)); }},
      {NF::E4M3, [](uint64_t b) { return e4m3_to_f32(uint8_t(b)); }},
      {NF::E5M2, [](uint64_t b) { return e5m2_to_f32(uint8_t(b)); }},
  };
  for (const Case& c : cases) {
    int bad = 0;
    for (uint64_t b = 0; b <= mask_of(c.f); ++b) {
      const uint64_t got = f32b(c.fn(b));
      const uint64_t want = oracle(c.f, b, NF::F32, Overflow::Ieee);
      if (got != want && ++bad <= 5) FAIL_CHECK(format_name(c.f) << " " << b << ": " << got << " != " << want);
    }
    CHECK(bad == 0);
  }
  // Spot values from SPV_EXT_float8 / OCP: E4M3 max 448, E5M2 max 57344.
  CHECK(e4m3_to_f32(0x7e) == 448.0f);
  CHECK(std::isnan(e4m3_to_f32(0x7f)));
  CHECK(e4m3_to_f32(0x78) == 256.0f);  // exponent 1111 is finite in E4M3
  CHECK(e4m3_to_f32(0x01) == std::ldexp(1.0f, -9));
  CHECK(e5m2_to_f32(0x7b) == 57344.0f);
  CHECK(std::isinf(e5m2_to_f32(0x7c)));
  CHECK(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));
}

TEST_CASE("encode: f32 to fp16/bf16/fp8 equals the nearest-value search", "[number_formats]") {
  const auto in = f32_samples();
  for (Overflow o : {Overflow::Ieee, Overflow::Saturate}) {
    int bad = 0;
    for (uint64_t b : in) {
      const float x = std::bit_cast<float>(uint32_t(b));
      const uint64_t got[] = {f32_to_e4m3(x, o), f32_to_e5m2(x, o)};
      const NF fs[] = {NF::E4M3, NF::E5M2};
      for (int k = 0; k < 2; ++k) {
        const uint64_t want = oracle(NF::F32, b, fs[k], o);
        if (got[k] != want && ++bad <= 8) FAIL_CHECK(format_name(fs[k]) << " of " << b << ": " << got[k] << " != " << want);
      }
      if (o == Overflow::Ieee) {
        if (f32_to_f16(x) != oracle(NF::F32, b, NF::F16, o) && ++bad <= 8) FAIL_CHECK("f16 of " << b);
        if (f32_to_bf16(x) != oracle(NF::F32, b, NF::BF16, o) && ++bad <= 8) FAIL_CHECK("bf16 of " << b);
      }
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("encode: fp8 overflow and saturation follow SPV_EXT_float8", "[number_formats]") {
  CHECK(f32_to_e4m3(448.f, Overflow::Ieee) == 0x7e);
  CHECK(f32_to_e4m3(464.f, Overflow::Ieee) == 0x7e);  // tie to even (1.110)
  CHECK(f32_to_e4m3(465.f, Overflow::Ieee) == 0x7f);  // rounds past 448: NaN
  CHECK(f32_to_e4m3(-1e9f, Overflow::Ieee) == 0xff);
  CHECK(f32_to_e4m3(1e9f, Overflow::Saturate) == 0x7e);
  CHECK(f32_to_e4m3(INFINITY, Overflow::Ieee) == 0x7f);
  CHECK(f32_to_e4m3(INFINITY, Overflow::Saturate) == 0x7e);
  CHECK(f32_to_e4m3(-INFINITY, Overflow::Saturate) == 0xfe);
  CHECK(f32_to_e4m3(NAN, Overflow::Saturate) == 0x7f);  // NaN is not saturated
  CHECK(f32_to_e5m2(57344.f, Overflow::Ieee) == 0x7b);
  CHECK(f32_to_e5m2(61439.f, Overflow::Ieee) == 0x7b);
  CHECK(f32_to_e5m2(61440.f, Overflow::Ieee) == 0x7c);
  CHECK(f32_to_e5m2(-INFINITY, Overflow::Ieee) == 0xfc);
  CHECK(f32_to_e5m2(-INFINITY, Overflow::Saturate) == 0xfb);
  CHECK((f32_to_e5m2(NAN, Overflow::Saturate) & 0x7f) > 0x7c);
  CHECK(f32_to_f16(65520.f) == 0x7c00);
  CHECK(f32_to_f16(65519.f) == 0x7bff);
  CHECK(f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);        // tie to even zero
  CHECK(f32_to_f16(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(f32_to_bf16(std::bit_cast<float>(0x00018000u)) == 0x0002);  // bf16 denormal tie
  CHECK(f32_to_e4m3(std::ldexp(1.0f, -10), Overflow::Ieee) == 0x00);
  CHECK(f32_to_e4m3(std::ldexp(1.0f, -10) * 1.0001f, Overflow::Ieee) == 0x01);
}

TEST_CASE("integer rules: round half to even, saturate, NaN to zero", "[number_formats]") {
  auto conv = [](NF sf, uint64_t b, NF df) {
    uint64_t out = 0;
    REQUIRE(convert_scalar(sf, b, df, &out));
    return out;
  };
  CHECK(conv(NF::F32, f32b(2.5f), NF::I8) == 2);
  CHECK(conv(NF::F32, f32b(3.5f), NF::I8) == 4);
  CHECK(conv(NF::F32, f32b(-2.5f), NF::I8) == 0xfe);
  CHECK(conv(NF::F32, f32b(300.f), NF::I8) == 127);
  CHECK(conv(NF::F32, f32b(-300.f), NF::I8) == 0x80);
  CHECK(conv(NF::F32, f32b(NAN), NF::I8) == 0);
  CHECK(conv(NF::F32, f32b(-1.f), NF::U8) == 0);
  CHECK(conv(NF::F32, f32b(INFINITY), NF::U8) == 255);
  CHECK(conv(NF::F32, f32b(3e9f), NF::I32) == 0x7fffffff);
  CHECK(conv(NF::I32, uint32_t(-5), NF::U8) == 0);
  CHECK(conv(NF::I32, 300, NF::I8) == 127);
  CHECK(conv(NF::U64, ~0ull, NF::I64) == 0x7fffffffffffffffull);
  CHECK(conv(NF::I64, 1ull << 63, NF::I32) == 0x80000000ull);
  CHECK(conv(NF::I32, 65520, NF::F16) == 0x7c00);
  CHECK(conv(NF::I32, 500, NF::E4M3) == 0x7f);
}

TEST_CASE("scalar reference: every pair matches the oracle", "[number_formats]") {
  for (NF sf : kAll) {
    const auto in = samples(sf);
    for (NF df : kAll)
      for (Overflow o : {Overflow::Ieee, Overflow::Saturate}) {
        int bad = 0;
        for (uint64_t b : in) {
          uint64_t got = 0;
          REQUIRE(convert_scalar(sf, b, df, &got, o));
          const uint64_t want = oracle(sf, b, df, o);
          if (got != want && ++bad <= 3)
            FAIL_CHECK(format_name(sf) << "->" << format_name(df) << " sat=" << int(o) << " in=" << b
                                       << " got=" << got << " want=" << want);
        }
        if (bad) FAIL_CHECK(format_name(sf) << "->" << format_name(df) << ": " << bad << " mismatches");
      }
  }
}

TEST_CASE("bulk convert equals the scalar reference on every arch", "[number_formats]") {
  ArchGuard guard;
  const auto list = arches();
  INFO("arches supported: " << list.size());
  CHECK(std::find(list.begin(), list.end(), KernelArch::Portable) != list.end());
  for (KernelArch a : list) {
    REQUIRE(force_kernel_arch(a));
    REQUIRE(active_kernel_arch() == a);
    for (NF sf : kAll) {
      const auto bits = samples(sf);
      std::vector<uint8_t> in;
      store(sf, in, bits);
      for (NF df : kAll)
        for (Overflow o : {Overflow::Ieee, Overflow::Saturate}) {
          const size_t ds = format_size(df);
          std::vector<uint8_t> out(bits.size() * ds + 64, 0xcd);
          REQUIRE(convert(sf, in.data(), df, out.data(), bits.size(), o));
          int bad = 0;
          for (size_t i = 0; i < bits.size(); ++i) {
            uint64_t want = 0;
            convert_scalar(sf, bits[i], df, &want, o);
            const uint64_t got = load(df, &out[i * ds]);
            if (got != want && ++bad <= 3)
              FAIL_CHECK(kernel_arch_name(a) << " " << format_name(sf) << "->" << format_name(df)
                                             << " sat=" << int(o) << " in=" << bits[i] << " got=" << got
                                             << " want=" << want);
          }
          if (bad) FAIL_CHECK(kernel_arch_name(a) << " " << format_name(sf) << "->" << format_name(df) << ": " << bad << " mismatches");
          for (size_t i = bits.size() * ds; i < out.size(); ++i) REQUIRE(out[i] == 0xcd);
        }
    }
  }
}

TEST_CASE("bulk convert at ragged lengths and offsets writes exactly n elements", "[number_formats]") {
  ArchGuard guard;
  const size_t lengths[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 100, 1023, 1025, 2049};
  for (KernelArch a : arches()) {
    REQUIRE(force_kernel_arch(a));
    for (NF sf : kAll) {
      auto bits = samples(sf);
      bits.resize(std::min<size_t>(bits.size(), 4000));
      std::vector<uint8_t> in;
      store(sf, in, bits);
      for (NF df : kAll) {
        const size_t ss = format_size(sf), ds = format_size(df);
        for (size_t n : lengths)
          for (size_t off : {size_t{0}, size_t{3}}) {
            if (off + n > bits.size()) continue;
            std::vector<uint8_t> out((n + 8) * ds, 0xa5);
            REQUIRE(convert(sf, in.data() + off * ss, df, out.data() + ds, n, Overflow::Saturate));
            bool ok = true;
            for (size_t i = 0; i < n; ++i) {
              uint64_t want = 0;
              convert_scalar(sf, bits[off + i], df, &want, Overflow::Saturate);
              ok &= load(df, &out[(i + 1) * ds]) == want;
            }
            for (size_t i = 0; i < ds; ++i) ok &= out[i] == 0xa5;
            for (size_t i = (n + 1) * ds; i < out.size(); ++i) ok &= out[i] == 0xa5;
            if (!ok) FAIL_CHECK(kernel_arch_name(a) << " " << format_name(sf) << "->" << format_name(df) << " n=" << n << " off=" << off);
          }
      }
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
// Shaders may run with FTZ/DAZ set in MXCSR (DenormFlushToZero); conversions must not
// flush anyway, so the vector code must not lean on the float unit's denormal handling.
TEST_CASE("bulk convert is unaffected by MXCSR FTZ/DAZ", "[number_formats]") {
  ArchGuard guard;
  const unsigned saved_csr = _mm_getcsr();
  const NF floats[] = {NF::F32, NF::F16, NF::BF16, NF::E4M3, NF::E5M2, NF::I8, NF::I32};
  for (KernelArch a : arches()) {
    REQUIRE(force_kernel_arch(a));
    for (NF sf : floats) {
      const auto bits = samples(sf);
      std::vector<uint8_t> in;
      store(sf, in, bits);
      for (NF df : floats) {
        const size_t ds = format_size(df);
        std::vector<uint8_t> out(bits.size() * ds);
        _mm_setcsr(saved_csr | 0x8040);  // FTZ | DAZ
        const bool ok = convert(sf, in.data(), df, out.data(), bits.size(), Overflow::Ieee);
        _mm_setcsr(saved_csr);
        REQUIRE(ok);
        int bad = 0;
        for (size_t i = 0; i < bits.size(); ++i) {
          uint64_t want = 0;
          convert_scalar(sf, bits[i], df, &want);
          bad += load(df, &out[i * ds]) != want;
        }
        if (bad) FAIL_CHECK(kernel_arch_name(a) << " " << format_name(sf) << "->" << format_name(df) << ": " << bad << " mismatches under FTZ/DAZ");
      }
    }
  }
}
#endif

TEST_CASE("unsupported pairs return false and write nothing", "[number_formats]") {
  const NF bogus = NF(200);
  uint8_t src[16] = {1, 2, 3}, dst[16];
  std::memset(dst, 0x5a, sizeof dst);
  CHECK_FALSE(convert(bogus, src, NF::F32, dst, 4));
  CHECK_FALSE(convert(NF::F32, src, bogus, dst, 4));
  for (uint8_t b : dst) CHECK(b == 0x5a);
  uint64_t out = 7;
  CHECK_FALSE(convert_scalar(bogus, 0, NF::F32, &out));
  CHECK(out == 7);
}

TEST_CASE("arch selection: portable can be forced, unsupported archs are refused", "[number_formats]") {
  ArchGuard guard;
  CHECK(force_kernel_arch(KernelArch::Scalar));
  CHECK(active_kernel_arch() == KernelArch::Scalar);
  if (kernel_arch_supported(KernelArch::Portable)) {
    CHECK(force_kernel_arch(KernelArch::Portable));
    CHECK(active_kernel_arch() == KernelArch::Portable);
  }
  for (KernelArch a : {KernelArch::Avx2, KernelArch::Avx512})
    if (!kernel_arch_supported(a)) {
      const KernelArch before = active_kernel_arch();
      CHECK_FALSE(force_kernel_arch(a));
      CHECK(active_kernel_arch() == before);
    }
  CHECK(best_kernel_arch() != KernelArch::Scalar);
}
