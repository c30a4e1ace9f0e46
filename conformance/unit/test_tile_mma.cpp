// Tile multiply-add (tile_mma.h) against computations written here, independently of the
// library: integers exactly in 128-bit arithmetic then wrapped or saturated; floats from
// values the test builds itself (small integers times powers of two, so every partial sum
// is exact in the accumulator and the only rounding is the final one), and a tolerance
// bound on random inputs. Then every kernel path this CPU runs (each KernelArch, with and
// without each CPU extension) against the reference: integers bit for bit, floats bit for bit
// on the exact inputs and within the bound on random ones.
//
// Paths the CPU lacks are reported ("not supported on this CPU") and skipped, not failed:
// this binary needs only libc and libstdc++, so it can be copied to an AVX-512 machine.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch_test_macros.hpp>

#include "coopvk/kernels/cpu_dispatch.h"
#include "coopvk/kernels/number_formats.h"
#include "coopvk/kernels/tile_mma.h"
#include "tile_mma_emulated.h"

using namespace coopvk::kernels;
using NF = NumberFormat;
using i128 = __int128;

namespace {

// ---- the supported set, as the design states it ----

constexpr NF kFormats[] = {NF::F32, NF::F16, NF::BF16, NF::E4M3, NF::E5M2, NF::F64, NF::I8,
                           NF::U8,  NF::I16, NF::U16,  NF::I32,  NF::U32,  NF::I64, NF::U64};

bool is_float(NF f) { return f <= NF::F64; }
bool is_signed(NF f) { return f == NF::I8 || f == NF::I16 || f == NF::I32 || f == NF::I64; }
int bits_of(NF f) { return int(format_size(f)) * 8; }
bool is_fp8(NF f) { return f == NF::E4M3 || f == NF::E5M2; }

bool expected_supported(NF a, NF b, NF c, NF d, bool sat) {
  if (is_float(d)) {
    if (sat || c != d) return false;
    if (a == b && (a == NF::F32 || a == NF::F64)) return d == a;
    if (a == b && (a == NF::F16 || a == NF::BF16)) return d == NF::F32 || d == a;
    if (is_fp8(a) && is_fp8(b)) return d == NF::F32 || d == NF::F16 || (a == b && d == a);
    return false;
  }
  if (is_float(a) || is_float(b) || is_float(c) || bits_of(a) != bits_of(b) || bits_of(c) != bits_of(d))
    return false;
  const int in = bits_of(a), out = bits_of(d);
  return (in == 8 && (out == 32 || out == 8)) || (in == 16 && (out == 32 || out == 16)) || (in == 32 && out == 32);
}

struct Combo {
  NF a, b, c, d;
  bool sat;
};

std::vector<Combo> all_combos() {
  std::vector<Combo> out;
  for (NF a : kFormats)
    for (NF b : kFormats)
      for (NF c : kFormats)
        for (NF d : kFormats)
          for (bool s : {false, true})
            if (expected_supported(a, b, c, d, s)) out.push_back({a, b, c, d, s});
  return out;
}

std::string name(const Combo& c) {
  std::string s = std::string(format_name(c.a)) + "x" + format_name(c.b) + "+" + format_name(c.c) +
                  "->" + format_name(c.d);
  return c.sat ? s + " sat" : s;
}

// ---- kernel paths ----

// A real path is an arch with CPU extensions; an emulated one (tile_mma_emulated.h) has its
// own kernels.
struct Path {
  const char* name;
  KernelArch arch;
  uint32_t features;
  TileMmaFn (*emulated)(const TileMmaDesc&) = nullptr;
  bool (*emulated_packed)(const TileMmaDesc&, TileMmaPacked*) = nullptr;
};
constexpr Path kPaths[] = {
    {"scalar", KernelArch::Scalar, 0},
    {"portable", KernelArch::Portable, 0},
    {"avx2", KernelArch::Avx2, 0},
    {"avx2+avxvnni", KernelArch::Avx2, kAvxVnni},
    {"avx512", KernelArch::Avx512, 0},
    {"avx512+vnni", KernelArch::Avx512, kAvx512Vnni},
    {"avx512+bf16", KernelArch::Avx512, kAvx512Bf16},
    {"avx512+fp16", KernelArch::Avx512, kAvx512Fp16},
    {"avx512+vnni+amx", KernelArch::Avx512, kAvx512Vnni | kAmxInt8},
};

bool runnable(const Path& p) {
  return kernel_arch_supported(p.arch) && (p.features & ~cpu_features()) == 0;
}

std::vector<Path> runnable_paths(bool with_emulated = true) {
  std::vector<Path> out;
  for (const Path& p : kPaths)
    if (runnable(p)) out.push_back(p);
  if (with_emulated)
    for (const EmulatedPath& e : emulated_paths())
      out.push_back({e.name, KernelArch::Scalar, 0, e.kernel, e.packed});
  return out;
}

struct PathGuard {
  KernelArch arch = active_kernel_arch();
  uint32_t features = active_cpu_features();
  ~PathGuard() {
    force_kernel_arch(arch);
    restrict_cpu_features(features);
  }
};

void use(const Path& p) {
  REQUIRE(force_kernel_arch(p.arch));
  REQUIRE(restrict_cpu_features(p.features));
}

// The path's kernel for a descriptor; nullptr where an emulated family has none for it.
TileMmaFn kernel_for(const Path& p, const TileMmaDesc& d) {
  if (p.emulated) return p.emulated(d);
  use(p);
  const TileMmaFn fn = tile_mma_kernel(d);
  REQUIRE(fn != nullptr);
  return fn;
}

// The path's split kernel (tile_mma_packed()) into *out; false where it has none.
bool packed_for(const Path& p, const TileMmaDesc& d, TileMmaPacked* out) {
  if (p.emulated) return p.emulated_packed(d, out);
  use(p);
  return tile_mma_packed(d, out);
}

// ---- tiles ----

struct Tile {
  NF f;
  size_t count;
  std::vector<uint8_t> bytes;
  Tile(NF fmt, size_t n) : f(fmt), count(n), bytes(n * format_size(fmt) + 1) {}
  uint64_t get(size_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + i * format_size(f), format_size(f));
    return v;
  }
  void set(size_t i, uint64_t v) { std::memcpy(bytes.data() + i * format_size(f), &v, format_size(f)); }
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
};

struct Shape {
  uint32_t m, n, k;
};
// The JIT's shapes, odd ones, and ones that cross the kernels' 32 x 32 x 64 blocks.
constexpr Shape kShapes[] = {{16, 16, 16}, {16, 8, 16}, {16, 8, 8},  {8, 8, 8},  {16, 16, 32},
                             {16, 8, 32},  {8, 8, 32},  {3, 5, 7},   {17, 9, 33}, {1, 1, 1},
                             {5, 24, 4},   {4, 48, 12}, {33, 40, 65}, {2, 70, 130}};

// ---- integers ----

i128 int_value(NF f, uint64_t bits) {
  const int w = bits_of(f);
  if (w < 64) bits &= (uint64_t(1) << w) - 1;
  if (is_signed(f) && w < 64 && (bits >> (w - 1)) & 1) return i128(bits) - (i128(1) << w);
  return is_signed(f) ? i128(int64_t(bits)) : i128(bits);
}
i128 int_min(NF f) { return is_signed(f) ? -(i128(1) << (bits_of(f) - 1)) : 0; }
i128 int_max(NF f) { return is_signed(f) ? (i128(1) << (bits_of(f) - 1)) - 1 : (i128(1) << bits_of(f)) - 1; }

uint64_t random_int(NF f, std::mt19937_64& rng) {
  const uint64_t mask = bits_of(f) == 64 ? ~0ull : (1ull << bits_of(f)) - 1;
  switch (rng() % 8) {
    case 0: return uint64_t(int_min(f)) & mask;
    case 1: return uint64_t(int_max(f)) & mask;
    case 2: return uint64_t(int_max(f) - 1) & mask;
    default: return rng() & mask;
  }
}

// C near either end of D's range half the time, so that saturation happens.
uint64_t random_c(NF c, NF d, std::mt19937_64& rng) {
  const uint64_t mask = (1ull << bits_of(c)) - 1;
  if (rng() % 2) return random_int(c, rng);
  const i128 near = rng() % 2 ? int_max(d) - i128(rng() % 4096) : int_min(d) + i128(rng() % 4096);
  const i128 clamped = near < int_min(c) ? int_min(c) : near > int_max(c) ? int_max(c) : near;
  return uint64_t(clamped) & mask;
}

struct IntExpect {
  std::vector<uint64_t> bits;
  int hit_lo = 0, hit_hi = 0;  // saturated at either end
};

IntExpect naive_int(const Combo& t, const Shape& s, const Tile& a, const Tile& b, const Tile& c) {
  IntExpect e;
  const uint64_t mask = (1ull << bits_of(t.d)) - 1;
  for (uint32_t i = 0; i < s.m; ++i)
    for (uint32_t j = 0; j < s.n; ++j) {
      i128 sum = int_value(t.c, c.get(i * s.n + j));
      for (uint32_t kk = 0; kk < s.k; ++kk)
        sum += int_value(t.a, a.get(i * s.k + kk)) * int_value(t.b, b.get(kk * s.n + j));
      if (t.sat && sum < int_min(t.d)) sum = int_min(t.d), ++e.hit_lo;
      if (t.sat && sum > int_max(t.d)) sum = int_max(t.d), ++e.hit_hi;
      e.bits.push_back(uint64_t(sum) & mask);
    }
  return e;
}

// ---- floats ----

uint64_t encode(NF f, double v) {
  switch (f) {
    case NF::F64: return std::bit_cast<uint64_t>(v);
    case NF::F32: return std::bit_cast<uint32_t>(float(v));
    case NF::F16: return f32_to_f16(float(v));
    case NF::BF16: return f32_to_bf16(float(v));
    case NF::E4M3: return f32_to_e4m3(float(v), Overflow::Ieee);
    case NF::E5M2: return f32_to_e5m2(float(v), Overflow::Ieee);
    default: return 0;
  }
}

double decode(NF f, uint64_t bits) {
  switch (f) {
    case NF::F64: return std::bit_cast<double>(bits);
    case NF::F32: return std::bit_cast<float>(uint32_t(bits));
    case NF::F16: return f16_to_f32(uint16_t(bits));
    case NF::BF16: return bf16_to_f32(uint16_t(bits));
    case NF::E4M3: return e4m3_to_f32(uint8_t(bits));
    case NF::E5M2: return e5m2_to_f32(uint8_t(bits));
    default: return 0;
  }
}

// Unit roundoff of a format's significand.
double unit_roundoff(NF f) {
  switch (f) {
    case NF::F64: return std::ldexp(1.0, -53);
    case NF::F32: return std::ldexp(1.0, -24);
    case NF::F16: return std::ldexp(1.0, -11);
    case NF::E4M3: return std::ldexp(1.0, -4);
    case NF::E5M2: return std::ldexp(1.0, -3);
    default: return std::ldexp(1.0, -8);  // bf16
  }
}

// Half the spacing of the subnormals: the absolute error of rounding a tiny value to f.
double subnormal_half_step(NF f) {
  switch (f) {
    case NF::E4M3: return std::ldexp(1.0, -10);
    case NF::E5M2: return std::ldexp(1.0, -17);
    default: return 0;  // below the tests' magnitudes
  }
}

// Fills A, B, C with s * 2^e: |s| <= 3 for A and B (all exact in E5M2, the narrowest), |s| <=
// 32 for C at A's and B's combined exponent. Every partial sum is then an integer below
// 32 + 9 * 130 < 2^11 times 2^(ea + eb): exact in f16, hence in every accumulator.
void exact_inputs(const Combo& t, const Shape& s, Tile& a, Tile& b, Tile& c, std::vector<double>& av,
                  std::vector<double>& bv, std::vector<double>& cv, std::mt19937_64& rng) {
  const int ea = int(rng() % 8) - 4, eb = int(rng() % 8) - 4;
  auto small = [&](int range) { return int(rng() % (2 * range + 1)) - range; };
  av.resize(a.count), bv.resize(b.count), cv.resize(c.count);
  for (size_t i = 0; i < a.count; ++i) a.set(i, encode(t.a, av[i] = std::ldexp(small(3), ea)));
  for (size_t i = 0; i < b.count; ++i) b.set(i, encode(t.b, bv[i] = std::ldexp(small(3), eb)));
  for (size_t i = 0; i < c.count; ++i) {
    // A float8 C cannot hold every such value: the sum starts from what C does hold.
    c.set(i, encode(t.c, std::ldexp(small(32), ea + eb)));
    cv[i] = decode(t.c, c.get(i));
  }
}

// Random inputs: A, B in [-2, 2], C in [-4, 4], each rounded to its format.
void random_inputs(const Combo& t, Tile& a, Tile& b, Tile& c, std::vector<double>& av,
                   std::vector<double>& bv, std::vector<double>& cv, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto fill = [&](Tile& x, std::vector<double>& v, double scale) {
    v.resize(x.count);
    for (size_t i = 0; i < x.count; ++i) {
      x.set(i, encode(x.f, scale * u(rng)));
      v[i] = decode(x.f, x.get(i));
    }
  };
  fill(a, av, 2.0), fill(b, bv, 2.0), fill(c, cv, 4.0);
}

struct Run {
  Tile d;
  Tile d_in_place;  // the same, computed with D = C
};

Run run_kernel(TileMmaFn fn, const Combo& t, const Shape& s, const Tile& a, const Tile& b, const Tile& c) {
  Run r{Tile(t.d, c.count), c};
  fn(a.data(), b.data(), c.data(), r.d.data(), s.m, s.n, s.k);
  fn(a.data(), b.data(), r.d_in_place.data(), r.d_in_place.data(), s.m, s.n, s.k);
  return r;
}

Tile reference(const Combo& t, const Shape& s, const Tile& a, const Tile& b, const Tile& c) {
  Tile d(t.d, c.count);
  REQUIRE(tile_mma_reference({t.a, t.b, t.c, t.d, s.m, s.n, s.k, t.sat}, a.data(), b.data(), c.data(), d.data()));
  return d;
}

// Counts differing elements of two tiles; NaN equals NaN (payloads are unspecified).
size_t mismatches(const Tile& x, const Tile& y) {
  size_t bad = 0;
  for (size_t i = 0; i < x.count; ++i) {
    const uint64_t p = x.get(i), q = y.get(i);
    if (p == q) continue;
    if (is_float(x.f) && std::isnan(decode(x.f, p)) && std::isnan(decode(x.f, q))) continue;
    ++bad;
  }
  return bad;
}

// Runs body(t, s, a, b, c) for every supported combination with a float D (or an integer
// one) and every shape, with tiles of the case's sizes; done(t) after each combination.
template <class Body, class Done>
void each_case(bool floats, Body body, Done done) {
  for (const Combo& t : all_combos()) {
    if (is_float(t.d) != floats) continue;
    INFO(name(t));
    for (const Shape& s : kShapes) {
      INFO(s.m << "x" << s.n << "x" << s.k);
      Tile a(t.a, s.m * s.k), b(t.b, s.k * s.n), c(t.c, s.m * s.n);
      body(t, s, a, b, c);
    }
    done(t);
  }
}

// Runs check(path, results) for each path that has a kernel for the case.
template <class Check>
void each_kernel(const std::vector<Path>& paths, const Combo& t, const Shape& s, const Tile& a,
                 const Tile& b, const Tile& c, Check check) {
  for (const Path& p : paths) {
    INFO(p.name);
    const TileMmaFn fn = kernel_for(p, {t.a, t.b, t.c, t.d, s.m, s.n, s.k, t.sat});
    if (fn) check(p, run_kernel(fn, t, s, a, b, c));
  }
}

void require_equal(const Run& r, const Tile& want) {
  REQUIRE(mismatches(r.d, want) == 0);
  REQUIRE(mismatches(r.d_in_place, want) == 0);
}

}  // namespace

TEST_CASE("tile_mma: the supported combinations are exactly the designed ones", "[tile_mma]") {
  PathGuard guard;
  size_t count = 0;
  for (NF a : kFormats)
    for (NF b : kFormats)
      for (NF c : kFormats)
        for (NF d : kFormats)
          for (bool s : {false, true}) {
            const TileMmaDesc desc{a, b, c, d, 16, 16, 16, s};
            const bool want = expected_supported(a, b, c, d, s);
            count += want;
            INFO(name({a, b, c, d, s}));
            REQUIRE(tile_mma_supported(desc) == want);
            if (!want) {
              uint8_t buf[64] = {};
              CHECK_FALSE(tile_mma_reference({a, b, c, d, 1, 1, 1, s}, buf, buf, buf, buf));
            }
            for (const Path& p : runnable_paths(false)) {
              use(p);
              INFO(p.name);
              REQUIRE((tile_mma_kernel(desc) != nullptr) == want);
            }
          }
  CHECK(count == 16 + 5 * 32);
}

TEST_CASE("tile_mma: every path of the design is run or reported", "[tile_mma]") {
  for (const Path& p : kPaths) {
    if (runnable(p))
      SUCCEED(p.name);
    else
      WARN(p.name << ": not supported on this CPU, skipped");
  }
  if (emulated_paths().empty()) WARN("emulated AVX-512 families: need AVX2, skipped");
}

TEST_CASE("tile_mma: integers match 128-bit arithmetic on every path", "[tile_mma]") {
  PathGuard guard;
  const auto paths = runnable_paths();
  std::mt19937_64 rng(1);
  int lo = 0, hi = 0;
  auto body = [&](const Combo& t, const Shape& s, Tile& a, Tile& b, Tile& c) {
    for (size_t i = 0; i < a.count; ++i) a.set(i, random_int(t.a, rng));
    for (size_t i = 0; i < b.count; ++i) b.set(i, random_int(t.b, rng));
    for (size_t i = 0; i < c.count; ++i) c.set(i, random_c(t.c, t.d, rng));
    const IntExpect want = naive_int(t, s, a, b, c);
    lo += want.hit_lo, hi += want.hit_hi;
    const Tile ref = reference(t, s, a, b, c);
    size_t bad = 0;
    for (size_t i = 0; i < ref.count; ++i) bad += ref.get(i) != want.bits[i];
    REQUIRE(bad == 0);
    each_kernel(paths, t, s, a, b, c, [&](const Path&, const Run& r) { require_equal(r, ref); });
  };
  auto done = [&](const Combo& t) {
    if (t.sat) {
      // Each end was reached where C plus the largest sum of products the shapes allow can
      // reach it, the low end where products can be negative (C alone taking an unsigned D
      // below 0 is the next test's).
      const i128 ends[] = {int_min(t.a) * int_min(t.b), int_min(t.a) * int_max(t.b),
                           int_max(t.a) * int_min(t.b), int_max(t.a) * int_max(t.b)};
      const i128 k = 130, most = std::max({ends[0], ends[1], ends[2], ends[3]}) * k,
                 least = std::min({ends[0], ends[1], ends[2], ends[3]}) * k;
      if (int_max(t.c) + most > int_max(t.d)) CHECK(hi > 0);
      if (least < 0 && int_min(t.c) + least < int_min(t.d)) CHECK(lo > 0);
    }
    lo = hi = 0;
  };
  each_case(false, body, done);
}

TEST_CASE("tile_mma: integer saturation at both ends, and wrapping", "[tile_mma]") {
  PathGuard guard;
  // 1 x 2 x 2, s8 x s8: column 0 sums 127 * 127 + -128 * 1 = 16001, column 1
  // 127 * -127 + -128 * 1 = -16257.
  const int8_t a[2] = {127, -128};
  const int8_t b[4] = {127, -127, 1, 1};
  const int32_t c[2] = {INT32_MAX - 10, INT32_MIN + 10};
  const int32_t cu[2] = {-5, 7};
  for (const Path& p : runnable_paths()) {
    INFO(p.name);
    auto mma = [&](NF fa, NF fb, NF fc, NF fd, bool sat) { return kernel_for(p, {fa, fb, fc, fd, 1, 2, 2, sat}); };
    if (!mma(NF::I8, NF::I8, NF::I32, NF::I32, true)) continue;
    int32_t d[2];
    mma(NF::I8, NF::I8, NF::I32, NF::I32, true)(a, b, c, d, 1, 2, 2);
    CHECK(d[0] == INT32_MAX);
    CHECK(d[1] == INT32_MIN);
    mma(NF::I8, NF::I8, NF::I32, NF::I32, false)(a, b, c, d, 1, 2, 2);
    CHECK(uint32_t(d[0]) == uint32_t(INT32_MAX - 10) + 16001u);
    CHECK(uint32_t(d[1]) == uint32_t(INT32_MIN + 10) - 16257u);
    // Unsigned D: C's own signedness counts (-5 as I32), a negative total clamps to 0.
    uint32_t u[2];
    mma(NF::I8, NF::I8, NF::I32, NF::U32, true)(a, b, cu, u, 1, 2, 2);
    CHECK(u[0] == 16001u - 5u);
    CHECK(u[1] == 0u);
    mma(NF::I8, NF::I8, NF::I32, NF::U32, false)(a, b, cu, u, 1, 2, 2);
    CHECK(u[1] == uint32_t(7 - 16257));
    // u8 x u8 is never negative; C alone takes D below 0.
    const uint8_t ua[2] = {1, 2}, ub[4] = {3, 0, 4, 0};  // column 0: 1*3 + 2*4 = 11, column 1: 0
    const int32_t cn[2] = {-20, -1};
    mma(NF::U8, NF::U8, NF::I32, NF::U32, true)(ua, ub, cn, u, 1, 2, 2);
    CHECK(u[0] == 0u);
    CHECK(u[1] == 0u);
    mma(NF::U8, NF::U8, NF::I32, NF::U32, true)(ua, ub, cu, u, 1, 2, 2);
    CHECK(u[0] == 6u);
    CHECK(u[1] == 7u);
  }
}

TEST_CASE("tile_mma: floats on exact inputs match the exact sum rounded once", "[tile_mma]") {
  PathGuard guard;
  const auto paths = runnable_paths();
  std::mt19937_64 rng(2);
  std::vector<double> av, bv, cv;
  auto body = [&](const Combo& t, const Shape& s, Tile& a, Tile& b, Tile& c) {
    exact_inputs(t, s, a, b, c, av, bv, cv, rng);
    Tile want(t.d, c.count);
    for (uint32_t i = 0; i < s.m; ++i)
      for (uint32_t j = 0; j < s.n; ++j) {
        double sum = cv[i * s.n + j];  // every partial sum is exact in double too
        for (uint32_t kk = 0; kk < s.k; ++kk) sum += av[i * s.k + kk] * bv[kk * s.n + j];
        want.set(i * s.n + j, encode(t.d, sum));
      }
    const Tile ref = reference(t, s, a, b, c);
    REQUIRE(mismatches(ref, want) == 0);
    each_kernel(paths, t, s, a, b, c, [&](const Path&, const Run& r) { require_equal(r, ref); });
  };
  each_case(true, body, [](const Combo&) {});
}

// Bound on random inputs, with u the accumulator's unit roundoff (f32; f64 for f64; f16 on
// the AVX512-FP16 path) and u_d D's: |D - exact| <= gamma * (|C| + sum |A B|) + u_d |exact|,
// gamma = n u / (1 - n u) with n = 2k + 2 - every step may round its product and its sum
// (multiply-then-add, or vdpbf16ps's two additions), and D's conversion rounds once more.
TEST_CASE("tile_mma: floats on random inputs stay within the rounding bound", "[tile_mma]") {
  PathGuard guard;
  const auto paths = runnable_paths();
  std::mt19937_64 rng(3);
  std::vector<double> av, bv, cv;
  auto body = [&](const Combo& t, const Shape& s, Tile& a, Tile& b, Tile& c) {
    random_inputs(t, a, b, c, av, bv, cv, rng);
    std::vector<long double> exact(c.count), magnitude(c.count);
    for (uint32_t i = 0; i < s.m; ++i)
      for (uint32_t j = 0; j < s.n; ++j) {
        long double sum = cv[i * s.n + j], mag = std::fabs(cv[i * s.n + j]);
        for (uint32_t kk = 0; kk < s.k; ++kk) {
          const long double prod = (long double)av[i * s.k + kk] * bv[kk * s.n + j];
          sum += prod, mag += std::fabs(prod);
        }
        exact[i * s.n + j] = sum, magnitude[i * s.n + j] = mag;
      }
    each_kernel(paths, t, s, a, b, c, [&](const Path& p, const Run& r) {
      const bool f16_acc = (p.features & kAvx512Fp16) && t.a == NF::F16 && t.d == NF::F16;
      const NF acc = t.d == NF::F64 ? NF::F64 : f16_acc ? NF::F16 : NF::F32;
      const double steps = 2.0 * s.k + 2, u = unit_roundoff(acc);
      const double gamma = steps * u / (1 - steps * u), ud = unit_roundoff(t.d);
      size_t bad = 0;
      for (size_t i = 0; i < c.count; ++i) {
        const long double err = std::fabs((long double)decode(t.d, r.d.get(i)) - exact[i]);
        if (err > gamma * magnitude[i] + ud * std::fabs(exact[i]) + subnormal_half_step(t.d) && ++bad <= 4)
          FAIL_CHECK("element " << i << ": " << decode(t.d, r.d.get(i)) << " vs " << double(exact[i]));
      }
      REQUIRE(bad == 0);
      REQUIRE(mismatches(r.d_in_place, r.d) == 0);
    });
  };
  each_case(true, body, [](const Combo&) {});
}

TEST_CASE("tile_mma: every f16, bf16 and fp8 code widens exactly", "[tile_mma]") {
  // D (f32) = A x B + (-0): with A = 1 each code of B comes out as its value, and with B = 1
  // each code of A (-0 keeps the sign of zero codes).
  PathGuard guard;
  for (NF f : {NF::F16, NF::BF16, NF::E4M3, NF::E5M2}) {
    INFO(format_name(f));
    const uint32_t codes = f == NF::F16 || f == NF::BF16 ? 65536 : 256;
    Tile all(f, codes), one(f, 1);
    for (uint32_t i = 0; i < codes; ++i) all.set(i, i);
    one.set(0, encode(f, 1.0));
    std::vector<float> neg_zero(codes, -0.0f), d(codes);
    for (const Path& p : runnable_paths()) {
      INFO(p.name);
      const TileMmaFn fn = kernel_for(p, {f, f, NF::F32, NF::F32, 1, 1, 1});
      if (!fn) continue;
      for (bool b_side : {true, false}) {
        INFO((b_side ? "B" : "A"));
        if (b_side)
          fn(one.data(), all.data(), neg_zero.data(), d.data(), 1, codes, 1);
        else
          fn(all.data(), one.data(), neg_zero.data(), d.data(), codes, 1, 1);
        size_t bad = 0;
        for (uint32_t i = 0; i < codes; ++i) {
          const double want = decode(f, i);
          if (std::isnan(want) ? std::isnan(d[i]) : std::bit_cast<uint32_t>(d[i]) == std::bit_cast<uint32_t>(float(want)))
            continue;
          // vdpbf16ps adds k's zero pad as a pair, so zero's sign is not kept, and on the real
          // instruction denormal inputs count as zero (tile_mma.h).
          const bool pairs = f == NF::BF16 && std::strstr(p.name, "bf16") != nullptr;
          const bool flushes = pairs && !p.emulated;
          if (pairs && want == 0 && d[i] == 0) continue;
          if (flushes && std::fpclassify(float(want)) == FP_SUBNORMAL && d[i] == 0) continue;  // an f32 denormal
          if (++bad <= 4) FAIL_CHECK("code " << i << ": " << d[i] << " != " << want);
        }
        REQUIRE(bad == 0);
      }
    }
  }
}

TEST_CASE("tile_mma: NaN propagates and k = 0 gives C", "[tile_mma]") {
  PathGuard guard;
  for (const Combo& t : all_combos()) {
    INFO(name(t));
    const Shape s{5, 16, 3};
    Tile a(t.a, s.m * s.k), b(t.b, s.k * s.n), c(t.c, s.m * s.n);
    std::mt19937_64 rng(4);
    for (size_t i = 0; i < c.count; ++i) c.set(i, is_float(t.c) ? encode(t.c, double(i)) : random_int(t.c, rng));
    for (size_t i = 0; i < a.count; ++i) a.set(i, is_float(t.a) ? encode(t.a, 1.0) : 1);
    for (size_t i = 0; i < b.count; ++i) b.set(i, is_float(t.b) ? encode(t.b, 1.0) : 1);
    if (is_float(t.a)) a.set(1 * s.k + 2, encode(t.a, NAN));  // row 1
    const Tile ref0 = reference(t, {s.m, s.n, 0}, a, b, c);
    for (const Path& p : runnable_paths()) {
      INFO(p.name);
      const TileMmaFn fn = kernel_for(p, {t.a, t.b, t.c, t.d, s.m, s.n, s.k, t.sat});
      if (!fn) continue;
      Tile d(t.d, c.count);
      fn(a.data(), b.data(), c.data(), d.data(), s.m, s.n, 0);
      REQUIRE(mismatches(d, ref0) == 0);
      if (!is_float(t.d)) continue;
      fn(a.data(), b.data(), c.data(), d.data(), s.m, s.n, s.k);
      for (uint32_t i = 0; i < s.m; ++i)
        for (uint32_t j = 0; j < s.n; ++j) REQUIRE(std::isnan(decode(t.d, d.get(i * s.n + j))) == (i == 1));
    }
  }
}

TEST_CASE("tile_mma: a kernel looked up for one shape runs any other", "[tile_mma]") {
  // The hot shapes get fixed copies (tile_mma.h); called with another shape they must still
  // compute it.
  PathGuard guard;
  std::mt19937_64 rng(5);
  const Combo combos[] = {{NF::F16, NF::F16, NF::F32, NF::F32, false}, {NF::I8, NF::I8, NF::I32, NF::I32, false},
                          {NF::F16, NF::F16, NF::F16, NF::F16, false}, {NF::BF16, NF::BF16, NF::F32, NF::F32, false}};
  const Shape s{17, 9, 33};
  std::vector<double> av, bv, cv;
  for (const Combo& t : combos) {
    INFO(name(t));
    Tile a(t.a, s.m * s.k), b(t.b, s.k * s.n), c(t.c, s.m * s.n);
    if (is_float(t.d)) {
      exact_inputs(t, s, a, b, c, av, bv, cv, rng);
    } else {
      for (size_t i = 0; i < a.count; ++i) a.set(i, random_int(t.a, rng));
      for (size_t i = 0; i < b.count; ++i) b.set(i, random_int(t.b, rng));
      for (size_t i = 0; i < c.count; ++i) c.set(i, random_int(t.c, rng));
    }
    const Tile ref = reference(t, s, a, b, c);
    for (const Path& p : runnable_paths()) {
      INFO(p.name);
      const uint32_t k = is_float(t.d) ? 16 : 32;
      const TileMmaFn fn = kernel_for(p, {t.a, t.b, t.c, t.d, 16, 16, k});
      if (fn) require_equal(run_kernel(fn, t, s, a, b, c), ref);
    }
  }
}

TEST_CASE("tile_mma: the split form computes the whole kernel's bits from packed operands", "[tile_mma]") {
  // pack_a / pack_b / mma (what the JIT uses for operands shared by several multiply-adds)
  // against the kernel of the same path, bit for bit, on random inputs: in place and not,
  // with the packed operands moved to another address and their sources overwritten first
  // (a packed operand must hold values, not pointers). Then which forms must exist: the
  // JIT's hot shapes on every x86 path.
  PathGuard guard;
  std::mt19937_64 rng(11);
  size_t tested = 0;
  for (const Path& p : runnable_paths()) {
    INFO(p.name);
    for (const Combo& t : all_combos())
      for (const Shape& s : kShapes) {
        INFO(name(t) << " " << s.m << "x" << s.n << "x" << s.k);
        const TileMmaDesc desc{t.a, t.b, t.c, t.d, s.m, s.n, s.k, t.sat};
        TileMmaPacked pk;
        if (!packed_for(p, desc, &pk)) {
          REQUIRE(pk.mma == nullptr);
          continue;
        }
        REQUIRE((pk.pack_a && pk.pack_b && pk.a_bytes > 0 && pk.b_bytes > 0));
        Tile a(t.a, s.m * s.k), b(t.b, s.k * s.n), c(t.c, s.m * s.n);
        std::vector<double> av, bv, cv;
        if (is_float(t.d)) {
          random_inputs(t, a, b, c, av, bv, cv, rng);
        } else {
          for (size_t i = 0; i < a.count; ++i) a.set(i, random_int(t.a, rng));
          for (size_t i = 0; i < b.count; ++i) b.set(i, random_int(t.b, rng));
          for (size_t i = 0; i < c.count; ++i) c.set(i, random_c(t.c, t.d, rng));
        }
        const TileMmaFn whole = p.emulated ? p.emulated(desc) : tile_mma_kernel(desc);
        REQUIRE(whole != nullptr);
        const Run want = run_kernel(whole, t, s, a, b, c);
        std::vector<uint8_t> ap(pk.a_bytes), bp(pk.b_bytes);
        pk.pack_a(a.data(), s.k, ap.data());
        pk.pack_b(b.data(), s.n, bp.data());
        {  // from rows further apart (a tile in a larger buffer): the same packed bytes
          const size_t ea = format_size(t.a), eb = format_size(t.b), lda = s.k + 3, ldb = s.n + 5;
          std::vector<uint8_t> wide_a(s.m * lda * ea, 0x5a), wide_b(s.k * ldb * eb, 0xa5);
          for (uint32_t r = 0; r < s.m; ++r) std::memcpy(&wide_a[r * lda * ea], &a.bytes[r * s.k * ea], s.k * ea);
          for (uint32_t r = 0; r < s.k; ++r) std::memcpy(&wide_b[r * ldb * eb], &b.bytes[r * s.n * eb], s.n * eb);
          std::vector<uint8_t> ap_wide(pk.a_bytes), bp_wide(pk.b_bytes);
          pk.pack_a(wide_a.data(), lda, ap_wide.data());
          pk.pack_b(wide_b.data(), ldb, bp_wide.data());
          REQUIRE(ap_wide == ap);
          REQUIRE(bp_wide == bp);
        }
        std::vector<uint8_t> ap2(ap.size() + 3), bp2(bp.size() + 5);  // another, unaligned place
        std::memcpy(ap2.data() + 3, ap.data(), ap.size());
        std::memcpy(bp2.data() + 5, bp.data(), bp.size());
        Tile a_junk = a, b_junk = b;
        for (auto* x : {&a_junk, &b_junk}) std::fill(x->bytes.begin(), x->bytes.end(), uint8_t(0x5a));
        Run got{Tile(t.d, c.count), c};
        pk.mma(ap2.data() + 3, bp2.data() + 5, c.data(), got.d.data());
        pk.mma(ap.data(), bp.data(), got.d_in_place.data(), got.d_in_place.data());
        REQUIRE(got.d.bytes == want.d.bytes);
        REQUIRE(got.d_in_place.bytes == want.d_in_place.bytes);
        ++tested;
      }
  }
  // The forms the JIT relies on: f16 -> f32 and s8 -> s32 at their largest hot shapes.
  for (const Path& p : runnable_paths(false)) {
    if (p.arch != KernelArch::Avx2 && p.arch != KernelArch::Avx512) continue;
    INFO(p.name);
    TileMmaPacked pk;
    CHECK(packed_for(p, {NF::F16, NF::F16, NF::F32, NF::F32, 16, 16, 16}, &pk));
    CHECK(packed_for(p, {NF::I8, NF::I8, NF::I32, NF::I32, 16, 16, 32}, &pk));
    CHECK(packed_for(p, {NF::F32, NF::F32, NF::F32, NF::F32, 16, 8, 8}, &pk));
    // Saturating and f16-accumulating kernels keep their accumulators elsewhere: none.
    CHECK_FALSE(packed_for(p, {NF::I8, NF::I8, NF::I32, NF::I32, 16, 16, 32, true}, &pk));
    CHECK_FALSE(packed_for(p, {NF::F16, NF::F16, NF::F16, NF::F16, 16, 16, 16}, &pk));
    // Shapes without a fixed copy: none either.
    CHECK_FALSE(packed_for(p, {NF::F16, NF::F16, NF::F32, NF::F32, 17, 9, 33}, &pk));
  }
  // Where AMX runs, the s8 parts are its own (B packed as k x n bytes, no fix-up row), so the
  // loop above tested the tile instructions and not VNNI's parts again.
  if (cpu_has_amxint8()) {
    REQUIRE(force_kernel_arch(KernelArch::Avx512));
    REQUIRE(restrict_cpu_features(kAvx512Vnni | kAmxInt8));
    for (const Shape s : {Shape{16, 16, 32}, Shape{16, 8, 32}, Shape{8, 8, 32}}) {
      TileMmaPacked pk;
      REQUIRE(tile_mma_packed({NF::I8, NF::U8, NF::I32, NF::I32, s.m, s.n, s.k}, &pk));
      CHECK(pk.b_bytes == s.k * s.n);
      CHECK(pk.a_bytes == s.m * s.k);
    }
  }
  INFO("split forms tested: " << tested);
  REQUIRE(tested > 0);
}

TEST_CASE("tile_mma: mma2 is two multiply-adds sharing A, whatever the operands overlap", "[tile_mma]") {
  // mma2(a, b0, c0, d0, b1, c1, d1) against mma(a, b0, c0, d0) then mma(a, b1, c1, d1) on
  // copies of the same bytes, bit for bit: results apart from everything (the fused path),
  // in place (a register block's tiles), the second accumulating onto the first's result,
  // both results in one place, and the first result written over the second's B.
  PathGuard guard;
  std::mt19937_64 rng(12);
  size_t tested = 0;
  for (const Path& p : runnable_paths()) {
    INFO(p.name);
    for (const Combo& t : all_combos())
      for (const Shape& s : kShapes) {
        const TileMmaDesc desc{t.a, t.b, t.c, t.d, s.m, s.n, s.k, t.sat};
        TileMmaPacked pk;
        if (!packed_for(p, desc, &pk)) continue;
        INFO(name(t) << " " << s.m << "x" << s.n << "x" << s.k);
        REQUIRE(pk.mma2 != nullptr);
        Tile a(t.a, s.m * s.k), b0(t.b, s.k * s.n), b1(t.b, s.k * s.n), c0(t.c, s.m * s.n), c1(t.c, s.m * s.n);
        std::vector<double> av, bv, cv;
        if (is_float(t.d)) {
          random_inputs(t, a, b0, c0, av, bv, cv, rng);
          random_inputs(t, a, b1, c1, av, bv, cv, rng);
        } else {
          for (Tile* x : {&a, &b0, &b1})
            for (size_t i = 0; i < x->count; ++i) x->set(i, random_int(x == &a ? t.a : t.b, rng));
          for (Tile* x : {&c0, &c1})
            for (size_t i = 0; i < x->count; ++i) x->set(i, random_c(t.c, t.d, rng));
        }
        // One arena of slots: A, B0, B1 packed, then accumulator slots, each big enough for
        // any of them; a case names the slot of each operand.
        const size_t acc = size_t(s.m) * s.n * format_size(t.d);
        // (plus a row, so that a result shifted by one row stays inside its slot)
        const size_t slot = std::max({size_t(pk.a_bytes), size_t(pk.b_bytes), acc}) + size_t(s.n) * format_size(t.d);
        enum { kA, kB0, kB1, kX, kY, kZ, kW, kSlots };
        std::vector<uint8_t> init(kSlots * slot);
        pk.pack_a(a.data(), s.k, &init[kA * slot]);
        pk.pack_b(b0.data(), s.n, &init[kB0 * slot]);
        pk.pack_b(b1.data(), s.n, &init[kB1 * slot]);
        std::memcpy(&init[kX * slot], c0.data(), acc);
        std::memcpy(&init[kY * slot], c1.data(), acc);
        struct Case {
          const char* what;
          int c0, d0, b1, c1, d1;
        };
        const Case cases[] = {{"apart", kX, kZ, kB1, kY, kW},
                              {"in place", kX, kX, kB1, kY, kY},
                              {"chained", kX, kZ, kB1, kZ, kZ},
                              {"one result", kX, kZ, kB1, kY, kZ},
                              {"over B1", kX, kB1, kB1, kY, kY}};
        for (const Case& k : cases) {
          INFO(k.what);
          std::vector<uint8_t> want(init), got(init);
          auto at = [&](std::vector<uint8_t>& m, int i) { return m.data() + size_t(i) * slot; };
          pk.mma(at(want, kA), at(want, kB0), at(want, k.c0), at(want, k.d0));
          pk.mma(at(want, kA), at(want, k.b1), at(want, k.c1), at(want, k.d1));
          pk.mma2(at(got, kA), at(got, kB0), at(got, k.c0), at(got, k.d0), at(got, k.b1), at(got, k.c1),
                  at(got, k.d1));
          REQUIRE(got == want);
        }
        {  // the first result one row past its own C: must equal the two calls too
          std::vector<uint8_t> want(init), got(init);
          const size_t row = size_t(s.n) * format_size(t.d);
          uint8_t* wd0 = want.data() + kX * slot + row;
          uint8_t* gd0 = got.data() + kX * slot + row;
          pk.mma(&want[kA * slot], &want[kB0 * slot], &want[kX * slot], wd0);
          pk.mma(&want[kA * slot], &want[kB1 * slot], &want[kY * slot], &want[kY * slot]);
          pk.mma2(&got[kA * slot], &got[kB0 * slot], &got[kX * slot], gd0, &got[kB1 * slot], &got[kY * slot],
                  &got[kY * slot]);
          INFO("shifted by a row");
          REQUIRE(got == want);
        }
        ++tested;
      }
  }
  INFO("forms tested: " << tested);
  REQUIRE(tested > 0);
}
