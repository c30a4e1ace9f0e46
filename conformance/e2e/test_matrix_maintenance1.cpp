// VK_EXT_cooperative_matrix_maintenance1 through the loader: the extension and its five
// features, vkGetPhysicalDeviceCooperativeMatrixProperties2EXT against the KHR list and
// the rules of the seed texts, and the shader side for every accumulator component type
// and shape the device lists, at every subgroup size it allows: Row (add), Column (max),
// Row|Column (min) and 2x2 (a user function that branches) reductions, a per-element
// callback with coordinates, an extra scalar, a second matrix, a branch and a nested call,
// OpCooperativeMatrixGetCoordinateEXT for every component index, and use conversions with
// and without transpose and with a component-type change. The same shaders in
// VK_NV_cooperative_matrix2's spelling (nv2_*: its reduce, per-element, convert and
// transpose-to-B forms, no coordinates) run on a device that enabled only NV2's three
// features, which VK_NV_cooperative_matrix2 is listed with. Each is checked against a
// scalar reference computed here; inputs are small integers, so float results are exact
// (or rounded once, as the reference rounds them) and integer results wrap exactly as the
// component type does (compared bit for bit).
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "compute_job.h"
#include "coopmat_test_env.h"
#include "matrix_reference.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

// The accumulator types the m1_* shaders exist for (m1_variants.cmake), and the type each
// one's use-changing value conversion goes to.
struct M1Type {
  VkComponentTypeKHR t;
  NumberFormat f;
  const char* tag;
  NumberFormat u;
};
const M1Type kTypes[] = {
    {VK_COMPONENT_TYPE_FLOAT32_KHR, NumberFormat::F32, "f32", NumberFormat::F16},
    {VK_COMPONENT_TYPE_FLOAT16_KHR, NumberFormat::F16, "f16", NumberFormat::F32},
    {VK_COMPONENT_TYPE_SINT32_KHR, NumberFormat::I32, "s32", NumberFormat::I8},
    {VK_COMPONENT_TYPE_UINT32_KHR, NumberFormat::U32, "u32", NumberFormat::U8},
    {VK_COMPONENT_TYPE_SINT16_KHR, NumberFormat::I16, "s16", NumberFormat::I32},
    {VK_COMPONENT_TYPE_UINT16_KHR, NumberFormat::U16, "u16", NumberFormat::U32},
    {VK_COMPONENT_TYPE_SINT8_KHR, NumberFormat::I8, "s8", NumberFormat::I32},
    {VK_COMPONENT_TYPE_UINT8_KHR, NumberFormat::U8, "u8", NumberFormat::U32},
    {VK_COMPONENT_TYPE_BFLOAT16_KHR, NumberFormat::BF16, "bf16", NumberFormat::F32},
    {VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT, NumberFormat::E4M3, "e4m3", NumberFormat::F32},
    {VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT, NumberFormat::E5M2, "e5m2", NumberFormat::F32},
};
bool is_float8(NumberFormat f) { return f == NumberFormat::E4M3 || f == NumberFormat::E5M2; }
VkComponentTypeKHR component_of(NumberFormat f) {
  for (const M1Type& t : kTypes)
    if (t.f == f) return t.t;
  return VK_COMPONENT_TYPE_MAX_ENUM_KHR;
}

// Which (rows, cols) shapes the device's entries give a type in a use.
enum class Use { A, B, Acc };
std::set<std::pair<uint32_t, uint32_t>> shapes(const std::vector<VkCooperativeMatrixPropertiesKHR>& props,
                                               VkComponentTypeKHR t, Use use) {
  std::set<std::pair<uint32_t, uint32_t>> out;
  for (const auto& p : props) {
    if (use == Use::A && p.AType == t) out.insert({p.MSize, p.KSize});
    if (use == Use::B && p.BType == t) out.insert({p.KSize, p.NSize});
    if (use == Use::Acc && (p.CType == t || p.ResultType == t)) out.insert({p.MSize, p.NSize});
  }
  return out;
}

// The value a T-typed operation gives for the exact result v: integers wrap at T's width,
// floats round to nearest even.
double as_type(NumberFormat f, double v) { return decode(f, encode(f, v)); }

// Inputs for a reduction test: small integers, so every combination order gives the same
// exact result. Float8 holds few integers (E5M2 not 9), and a Row|Column sum adds the
// whole tile, so there a tile has at most 8 nonzero elements, each +-1: every partial sum
// of any order is an integer of magnitude <= 8, exact in both.
void reduction_inputs(NumberFormat f, std::mt19937& rng, uint32_t tiles, uint32_t tile, std::vector<uint8_t>& buf,
                      std::vector<double>& v) {
  v.assign(size_t(tiles) * tile, 0.0);
  if (is_float8(f)) {
    std::uniform_int_distribution<uint32_t> pos(0, tile - 1);
    for (uint32_t t = 0; t < tiles; ++t)
      for (int k = 0; k < 8; ++k) v[t * tile + pos(rng)] = rng() % 2 ? 1.0 : -1.0;
  } else {
    std::uniform_int_distribution<int> dist(is_int_format(f) && !is_signed_format(f) ? 0 : -4, 4);
    for (double& x : v) x = dist(rng);
  }
  for (size_t i = 0; i < v.size(); ++i) put(buf, i, f, v[i]);
}

constexpr uint32_t kSubgroups = 2, kGroups = 2, kTiles = kSubgroups * kGroups;

ComputeJob m1_job(const std::string& name, uint32_t sg, std::vector<std::pair<uint32_t, std::vector<uint8_t>>> specs) {
  ComputeJob job;
  job.spirv = shader(name);
  specs.insert(specs.begin(), spec(0, kSubgroups * sg));
  job.specialization = specs;
  job.required_subgroup_size = sg;
  job.full_subgroups = true;
  job.groups[0] = kGroups;
  return job;
}

// Which spelling the shaders use: maintenance1 (m1_*) or VK_NV_cooperative_matrix2 (nv2_*).
enum class Flavour { M1, NV2 };
std::string shader_name(Flavour fl, const char* kind, const M1Type& ty) {
  return std::string(fl == Flavour::NV2 ? "nv2_" : "m1_") + kind + "_" + ty.tag;
}

// A device with cooperative matrices and only VK_NV_cooperative_matrix2's reductions,
// conversions and per-element operations.
struct Nv2Device : Nv2MatrixDevice {
  Nv2Device() {
    nv2.cooperativeMatrixReductions = nv2.cooperativeMatrixConversions = nv2.cooperativeMatrixPerElementOperations = VK_TRUE;
  }
};

// m1_ops: reductions, per-element, coordinates (maintenance1 only), on tiles of M x N.
void check_ops(Device& dev, const M1Type& ty, uint32_t M, uint32_t N, uint32_t sg, Flavour fl) {
  INFO(ty.tag << " " << M << "x" << N << " at subgroup size " << sg);
  const NumberFormat f = ty.f;
  const uint32_t tile = M * N;
  std::vector<uint8_t> X(kTiles * tile * coopvk::kernels::format_size(f)), Y(X.size()),
      O(kTiles * tile * 13 * coopvk::kernels::format_size(f), 0xCD), Coord(kTiles * tile * 16 + 64, 0xEE);
  std::mt19937 rng(M * 7 + N * 3 + sg);
  std::vector<double> x, y;
  reduction_inputs(f, rng, kTiles, tile, X, x);
  reduction_inputs(f, rng, kTiles, tile, Y, y);
  ComputeJob job = m1_job(shader_name(fl, "ops", ty), sg, {spec(1, M), spec(2, N)});
  job.buffers = {&X, &Y, &O, &Coord};
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t t = 0; t < kTiles; ++t) {
    auto at = [&](const std::vector<double>& v, uint32_t r, uint32_t c) { return v[t * tile + r * N + c]; };
    // Per line (row, column, whole tile): sum, min, max; `larger` is max again.
    struct Acc {
      double sum = 0, lo = 0, hi = 0;
      bool any = false;
      void add(double v) {
        sum += v;
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
      }
    };
    std::vector<Acc> rows(M), cols(N);
    Acc all;
    for (uint32_t r = 0; r < M; ++r)
      for (uint32_t c = 0; c < N; ++c) {
        rows[r].add(at(x, r, c));
        cols[c].add(at(x, r, c));
        all.add(at(x, r, c));
      }
    const size_t base = size_t(t) * tile * 13;
    for (uint32_t r = 0; r < M; ++r)
      for (uint32_t c = 0; c < N; ++c) {
        INFO("tile " << t << " (" << r << ", " << c << ")");
        const size_t e = r * N + c;
        const Acc* line[3] = {&rows[r], &cols[c], &all};
        for (int mode = 0; mode < 3; ++mode) {
          INFO("mode " << (mode == 0 ? "Row" : mode == 1 ? "Column" : "Row|Column"));
          CHECK(get_bits(O, base + (4 * mode + 0) * tile + e, f) == encode(f, as_type(f, line[mode]->sum)));
          CHECK(get_bits(O, base + (4 * mode + 1) * tile + e, f) == encode(f, line[mode]->lo));
          CHECK(get_bits(O, base + (4 * mode + 2) * tile + e, f) == encode(f, line[mode]->hi));
          CHECK(get_bits(O, base + (4 * mode + 3) * tile + e, f) == encode(f, line[mode]->hi));
        }
        // per_element(r, c, v, k = 3, w): even r + c: 2v + w - T(c), odd: 3v - w + T(r),
        // computed exactly (in T for integers) and rounded once.
        double v = at(x, r, c), w = at(y, r, c);
        double want = (r + c) % 2 == 0 ? 2 * v + w - as_type(f, double(c)) : 3 * v - w + as_type(f, double(r));
        CHECK(get_bits(O, base + 12 * tile + e, f) == encode(f, as_type(f, want)));
      }
  }
  // Coordinates: every (lane, component) of every tile names an element holding the
  // component's value, and together they name each element exactly once.
  if (fl == Flavour::NV2) {
    for (uint8_t byte : Coord) REQUIRE(byte == 0xEE);  // the NV2 shader has no coordinate query
    return;
  }
  const uint32_t len = tile / sg;
  for (uint32_t t = 0; t < kTiles; ++t) {
    std::vector<int> seen(tile, 0);
    for (uint32_t i = 0; i < len; ++i)
      for (uint32_t l = 0; l < sg; ++l) {
        uint32_t q[4];
        std::memcpy(q, Coord.data() + ((size_t(t) * len + i) * sg + l) * 16, 16);
        INFO("tile " << t << " component " << i << " lane " << l << ": (" << q[0] << ", " << q[1] << ")");
        REQUIRE(q[3] == len);
        REQUIRE(q[0] < M);
        REQUIRE(q[1] < N);
        ++seen[q[0] * N + q[1]];
        CHECK(uint64_t(q[2]) == (encode(f, x[t * tile + q[0] * N + q[1]]) & 0xFFFFFFFFu));
      }
    for (uint32_t e = 0; e < tile; ++e) CHECK(seen[e] == 1);
  }
}

// m1_quad: 2x2 reduction of M x N to (M/2) x (N/2) with `larger`.
void check_quad(Device& dev, const M1Type& ty, uint32_t M, uint32_t N, uint32_t sg, Flavour fl) {
  INFO(ty.tag << " 2x2 of " << M << "x" << N << " at subgroup size " << sg);
  const NumberFormat f = ty.f;
  const uint32_t tile = M * N, half = tile / 4;
  std::vector<uint8_t> X(kTiles * tile * coopvk::kernels::format_size(f)), Y(16),
      O(kTiles * half * 5 * coopvk::kernels::format_size(f), 0xCD), C(16);
  std::mt19937 rng(M + N + sg);
  std::vector<double> x;
  reduction_inputs(f, rng, kTiles, tile, X, x);
  ComputeJob job = m1_job(shader_name(fl, "quad", ty), sg, {spec(1, M), spec(2, N)});
  job.buffers = {&X, &Y, &O, &C};
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t t = 0; t < kTiles; ++t) {
    double sum = 0;
    for (uint32_t e = 0; e < tile; ++e) sum += x[t * tile + e];
    for (uint32_t r = 0; r < M / 2; ++r)
      for (uint32_t c = 0; c < N / 2; ++c) {
        auto v = [&](uint32_t i, uint32_t j) { return x[t * tile + i * N + j]; };
        const double q[4] = {v(2 * r, 2 * c), v(2 * r + 1, 2 * c), v(2 * r, 2 * c + 1), v(2 * r + 1, 2 * c + 1)};
        INFO("tile " << t << " (" << r << ", " << c << ")");
        const size_t at = size_t(t) * half * 5 + r * (N / 2) + c;
        CHECK(get_bits(O, at, f) == encode(f, as_type(f, q[0] + q[1] + q[2] + q[3])));
        CHECK(get_bits(O, at + half, f) == encode(f, std::min({q[0], q[1], q[2], q[3]})));
        CHECK(get_bits(O, at + 2 * half, f) == encode(f, std::max({q[0], q[1], q[2], q[3]})));
        CHECK(get_bits(O, at + 3 * half, f) == encode(f, std::max({q[0], q[1], q[2], q[3]})));
        CHECK(get_bits(O, at + 4 * half, f) == encode(f, as_type(f, sum)));  // Row|Column into the half size
      }
  }
}

// m1_convert: S x S accumulator -> transposed A, B, back to an accumulator, and to U as A.
void check_convert(Device& dev, const M1Type& ty, uint32_t S, uint32_t sg, Flavour fl) {
  INFO(ty.tag << " conversions at " << S << "x" << S << ", subgroup size " << sg);
  const NumberFormat f = ty.f, u = ty.u;
  const uint32_t tile = S * S;
  std::vector<uint8_t> X(kTiles * tile * coopvk::kernels::format_size(f)), Y(16),
      O(kTiles * tile * 3 * coopvk::kernels::format_size(f), 0xCD), U(kTiles * tile * coopvk::kernels::format_size(u), 0xCD);
  std::mt19937 rng(S * 5 + sg);
  std::uniform_int_distribution<int> dist(is_int_format(f) && !is_signed_format(f) ? 0 : -100, 100);
  std::vector<double> x(kTiles * tile);
  for (size_t i = 0; i < x.size(); ++i) put(X, i, f, x[i] = as_type(f, dist(rng)));  // what X holds
  ComputeJob job = m1_job(shader_name(fl, "convert", ty), sg, {spec(1, S)});
  job.buffers = {&X, &Y, &O, &U};
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t t = 0; t < kTiles; ++t)
    for (uint32_t r = 0; r < S; ++r)
      for (uint32_t c = 0; c < S; ++c) {
        INFO("tile " << t << " (" << r << ", " << c << ")");
        const size_t base = size_t(t) * tile * 3;
        double v = x[t * tile + r * S + c];
        CHECK(get_bits(O, base + c * S + r, f) == encode(f, v));             // transposed (A; NV2: B)
        CHECK(get_bits(O, base + tile + r * S + c, f) == encode(f, v));      // as B
        // Back from the transposed A (NV2: the transposed B stored column-major): x's layout again.
        CHECK(get_bits(O, base + 2 * tile + r * S + c, f) == encode(f, v));
        // To U: integers truncate to U's width (OpSConvert / OpUConvert), floats round.
        CHECK(get_bits(U, t * tile + r * S + c, u) == encode(u, v));
      }
}

std::vector<uint32_t> subgroup_size_list(VkPhysicalDevice pd) {
  auto sc = subgroup_sizes(pd);
  std::vector<uint32_t> out;
  for (uint32_t s = sc.minSubgroupSize; s <= sc.maxSubgroupSize; s *= 2) out.push_back(s);
  return out;
}

using Combo = std::tuple<uint32_t, uint32_t, uint32_t, VkComponentTypeKHR, VkComponentTypeKHR, VkComponentTypeKHR,
                         VkComponentTypeKHR>;

PFN_vkGetPhysicalDeviceCooperativeMatrixProperties2EXT properties2(const Instance& inst) {
  auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixProperties2EXT>(
      vkGetInstanceProcAddr(inst.instance, "vkGetPhysicalDeviceCooperativeMatrixProperties2EXT"));
  REQUIRE(fn);
  return fn;
}

VkPhysicalDeviceCooperativeMatrixInfo2EXT info2(VkScopeKHR scope, uint32_t subgroup_size, VkCooperativeMatrixFlagsEXT flags) {
  VkPhysicalDeviceCooperativeMatrixInfo2EXT i{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_INFO_2_EXT};
  i.scope = scope;
  i.subgroupSize = subgroup_size;
  i.flags = flags;
  return i;
}

std::multiset<Combo> query2(const Instance& inst, const VkPhysicalDeviceCooperativeMatrixInfo2EXT& i) {
  auto fn = properties2(inst);
  uint32_t n = 0;
  REQUIRE(fn(inst.physical, &i, &n, nullptr) == VK_SUCCESS);
  std::vector<VkCooperativeMatrixProperties2EXT> p(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT});
  REQUIRE(fn(inst.physical, &i, &n, p.data()) == VK_SUCCESS);
  REQUIRE(n == p.size());
  std::multiset<Combo> out;
  for (const auto& e : p) {
    CHECK(e.sType == VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT);
    out.insert({e.MGranularity, e.NGranularity, e.KGranularity, e.AType, e.BType, e.CType, e.ResultType});
  }
  return out;
}

}  // namespace

TEST_CASE("VK_EXT_cooperative_matrix_maintenance1 is advertised with all five features, and a device enables them") {
  Instance inst;
  uint32_t count = 0;
  REQUIRE(vkEnumerateDeviceExtensionProperties(inst.physical, nullptr, &count, nullptr) == VK_SUCCESS);
  std::vector<VkExtensionProperties> exts(count);
  REQUIRE(vkEnumerateDeviceExtensionProperties(inst.physical, nullptr, &count, exts.data()) == VK_SUCCESS);
  CHECK(std::count_if(exts.begin(), exts.end(), [](const VkExtensionProperties& e) {
          return std::string(e.extensionName) == VK_EXT_COOPERATIVE_MATRIX_MAINTENANCE_1_EXTENSION_NAME;
        }) == 1);
  VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT m1{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_MAINTENANCE_1_FEATURES_EXT};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &m1};
  vkGetPhysicalDeviceFeatures2(inst.physical, &f2);
  CHECK(m1.cooperativeMatrixProperties2 == VK_TRUE);
  CHECK(m1.cooperativeMatrixReductions == VK_TRUE);
  CHECK(m1.cooperativeMatrixConversions == VK_TRUE);
  CHECK(m1.cooperativeMatrixPerElementOperations == VK_TRUE);
  CHECK(m1.cooperativeMatrixGetCoordinate == VK_TRUE);
  MatrixDevice md(false, true);
  Device dev(md.opts);
  CHECK(dev.device != VK_NULL_HANDLE);
}

TEST_CASE("vkGetPhysicalDeviceCooperativeMatrixProperties2EXT through the loader follows the seed rules") {
  Instance inst;
  const auto khr = matrix_properties(inst);
  std::multiset<Combo> plain, saturating;
  for (const auto& p : khr) {
    REQUIRE(p.scope == VK_SCOPE_SUBGROUP_KHR);
    (p.saturatingAccumulation ? saturating : plain)
        .insert({p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType, p.ResultType});
  }
  REQUIRE(!plain.empty());
  REQUIRE(!saturating.empty());
  // subgroupSize 0 (a varying size) and every size the device allows: the same entries,
  // each KHR entry once, split by the saturating flag.
  CHECK(query2(inst, info2(VK_SCOPE_SUBGROUP_KHR, 0, 0)) == plain);
  CHECK(query2(inst, info2(VK_SCOPE_SUBGROUP_KHR, 0, VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT)) == saturating);
  for (uint32_t s : subgroup_size_list(inst.physical)) {
    INFO("subgroup size " << s);
    CHECK(query2(inst, info2(VK_SCOPE_SUBGROUP_KHR, s, 0)) == plain);
    CHECK(query2(inst, info2(VK_SCOPE_SUBGROUP_KHR, s, VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT)) ==
          saturating);
  }
  auto fn = properties2(inst);
  const auto i = info2(VK_SCOPE_SUBGROUP_KHR, 0, 0);
  const uint32_t total = uint32_t(plain.size());
  // The two-call idiom with arrays too short by one and by all: VK_INCOMPLETE, exactly
  // that many written, in the full answer's order, nothing past them.
  std::vector<VkCooperativeMatrixProperties2EXT> full(total, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT});
  uint32_t n = total;
  REQUIRE(fn(inst.physical, &i, &n, full.data()) == VK_SUCCESS);
  for (uint32_t room : {total - 1, 0u}) {
    INFO("room for " << room);
    VkCooperativeMatrixProperties2EXT sentinel;
    std::memset(static_cast<void*>(&sentinel), 0x5A, sizeof(sentinel));
    std::vector<VkCooperativeMatrixProperties2EXT> out(total + 1, sentinel);
    for (uint32_t k = 0; k < room; ++k) out[k] = {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT};
    n = room;
    CHECK(fn(inst.physical, &i, &n, out.data()) == VK_INCOMPLETE);
    CHECK(n == room);
    for (uint32_t k = 0; k < room; ++k) CHECK(out[k].AType == full[k].AType);
    for (uint32_t k = room; k <= total; ++k) CHECK(std::memcmp(&out[k], &sentinel, sizeof(sentinel)) == 0);
  }
  // pNext chains: an unknown structure chained to the info is ignored, and each output
  // structure's sType and pNext stay as the application set them.
  {
    VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT unrelated{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_MAINTENANCE_1_FEATURES_EXT};
    auto chained = i;
    chained.pNext = &unrelated;
    std::vector<VkCooperativeMatrixProperties2EXT> out(total, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT});
    for (auto& o : out) o.pNext = &unrelated;
    n = total;
    REQUIRE(fn(inst.physical, &chained, &n, out.data()) == VK_SUCCESS);
    REQUIRE(n == total);
    for (uint32_t k = 0; k < total; ++k) {
      CHECK(out[k].pNext == &unrelated);
      CHECK(out[k].sType == VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT);
      CHECK(out[k].AType == full[k].AType);
      CHECK(out[k].MGranularity == full[k].MGranularity);
    }
  }
  // An invalid scope, and a workgroup that is not a power of two: an error, a zero count,
  // nothing written.
  for (VkScopeKHR bad : {VK_SCOPE_DEVICE_KHR, VK_SCOPE_WORKGROUP_KHR}) {
    INFO("scope " << bad);
    auto b = info2(bad, 0, 0);
    b.invocations = bad == VK_SCOPE_WORKGROUP_KHR ? 96 : 0;
    VkCooperativeMatrixProperties2EXT sentinel;
    std::memset(static_cast<void*>(&sentinel), 0x5A, sizeof(sentinel));
    std::vector<VkCooperativeMatrixProperties2EXT> out(4, sentinel);
    n = 4;
    CHECK(fn(inst.physical, &b, &n, out.data()) < 0);
    CHECK(n == 0);
    for (const auto& o : out) CHECK(std::memcmp(&o, &sentinel, sizeof(sentinel)) == 0);
  }
}

namespace {
void run_ops(Device& dev, Flavour fl) {
  const auto props = matrix_properties(dev.inst);
  const auto sizes = subgroup_size_list(dev.inst.physical);
  int ops_runs = 0, quad_runs = 0;
  for (const M1Type& ty : kTypes) {
    auto acc = shapes(props, ty.t, Use::Acc);
    CHECK(acc.count({16, 16}) == 1);  // every type has a 16x16 accumulator (cooperative_caps.cpp)
    for (auto [m, n] : acc)
      for (uint32_t sg : sizes) {
        check_ops(dev, ty, m, n, sg, fl);
        ++ops_runs;
        // A 2x2 reduction needs the half-size accumulator type too.
        if (m % 2 == 0 && n % 2 == 0 && acc.count({m / 2, n / 2})) {
          check_quad(dev, ty, m, n, sg, fl);
          ++quad_runs;
        }
      }
  }
  CHECK(ops_runs >= int(std::size(kTypes) * sizes.size()));
  CHECK(quad_runs > 0);
}

void run_conversions(Device& dev, Flavour fl) {
  const auto props = matrix_properties(dev.inst);
  const auto sizes = subgroup_size_list(dev.inst.physical);
  int runs = 0;
  for (const M1Type& ty : kTypes) {
    auto acc = shapes(props, ty.t, Use::Acc), a = shapes(props, ty.t, Use::A), b = shapes(props, ty.t, Use::B),
         ua = shapes(props, component_of(ty.u), Use::A);
    for (uint32_t s : {8u, 16u}) {
      std::pair<uint32_t, uint32_t> sq{s, s};
      if (!acc.count(sq) || !a.count(sq) || !b.count(sq) || !ua.count(sq)) continue;
      for (uint32_t sg : sizes) {
        check_convert(dev, ty, s, sg, fl);
        ++runs;
      }
    }
  }
  CHECK(runs >= int(std::size(kTypes) * sizes.size()));
}

}  // namespace

TEST_CASE("reductions, per-element operations and coordinates on every accumulator type and shape, at every subgroup size") {
  MatrixDevice md(false, true);
  Device dev(md.opts);
  run_ops(dev, Flavour::M1);
}

TEST_CASE("use conversions with and without transpose, and with a component-type change") {
  MatrixDevice md(false, true);
  Device dev(md.opts);
  run_conversions(dev, Flavour::M1);
}

TEST_CASE("VK_NV_cooperative_matrix2 is listed with all seven features") {
  Instance inst;
  REQUIRE(device_extensions(inst.physical).count("VK_NV_cooperative_matrix2"));
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f};
  vkGetPhysicalDeviceFeatures2(inst.physical, &f2);
  CHECK(f.cooperativeMatrixReductions == VK_TRUE);
  CHECK(f.cooperativeMatrixConversions == VK_TRUE);
  CHECK(f.cooperativeMatrixPerElementOperations == VK_TRUE);
  CHECK(f.cooperativeMatrixWorkgroupScope == VK_TRUE);  // e2e_workgroup_matrix
  CHECK(f.cooperativeMatrixFlexibleDimensions == VK_TRUE);
  CHECK(f.cooperativeMatrixTensorAddressing == VK_TRUE);  // e2e_tensor_addressing
  CHECK(f.cooperativeMatrixBlockLoads == VK_TRUE);
  // A device with NV2's features and one the device lacks still fails creation.
  Nv2Device nd;
  nd.md.v13.dynamicRendering = VK_TRUE;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  const float prio = 1.0f;
  q.queueCount = 1;
  q.pQueuePriorities = &prio;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &nd.md.f2};
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  ci.enabledExtensionCount = uint32_t(nd.md.opts.extensions.size());
  ci.ppEnabledExtensionNames = nd.md.opts.extensions.data();
  VkDevice d = VK_NULL_HANDLE;
  CHECK(vkCreateDevice(inst.physical, &ci, nullptr, &d) == VK_ERROR_FEATURE_NOT_PRESENT);
}

TEST_CASE("reductions, per-element operations and conversions in VK_NV_cooperative_matrix2 spelling at subgroup scope") {
  Nv2Device nd;
  Device dev(nd.md.opts);
  run_ops(dev, Flavour::NV2);
  run_conversions(dev, Flavour::NV2);
  // The maintenance1 spellings whose capabilities differ (ConversionsEXT, GetCoordinateEXT)
  // still need maintenance1's features.
  for (const char* name : {"m1_ops_f32", "m1_convert_f32"}) {
    INFO(name);
    std::vector<uint8_t> X(4096 * 4), Y(4096 * 4), O(4096 * 16), C(4096 * 16);
    ComputeJob job = m1_job(name, 8, {spec(1, 16), spec(2, 16)});
    job.buffers = {&X, &Y, &O, &C};
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
}

TEST_CASE("NV2 shape and type changes: a transpose into another component type, a Row sum into 3x the columns, a 2x2 of 2x the shape") {
  Nv2Device nd;
  Device dev(nd.md.opts);
  std::vector<uint8_t> X(32 * 32 * 2), T(16 * 16 * 4, 0xCD), R(16 * 48 * 2, 0xCD), Q(16 * 16 * 2, 0xCD);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<double> x(32 * 32);
  for (size_t i = 0; i < x.size(); ++i) put(X, i, NumberFormat::F16, x[i] = dist(rng));
  ComputeJob job = m1_job("nv2_shapes", 8, {});
  job.groups[0] = 1;
  job.specialization = {spec(0, 8)};
  job.buffers = {&X, &T, &R, &Q};
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t r = 0; r < 16; ++r) {
    double sum = 0;
    for (uint32_t c = 0; c < 16; ++c) sum += x[r * 32 + c];
    for (uint32_t c = 0; c < 16; ++c) {
      INFO("(" << r << ", " << c << ")");
      CHECK(get(T, c * 16 + r, NumberFormat::F32) == x[r * 32 + c]);  // transposed, as f32
      const double m = std::max({x[2 * r * 32 + 2 * c], x[2 * r * 32 + 2 * c + 1], x[(2 * r + 1) * 32 + 2 * c],
                                 x[(2 * r + 1) * 32 + 2 * c + 1]});
      CHECK(get(Q, r * 16 + c, NumberFormat::F16) == m);
    }
    for (uint32_t c = 0; c < 48; ++c) CHECK(get(R, r * 48 + c, NumberFormat::F16) == sum);  // every column
  }
}

TEST_CASE("maintenance1 operations without their features fail pipeline creation, naming the feature") {
  MatrixDevice md;  // cooperative matrices on, maintenance1 features off
  Device dev(md.opts);
  for (const char* name : {"m1_ops_f32", "m1_quad_f32", "m1_convert_f32", "nv2_ops_f32", "nv2_quad_f32", "nv2_convert_f32"}) {
    INFO(name);
    std::vector<uint8_t> X(4096 * 4), Y(4096 * 4), O(4096 * 16), C(4096 * 16);
    ComputeJob job = m1_job(name, 8, {spec(1, 16), spec(2, 16)});
    job.buffers = {&X, &Y, &O, &C};
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
}
