// The cooperative-matrix and cooperative-vector property queries, checked against the
// rules of the spec (spec/vulkan/chapter-shaders-cooperative-matrices-and-vectors.adoc,
// "chapter"; spec/vulkan/chapter-limits-cooperative.adoc, "limits") and against what
// DESIGN.md says real applications need — never against the driver's table itself.
//
// The same checks run twice:
//  - on the built driver, through its own vk_icdGetInstanceProcAddr, with the features and
//    limits the driver reports (VK_NV_cooperative_matrix2 without workgroup scope or
//    flexible dimensions, so its workgroup and flexible entries are not reported);
//  - on the table's query functions (icd/cooperative_caps.cpp, compiled in here) under
//    device facts with the VK_NV_cooperative_matrix2, bfloat16 and float8 features on,
//    i.e. the configuration the table is written for. Those rules only bite once the
//    features are on, so this is how they are tested before the shader side exists.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cooperative_caps.h"
#include "coopvec_vk_info.h"
#include "direct_icd.h"

using namespace coopvk::test;
namespace caps = coopvk::caps;

namespace {

// ---------------------------------------------------------------------------------------
// What the rules are stated against, and the four queries.

struct Facts {
  uint32_t subgroup_size = 0, min_subgroup_size = 0, max_subgroup_size = 0;
  bool subgroup_size_control = false;
  bool workgroup_scope = false, flexible_dimensions = false;
  bool bfloat16 = false, float8 = false, training = false;
  uint32_t workgroup_max = 0;  // cooperativeMatrixWorkgroupScopeMaxWorkgroupSize
  uint32_t max_dimension = 0;  // cooperativeMatrixFlexibleDimensionsMaxDimension
};

struct Queries {
  std::string name;
  Facts facts;
  std::function<VkResult(uint32_t*, VkCooperativeMatrixPropertiesKHR*)> khr;
  std::function<VkResult(const VkPhysicalDeviceCooperativeMatrixInfo2EXT*, uint32_t*,
                         VkCooperativeMatrixProperties2EXT*)>
      ext;
  std::function<VkResult(uint32_t*, VkCooperativeMatrixFlexibleDimensionsPropertiesNV*)> flex;
  std::function<VkResult(uint32_t*, VkCooperativeVectorPropertiesNV*)> vec;
};

template <typename T>
T make_struct(VkStructureType type, void* next = nullptr) {
  T s{};
  s.sType = type;
  s.pNext = next;
  return s;
}

Facts driver_facts(const DirectIcd& icd) {
  Facts f;
  auto cm2p = make_struct<VkPhysicalDeviceCooperativeMatrix2PropertiesNV>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV);
  auto ssc = make_struct<VkPhysicalDeviceSubgroupSizeControlProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES, &cm2p);
  auto sg = make_struct<VkPhysicalDeviceSubgroupProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &ssc);
  auto p2 = make_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg);
  icd.get<PFN_vkGetPhysicalDeviceProperties2>("vkGetPhysicalDeviceProperties2")(icd.physical, &p2);
  f.subgroup_size = sg.subgroupSize;
  f.min_subgroup_size = ssc.minSubgroupSize;
  f.max_subgroup_size = ssc.maxSubgroupSize;
  f.workgroup_max = cm2p.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  f.max_dimension = cm2p.cooperativeMatrixFlexibleDimensionsMaxDimension;

  auto cv = make_struct<VkPhysicalDeviceCooperativeVectorFeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV);
  auto fp8 = make_struct<VkPhysicalDeviceShaderFloat8FeaturesEXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT8_FEATURES_EXT, &cv);
  auto bf16 = make_struct<VkPhysicalDeviceShaderBfloat16FeaturesKHR>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR, &fp8);
  auto cm2 = make_struct<VkPhysicalDeviceCooperativeMatrix2FeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV, &bf16);
  auto size_control = make_struct<VkPhysicalDeviceSubgroupSizeControlFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, &cm2);
  auto f2 = make_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &size_control);
  icd.get<PFN_vkGetPhysicalDeviceFeatures2>("vkGetPhysicalDeviceFeatures2")(icd.physical, &f2);
  f.subgroup_size_control = size_control.subgroupSizeControl;
  f.workgroup_scope = cm2.cooperativeMatrixWorkgroupScope;
  f.flexible_dimensions = cm2.cooperativeMatrixFlexibleDimensions;
  f.bfloat16 = bf16.shaderBFloat16CooperativeMatrix;
  f.float8 = fp8.shaderFloat8CooperativeMatrix;
  f.training = cv.cooperativeVectorTraining;
  return f;
}

Queries driver_queries(const DirectIcd& icd) {
  Queries q;
  q.name = "driver";
  q.facts = driver_facts(icd);
  VkPhysicalDevice pd = icd.physical;
  auto khr = icd.get<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  auto ext = icd.get<PFN_vkGetPhysicalDeviceCooperativeMatrixProperties2EXT>(
      "vkGetPhysicalDeviceCooperativeMatrixProperties2EXT");
  auto flex = icd.get<PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV>(
      "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
  auto vec = icd.get<PFN_vkGetPhysicalDeviceCooperativeVectorPropertiesNV>(
      "vkGetPhysicalDeviceCooperativeVectorPropertiesNV");
  q.khr = [=](uint32_t* n, VkCooperativeMatrixPropertiesKHR* p) { return khr(pd, n, p); };
  q.ext = [=](const VkPhysicalDeviceCooperativeMatrixInfo2EXT* i, uint32_t* n,
              VkCooperativeMatrixProperties2EXT* p) { return ext(pd, i, n, p); };
  q.flex = [=](uint32_t* n, VkCooperativeMatrixFlexibleDimensionsPropertiesNV* p) { return flex(pd, n, p); };
  q.vec = [=](uint32_t* n, VkCooperativeVectorPropertiesNV* p) { return vec(pd, n, p); };
  return q;
}

// The table's own query functions under chosen facts (features on).
Queries table_queries(std::string name, uint32_t subgroup, uint32_t min_sg, uint32_t max_sg, bool size_control) {
  caps::DeviceFacts d;
  d.subgroup_size = subgroup;
  d.min_subgroup_size = min_sg;
  d.max_subgroup_size = max_sg;
  d.subgroup_size_control = size_control;
  d.workgroup_scope = d.flexible_dimensions = true;
  d.bfloat16_matrices = d.float8_matrices = true;
  d.cooperative_vector_training = true;
  Queries q;
  q.name = std::move(name);
  q.facts = {subgroup, min_sg, max_sg, size_control, true, true, true, true, true,
             caps::limits().workgroup_scope_max_workgroup_size, caps::limits().flexible_dimensions_max_dimension};
  q.khr = [=](uint32_t* n, VkCooperativeMatrixPropertiesKHR* p) { return caps::matrix_properties_khr(d, n, p); };
  q.ext = [=](const VkPhysicalDeviceCooperativeMatrixInfo2EXT* i, uint32_t* n, VkCooperativeMatrixProperties2EXT* p) {
    return caps::matrix_properties2_ext(d, i, n, p, nullptr);
  };
  q.flex = [=](uint32_t* n, VkCooperativeMatrixFlexibleDimensionsPropertiesNV* p) {
    return caps::flexible_dimensions_properties_nv(d, n, p);
  };
  q.vec = [](uint32_t* n, VkCooperativeVectorPropertiesNV* p) { return caps::vector_properties_nv(n, p); };
  return q;
}

std::vector<Queries> planned_configurations() {
  return {table_queries("planned, subgroup 8", 8, 8, 8, false),
          table_queries("planned, subgroup 16", 16, 16, 16, false),
          table_queries("planned, subgroup 16 of 8..64 (size control)", 16, 8, 64, true)};
}

// ---------------------------------------------------------------------------------------
// The two-call idiom, checked on any of the four queries.

constexpr unsigned char kFill = 0xA5;  // what untouched bytes of an output array hold
constexpr uintptr_t kNextMarker = 0x5EED0000;

template <typename T>
std::vector<T> filled(size_t n, VkStructureType stype) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), kFill, n * sizeof(T));
  for (size_t i = 0; i < n; ++i) {
    v[i].sType = stype;
    v[i].pNext = reinterpret_cast<void*>(kNextMarker + i);
  }
  return v;
}

template <typename T>
bool same_payload(const T& a, const T& b) {
  return std::memcmp(reinterpret_cast<const char*>(&a) + sizeof(VkBaseOutStructure),
                     reinterpret_cast<const char*>(&b) + sizeof(VkBaseOutStructure),
                     sizeof(T) - sizeof(VkBaseOutStructure)) == 0;
}

// Calls `fn(count, array)` the way an application does and checks every promise of the
// idiom ("If pProperties is NULL, then the number ... is returned in pPropertyCount.
// Otherwise ... overwritten with the number of structures actually written ... If
// pPropertyCount is less than the number ... available, at most pPropertyCount
// structures will be written, and VK_INCOMPLETE will be returned"). Returns the full list.
template <typename T, typename Fn>
std::vector<T> query_all(Fn&& fn, VkStructureType stype) {
  uint32_t total = 0xDEADBEEF;
  REQUIRE(fn(&total, nullptr) == VK_SUCCESS);
  REQUIRE(total != 0xDEADBEEF);
  uint32_t again = 0;
  REQUIRE(fn(&again, nullptr) == VK_SUCCESS);
  REQUIRE(again == total);  // the count is stable

  // Exactly enough room: VK_SUCCESS, every structure written, sType/pNext untouched.
  auto full = filled<T>(total + 2, stype);
  uint32_t n = total;
  REQUIRE(fn(&n, full.data()) == VK_SUCCESS);
  REQUIRE(n == total);
  for (uint32_t i = 0; i < total + 2; ++i) {
    CHECK(full[i].sType == stype);
    CHECK(full[i].pNext == reinterpret_cast<void*>(kNextMarker + i));
  }
  const auto pristine = filled<T>(1, stype);
  for (uint32_t i = 0; i < total; ++i) CHECK_FALSE(same_payload(full[i], pristine[0]));  // written
  for (uint32_t i = total; i < total + 2; ++i) CHECK(same_payload(full[i], pristine[0]));  // not past the count

  // More room than needed: VK_SUCCESS and the count comes back down to what exists.
  auto roomy = filled<T>(total + 2, stype);
  n = total + 2;
  REQUIRE(fn(&n, roomy.data()) == VK_SUCCESS);
  CHECK(n == total);
  for (uint32_t i = 0; i < total; ++i) CHECK(same_payload(roomy[i], full[i]));
  for (uint32_t i = total; i < total + 2; ++i) CHECK(same_payload(roomy[i], pristine[0]));

  // Too little room, every size from 0 up: VK_INCOMPLETE, a prefix of the full list,
  // nothing written beyond it.
  for (uint32_t cap = 0; cap < total; ++cap) {
    INFO("capacity " << cap << " of " << total);
    auto part = filled<T>(total + 1, stype);
    n = cap;
    CHECK(fn(&n, part.data()) == VK_INCOMPLETE);
    CHECK(n == cap);
    for (uint32_t i = 0; i < cap; ++i) CHECK(same_payload(part[i], full[i]));
    for (uint32_t i = cap; i < total + 1; ++i) CHECK(same_payload(part[i], pristine[0]));
    for (uint32_t i = 0; i < total + 1; ++i) {
      CHECK(part[i].sType == stype);
      CHECK(part[i].pNext == reinterpret_cast<void*>(kNextMarker + i));
    }
  }
  full.resize(total);
  return full;
}

// ---------------------------------------------------------------------------------------
// Component types.

bool is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

bool is_integer(VkComponentTypeKHR t) {
  switch (t) {
    case VK_COMPONENT_TYPE_SINT8_KHR: case VK_COMPONENT_TYPE_SINT16_KHR: case VK_COMPONENT_TYPE_SINT32_KHR:
    case VK_COMPONENT_TYPE_SINT64_KHR: case VK_COMPONENT_TYPE_UINT8_KHR: case VK_COMPONENT_TYPE_UINT16_KHR:
    case VK_COMPONENT_TYPE_UINT32_KHR: case VK_COMPONENT_TYPE_UINT64_KHR:
      return true;
    default:
      return false;
  }
}

// A component type a cooperative *matrix* may have on this device: a SPIR-V scalar type
// (chapter, VkComponentTypeKHR), bfloat16 / float8 only with their cooperative-matrix
// features. The packed types exist for cooperative vectors only.
bool matrix_type_ok(VkComponentTypeKHR t, const Facts& f) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: case VK_COMPONENT_TYPE_FLOAT32_KHR: case VK_COMPONENT_TYPE_FLOAT64_KHR:
      return true;
    case VK_COMPONENT_TYPE_BFLOAT16_KHR:
      return f.bfloat16;
    case VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT: case VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT:
      return f.float8;
    default:
      return is_integer(t);
  }
}

std::string type_name(VkComponentTypeKHR t) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_KHR: return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_KHR: return "f64";
    case VK_COMPONENT_TYPE_SINT8_KHR: return "s8";
    case VK_COMPONENT_TYPE_SINT16_KHR: return "s16";
    case VK_COMPONENT_TYPE_SINT32_KHR: return "s32";
    case VK_COMPONENT_TYPE_SINT64_KHR: return "s64";
    case VK_COMPONENT_TYPE_UINT8_KHR: return "u8";
    case VK_COMPONENT_TYPE_UINT16_KHR: return "u16";
    case VK_COMPONENT_TYPE_UINT32_KHR: return "u32";
    case VK_COMPONENT_TYPE_UINT64_KHR: return "u64";
    case VK_COMPONENT_TYPE_BFLOAT16_KHR: return "bf16";
    case VK_COMPONENT_TYPE_SINT8_PACKED_NV: return "s8packed";
    case VK_COMPONENT_TYPE_UINT8_PACKED_NV: return "u8packed";
    case VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT: return "e4m3";
    case VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT: return "e5m2";
    default: return "type" + std::to_string(int(t));
  }
}

// One matrix combination, whichever query reported it.
struct Combo {
  uint32_t m, n, k;
  VkComponentTypeKHR a, b, c, r;
  bool saturating;
  VkScopeKHR scope;
  uint32_t invocations;
  bool operator==(const Combo&) const = default;
};

std::string describe(const Combo& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " + type_name(c.a) +
         "*" + type_name(c.b) + "+" + type_name(c.c) + "->" + type_name(c.r) + (c.saturating ? " sat" : "") +
         (c.scope == VK_SCOPE_WORKGROUP_KHR ? " wg" + std::to_string(c.invocations) : " sg");
}

std::vector<Combo> combos(const std::vector<VkCooperativeMatrixPropertiesKHR>& v) {
  std::vector<Combo> out;
  for (auto& p : v)
    out.push_back({p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType, p.ResultType, p.saturatingAccumulation == VK_TRUE,
                   p.scope, 0});
  return out;
}
std::vector<Combo> combos(const std::vector<VkCooperativeMatrixProperties2EXT>& v, VkScopeKHR scope, bool sat,
                          uint32_t inv) {
  std::vector<Combo> out;
  for (auto& p : v)
    out.push_back({p.MGranularity, p.NGranularity, p.KGranularity, p.AType, p.BType, p.CType, p.ResultType, sat, scope,
                   inv});
  return out;
}
std::vector<Combo> combos(const std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV>& v) {
  std::vector<Combo> out;
  for (auto& p : v)
    out.push_back({p.MGranularity, p.NGranularity, p.KGranularity, p.AType, p.BType, p.CType, p.ResultType,
                   p.saturatingAccumulation == VK_TRUE, p.scope, p.workgroupInvocations});
  return out;
}

// Each combination on its own, for the rules every entry obeys.
void check_entry(const Combo& c, const Facts& f) {
  INFO(describe(c));
  CHECK(c.m > 0);
  CHECK(c.n > 0);
  CHECK(c.k > 0);
  CHECK(matrix_type_ok(c.a, f));
  CHECK(matrix_type_ok(c.b, f));
  CHECK(matrix_type_ok(c.c, f));
  CHECK(matrix_type_ok(c.r, f));
  // SaturatingAccumulation changes how *integer* results overflow (SPV_KHR_cooperative_matrix,
  // OpCooperativeMatrixMulAddKHR); a saturating float entry would be meaningless.
  if (c.saturating) CHECK(is_integer(c.r));
}

bool no_duplicates(std::vector<Combo> v) {
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = i + 1; j < v.size(); ++j)
      if (v[i] == v[j]) return false;
  return true;
}

bool any_all_pow2(const std::vector<Combo>& v) {
  return std::any_of(v.begin(), v.end(), [](const Combo& c) { return is_pow2(c.m) && is_pow2(c.n) && is_pow2(c.k); });
}

// The combinations a non-saturating Properties2EXT query must return for each required
// parameter set (chapter, vkGetPhysicalDeviceCooperativeMatrixProperties2EXT: "at least
// one property must be returned for each of the following combinations").
void check_required_ext_combinations(const std::vector<Combo>& v) {
  auto has = [&](VkComponentTypeKHR ab, std::initializer_list<VkComponentTypeKHR> acc) {
    return std::any_of(v.begin(), v.end(), [&](const Combo& c) {
      return c.a == ab && c.b == ab && c.c == c.r && std::find(acc.begin(), acc.end(), c.c) != acc.end();
    });
  };
  CHECK(has(VK_COMPONENT_TYPE_FLOAT16_KHR, {VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR}));
  CHECK(has(VK_COMPONENT_TYPE_UINT8_KHR, {VK_COMPONENT_TYPE_UINT32_KHR, VK_COMPONENT_TYPE_SINT32_KHR}));
  CHECK(has(VK_COMPONENT_TYPE_SINT8_KHR, {VK_COMPONENT_TYPE_SINT32_KHR}));
}

VkPhysicalDeviceCooperativeMatrixInfo2EXT info2(VkScopeKHR scope, uint32_t invocations, uint32_t subgroup_size,
                                                VkCooperativeMatrixFlagsEXT flags = 0) {
  auto i = make_struct<VkPhysicalDeviceCooperativeMatrixInfo2EXT>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_INFO_2_EXT);
  i.scope = scope;
  i.invocations = invocations;
  i.subgroupSize = subgroup_size;
  i.flags = flags;
  return i;
}

std::vector<VkCooperativeMatrixProperties2EXT> ext_all(const Queries& q, const VkPhysicalDeviceCooperativeMatrixInfo2EXT& i) {
  return query_all<VkCooperativeMatrixProperties2EXT>(
      [&](uint32_t* n, VkCooperativeMatrixProperties2EXT* p) { return q.ext(&i, n, p); },
      VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT);
}

// ---------------------------------------------------------------------------------------
// The rules, per query.

void check_khr(const Queries& q) {
  INFO(q.name);
  const Facts& f = q.facts;
  auto list = combos(query_all<VkCooperativeMatrixPropertiesKHR>(q.khr, VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR));
  REQUIRE_FALSE(list.empty());
  for (const Combo& c : list) {
    check_entry(c, f);
    // "If the cooperativeMatrixWorkgroupScope feature is not supported, scope must be
    // VK_SCOPE_SUBGROUP_KHR" (chapter, VkCooperativeMatrixPropertiesKHR).
    if (!f.workgroup_scope) CHECK(c.scope == VK_SCOPE_SUBGROUP_KHR);
    else CHECK((c.scope == VK_SCOPE_SUBGROUP_KHR || c.scope == VK_SCOPE_WORKGROUP_KHR));
  }
  // "At least one entry in the list must have power of two values for all of MSize,
  // KSize, and NSize."
  CHECK(any_all_pow2(list));
  CHECK(no_duplicates(list));

  // DESIGN.md, llama.cpp: the first subgroup f16*f16 entry sets its coopmat tile size, with
  // f32 (and f16) accumulation of that same shape, and flash attention needs 16x16x16. Its
  // warp tile is the subgroup size on narrow subgroups, so the first tile's M must fit the
  // default subgroup: 16x16x16 from subgroup 16 up, 8x8x8 below (cooperative_caps.cpp).
  auto f16 = [](const Combo& c) {
    return c.scope == VK_SCOPE_SUBGROUP_KHR && c.a == VK_COMPONENT_TYPE_FLOAT16_KHR && c.b == VK_COMPONENT_TYPE_FLOAT16_KHR &&
           !c.saturating;
  };
  auto first = std::find_if(list.begin(), list.end(), f16);
  REQUIRE(first != list.end());
  const uint32_t tile = q.facts.subgroup_size >= 16 ? 16 : 8;
  CHECK((first->m == tile && first->n == tile && first->k == tile));
  CHECK(first->c == VK_COMPONENT_TYPE_FLOAT32_KHR);
  CHECK(list.front() == *first);  // and it is the most preferred entry overall
  CHECK(std::any_of(list.begin(), list.end(), [&](const Combo& c) {
    return f16(c) && c.m == 16 && c.n == 16 && c.k == 16 && c.c == VK_COMPONENT_TYPE_FLOAT32_KHR;
  }));
  CHECK(std::any_of(list.begin(), list.end(), [&](const Combo& c) {  // that shape with f16 accumulation too
    return f16(c) && c.m == first->m && c.n == first->n && c.k == first->k && c.c == VK_COMPONENT_TYPE_FLOAT16_KHR;
  }));

  // DESIGN.md, shaders tuned for NVIDIA: their shapes, exactly.
  auto has = [&](uint32_t m, uint32_t n, uint32_t k, VkComponentTypeKHR ab, VkComponentTypeKHR acc) {
    Combo want{m, n, k, ab, ab, acc, acc, false, VK_SCOPE_SUBGROUP_KHR, 0};
    return std::find(list.begin(), list.end(), want) != list.end();
  };
  for (auto acc : {VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR}) {
    CHECK(has(16, 16, 16, VK_COMPONENT_TYPE_FLOAT16_KHR, acc));
    CHECK(has(16, 8, 16, VK_COMPONENT_TYPE_FLOAT16_KHR, acc));
    CHECK(has(16, 8, 8, VK_COMPONENT_TYPE_FLOAT16_KHR, acc));
  }
  CHECK(has(16, 16, 32, VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT32_KHR));
  CHECK(has(16, 8, 32, VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT32_KHR));
  if (f.bfloat16) CHECK(has(16, 16, 16, VK_COMPONENT_TYPE_BFLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR));
}

void check_ext(const Queries& q) {
  INFO(q.name);
  const Facts& f = q.facts;
  auto khr = combos(query_all<VkCooperativeMatrixPropertiesKHR>(q.khr, VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR));

  // Subgroup scope, the two required parameter sets (subgroupSize 0 and the default
  // size), and every other size subgroup-size control allows.
  std::vector<uint32_t> sizes = {0, f.subgroup_size};
  if (f.subgroup_size_control)
    for (uint32_t s = f.min_subgroup_size; s && s <= f.max_subgroup_size; s *= 2) sizes.push_back(s);
  for (uint32_t s : sizes) {
    for (bool sat : {false, true}) {
      INFO("subgroup scope, subgroupSize " << s << (sat ? ", saturating" : ""));
      auto list = combos(ext_all(q, info2(VK_SCOPE_SUBGROUP_KHR, 0, s,
                                          sat ? VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT : 0)),
                         VK_SCOPE_SUBGROUP_KHR, sat, 0);
      for (const Combo& c : list) check_entry(c, f);
      CHECK(no_duplicates(list));
      const bool required = s == 0 || s == f.subgroup_size;
      if (!sat && required) {
        REQUIRE_FALSE(list.empty());  // "must not return pPropertyCount equal to 0"
        check_required_ext_combinations(list);
        // "At least one entry in the list must have power of two values" (Properties2EXT).
        CHECK(any_all_pow2(list));
      }
      // Design: a superset of the KHR list for the sizes a plain shader runs with
      // (proposal VK_EXT_cooperative_matrix_maintenance1, "Querying properties": the EXT
      // query may expose *additional* properties).
      if (required) {
        for (const Combo& k : khr) {
          if (k.scope != VK_SCOPE_SUBGROUP_KHR || k.saturating != sat) continue;
          INFO("KHR entry " << describe(k));
          CHECK(std::find(list.begin(), list.end(), k) != list.end());
        }
      }
    }
  }

  // Workgroup scope: "invocations is any power of two between subgroupSize and
  // cooperativeMatrixWorkgroupScopeMaxWorkgroupSize inclusive, and subgroupSize is either
  // 0 or equal to VkPhysicalDeviceSubgroupProperties::subgroupSize".
  if (f.workgroup_scope) {
    REQUIRE(f.workgroup_max >= f.subgroup_size);
    for (uint32_t inv = f.subgroup_size; inv <= f.workgroup_max; inv *= 2) {
      for (uint32_t s : {0u, f.subgroup_size}) {
        INFO("workgroup scope, " << inv << " invocations, subgroupSize " << s);
        auto list = combos(ext_all(q, info2(VK_SCOPE_WORKGROUP_KHR, inv, s)), VK_SCOPE_WORKGROUP_KHR, false, inv);
        REQUIRE_FALSE(list.empty());
        for (const Combo& c : list) check_entry(c, f);
        check_required_ext_combinations(list);
        CHECK(any_all_pow2(list));
        CHECK(no_duplicates(list));
        // The saturating class is optional but must still answer by the idiom.
        ext_all(q, info2(VK_SCOPE_WORKGROUP_KHR, inv, s, VK_COOPERATIVE_MATRIX_SATURATING_ACCUMULATION_BIT_EXT));
      }
    }
  }
}

// Queries that break a valid-usage rule of VkPhysicalDeviceCooperativeMatrixInfo2EXT get
// VK_ERROR_VALIDATION_FAILED (one of the command's return codes) and a zero count.
void check_ext_invalid(const Queries& q) {
  INFO(q.name);
  const Facts& f = q.facts;
  auto rejects = [&](VkPhysicalDeviceCooperativeMatrixInfo2EXT i, const char* what) {
    INFO(what);
    uint32_t n = 7;
    CHECK(q.ext(&i, &n, nullptr) == VK_ERROR_VALIDATION_FAILED);
    CHECK(n == 0);
  };
  auto bad_stype = info2(VK_SCOPE_SUBGROUP_KHR, 0, 0);
  bad_stype.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_2_EXT;
  rejects(bad_stype, "sType-sType");
  rejects(info2(VK_SCOPE_SUBGROUP_KHR, 0, 0, 0x2), "flags-parameter");
  rejects(info2(VK_SCOPE_DEVICE_KHR, 0, 0), "13372: device scope");
  rejects(info2(VK_SCOPE_QUEUE_FAMILY_KHR, 0, 0), "13372: queue-family scope");
  rejects(info2(VK_SCOPE_SUBGROUP_KHR, 0, f.subgroup_size * 3), "13374: not a power of two");
  // VUID-13381 (invocations must be 0 for subgroup scope) is not rejected: the member is
  // "ignored unless scope is VK_SCOPE_WORKGROUP_KHR", and it is.
  CHECK(combos(ext_all(q, info2(VK_SCOPE_SUBGROUP_KHR, 64, 0)), VK_SCOPE_SUBGROUP_KHR, false, 0) ==
        combos(ext_all(q, info2(VK_SCOPE_SUBGROUP_KHR, 0, 0)), VK_SCOPE_SUBGROUP_KHR, false, 0));
  if (f.subgroup_size_control) {
    rejects(info2(VK_SCOPE_SUBGROUP_KHR, 0, f.min_subgroup_size / 2), "13375: below minSubgroupSize");
    rejects(info2(VK_SCOPE_SUBGROUP_KHR, 0, f.max_subgroup_size * 2), "13376: above maxSubgroupSize");
  } else {
    rejects(info2(VK_SCOPE_SUBGROUP_KHR, 0, f.subgroup_size * 2), "13377: not the default size");
    rejects(info2(VK_SCOPE_SUBGROUP_KHR, 0, f.subgroup_size / 2), "13377: not the default size");
  }
  if (!f.workgroup_scope) {
    rejects(info2(VK_SCOPE_WORKGROUP_KHR, 128, 0), "13373: workgroup scope unsupported");
  } else {
    rejects(info2(VK_SCOPE_WORKGROUP_KHR, 96, 0), "13378: invocations not a power of two");
    rejects(info2(VK_SCOPE_WORKGROUP_KHR, 0, 0), "13378: zero invocations");
    rejects(info2(VK_SCOPE_WORKGROUP_KHR, f.subgroup_size / 2, f.subgroup_size), "13379: not a multiple");
    rejects(info2(VK_SCOPE_WORKGROUP_KHR, f.workgroup_max * 2, 0), "13380: above the maximum");
  }
}

void check_flexible(const Queries& q) {
  INFO(q.name);
  const Facts& f = q.facts;
  auto list = combos(query_all<VkCooperativeMatrixFlexibleDimensionsPropertiesNV>(
      q.flex, VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV));
  // "If the cooperativeMatrixFlexibleDimensions feature is not supported, the
  // implementation must advertise zero properties."
  if (!f.flexible_dimensions) {
    CHECK(list.empty());
    return;
  }
  REQUIRE_FALSE(list.empty());
  CHECK(no_duplicates(list));
  for (const Combo& c : list) {
    check_entry(c, f);
    INFO(describe(c));
    // "All granularity values must be powers of two."
    CHECK(is_pow2(c.m));
    CHECK(is_pow2(c.n));
    CHECK(is_pow2(c.k));
    CHECK(c.m <= f.max_dimension);
    CHECK(c.n <= f.max_dimension);
    CHECK(c.k <= f.max_dimension);
    CHECK((c.scope == VK_SCOPE_SUBGROUP_KHR || c.scope == VK_SCOPE_WORKGROUP_KHR));
    if (c.scope == VK_SCOPE_WORKGROUP_KHR) {
      REQUIRE(f.workgroup_scope);
      // A workgroup-scope workgroup is a power-of-two multiple of the subgroup size, at
      // most the maximum (VUID-VkPipelineShaderStageCreateInfo-module-10169).
      CHECK(is_pow2(c.invocations));
      CHECK(c.invocations <= f.workgroup_max);
      // Listed only from the largest subgroup size on, so that any required subgroup size
      // divides a listed workgroup (icd/cooperative_caps.cpp, smallest_workgroup).
      CHECK(c.invocations >= std::max(f.subgroup_size, f.max_subgroup_size));
    }
  }
  // DESIGN.md, llama.cpp coopmat2: workgroup-scope f16*f16 into f16 and into f32 at 128
  // invocations with granularity <= 32x16x16 and at 256 with <= 32x32x16, and
  // flexibleDimensionsMaxDimension >= 512 (below it ggml turns the path off, while still
  // printing "matrix cores: NV_coopmat2").
  CHECK(f.max_dimension >= 512);
  auto has = [&](uint32_t inv, uint32_t m, uint32_t n, uint32_t k, VkComponentTypeKHR acc) {
    return std::any_of(list.begin(), list.end(), [&](const Combo& c) {
      return c.scope == VK_SCOPE_WORKGROUP_KHR && !c.saturating && c.invocations == inv &&
             c.a == VK_COMPONENT_TYPE_FLOAT16_KHR && c.b == VK_COMPONENT_TYPE_FLOAT16_KHR && c.c == acc && c.r == acc &&
             c.m <= m && c.n <= n && c.k <= k;
    });
  };
  if (f.workgroup_scope) {
    for (auto acc : {VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR}) {
      INFO("accumulator " << type_name(acc));
      CHECK(has(128, 32, 16, 16, acc));
      CHECK(has(256, 32, 32, 16, acc));
    }
    // DESIGN.md: NVIDIA-tuned code uses workgroup scope at 32..256 invocations; listed here
    // from the largest subgroup size (32 itself still works at subgroup sizes up to 32, and
    // Properties2 answers for it).
    for (uint32_t inv = std::max({32u, f.subgroup_size, f.max_subgroup_size}); inv <= 256; inv *= 2) {
      INFO(inv << " invocations");
      CHECK(has(inv, 1u << 30, 1u << 30, 1u << 30, VK_COMPONENT_TYPE_FLOAT32_KHR));
    }
  }
}

void check_vector(const Queries& q) {
  INFO(q.name);
  auto list = query_all<VkCooperativeVectorPropertiesNV>(q.vec, VK_STRUCTURE_TYPE_COOPERATIVE_VECTOR_PROPERTIES_NV);
  auto packed = [](VkComponentTypeKHR t) {
    return t == VK_COMPONENT_TYPE_SINT8_PACKED_NV || t == VK_COMPONENT_TYPE_UINT8_PACKED_NV;
  };
  for (auto& p : list) {
    INFO(type_name(p.inputType) << "/" << type_name(p.inputInterpretation) << "/" << type_name(p.matrixInterpretation)
                                << "/" << type_name(p.biasInterpretation) << "/" << type_name(p.resultType));
    // "SINT8_PACKED_NV and UINT8_PACKED_NV must not be used for members other than
    // inputInterpretation."
    CHECK_FALSE(packed(p.inputType));
    CHECK_FALSE(packed(p.matrixInterpretation));
    CHECK_FALSE(packed(p.biasInterpretation));
    CHECK_FALSE(packed(p.resultType));
    CHECK((p.transpose == VK_TRUE || p.transpose == VK_FALSE));
  }
  for (const VectorRow& r : kRequiredVectorRows) {
    INFO("required " << type_name(r.input) << "/" << type_name(r.input_interp) << "/" << type_name(r.matrix) << "/"
                     << type_name(r.bias) << "/" << type_name(r.result));
    CHECK(std::any_of(list.begin(), list.end(), [&](const VkCooperativeVectorPropertiesNV& p) { return row_matches(r, p); }));
  }
}

bool lists_extension(const std::vector<VkExtensionProperties>& v, const char* name) {
  return std::any_of(v.begin(), v.end(), [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

}  // namespace

// ---------------------------------------------------------------------------------------

TEST_CASE("cooperative queries resolve through the driver's own vk_icdGetInstanceProcAddr") {
  DirectIcd icd;
  CHECK_NOTHROW(driver_queries(icd));
}

TEST_CASE("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR follows its rules") {
  DirectIcd icd;
  check_khr(driver_queries(icd));
}

TEST_CASE("vkGetPhysicalDeviceCooperativeMatrixProperties2EXT follows its rules") {
  DirectIcd icd;
  const Queries q = driver_queries(icd);
  check_ext(q);
  check_ext_invalid(q);
}

TEST_CASE("vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV follows its rules") {
  DirectIcd icd;
  const Queries q = driver_queries(icd);
  check_flexible(q);
}

TEST_CASE("vkGetPhysicalDeviceCooperativeVectorPropertiesNV follows its rules") {
  DirectIcd icd;
  check_vector(driver_queries(icd));
}

TEST_CASE("a null pPropertyCount is refused, not dereferenced") {
  DirectIcd icd;
  const Queries q = driver_queries(icd);
  CHECK(q.khr(nullptr, nullptr) == VK_ERROR_VALIDATION_FAILED);
  auto i = info2(VK_SCOPE_SUBGROUP_KHR, 0, 0);
  CHECK(q.ext(&i, nullptr, nullptr) == VK_ERROR_VALIDATION_FAILED);
  uint32_t n = 5;
  CHECK(q.ext(nullptr, &n, nullptr) == VK_ERROR_VALIDATION_FAILED);
  CHECK(q.flex(nullptr, nullptr) == VK_ERROR_VALIDATION_FAILED);
  CHECK(q.vec(nullptr, nullptr) == VK_ERROR_VALIDATION_FAILED);
}

TEST_CASE("the planned configuration (NV2, bfloat16, float8 features on) follows every rule") {
  for (const Queries& q : planned_configurations()) {
    check_khr(q);
    check_ext(q);
    check_ext_invalid(q);
    check_flexible(q);
    check_vector(q);
  }
}

TEST_CASE("bfloat16 and float8 matrix entries appear only with their features") {
  DirectIcd icd;
  const Queries driver = driver_queries(icd);
  for (const Queries& q : {driver, planned_configurations()[1]}) {
    INFO(q.name);
    auto list = combos(query_all<VkCooperativeMatrixPropertiesKHR>(q.khr, VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR));
    auto uses = [&](VkComponentTypeKHR t) {
      return std::any_of(list.begin(), list.end(), [&](const Combo& c) { return c.a == t || c.b == t || c.c == t || c.r == t; });
    };
    CHECK(uses(VK_COMPONENT_TYPE_BFLOAT16_KHR) == q.facts.bfloat16);
    CHECK(uses(VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT) == q.facts.float8);
    CHECK(uses(VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT) == q.facts.float8);
  }
}

TEST_CASE("cooperative property structs in a VkPhysicalDeviceProperties2 chain are filled") {
  DirectIcd icd;
  const Facts f = driver_facts(icd);
  // Garbage in every member, so a struct the driver skipped cannot pass.
  auto garbage = [](auto& s, VkStructureType t, void* next) {
    std::memset(static_cast<void*>(&s), 0xCD, sizeof(s));
    s.sType = t;
    s.pNext = next;
  };
  VkPhysicalDeviceVulkan11Properties tail;  // a core struct after ours must still be reached
  garbage(tail, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, nullptr);
  VkPhysicalDeviceCooperativeVectorPropertiesNV cv;
  garbage(cv, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_PROPERTIES_NV, &tail);
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV cm2;
  garbage(cm2, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV, &cv);
  VkPhysicalDeviceCooperativeMatrixPropertiesKHR cm;
  garbage(cm, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR, &cm2);
  auto p2 = make_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &cm);
  icd.get<PFN_vkGetPhysicalDeviceProperties2>("vkGetPhysicalDeviceProperties2")(icd.physical, &p2);

  // sType and pNext are the application's.
  CHECK(p2.pNext == &cm);
  CHECK(cm.sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR);
  CHECK(cm.pNext == &cm2);
  CHECK(cm2.pNext == &cv);
  CHECK(cv.pNext == &tail);
  CHECK(tail.subgroupSize == f.subgroup_size);

  // The one queue family has COMPUTE, so the stages "will have the
  // VK_SHADER_STAGE_COMPUTE_BIT bit set", and "must not have any bits other than
  // VK_SHADER_STAGE_COMPUTE_BIT" (limits).
  CHECK(cm.cooperativeMatrixSupportedStages == VK_SHADER_STAGE_COMPUTE_BIT);
  CHECK(cv.cooperativeVectorSupportedStages == VK_SHADER_STAGE_COMPUTE_BIT);

  // Required limits (limits, "Required Limits"): min subgroupSize x 2, min 256, max
  // maxComputeSharedMemorySize / 2, min 128.
  CHECK(cm2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize >= 2 * f.subgroup_size);
  CHECK(is_pow2(cm2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize));
  CHECK(cm2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize <= p2.properties.limits.maxComputeWorkGroupInvocations);
  CHECK(cm2.cooperativeMatrixFlexibleDimensionsMaxDimension >= 512);
  CHECK(cm2.cooperativeMatrixWorkgroupScopeReservedSharedMemory <= p2.properties.limits.maxComputeSharedMemorySize / 2);
  CHECK(cv.maxCooperativeVectorComponents >= 128);
  CHECK(cv.maxCooperativeVectorComponents >= 512);  // the "at least 512"
  CHECK(cv.maxCooperativeVectorComponents != 0xCDCDCDCD);
  // Training accumulation into f16 and f32 both work (e2e_cooperative_vector_training),
  // so both are true exactly while the training feature is.
  const VkBool32 training = f.training ? VK_TRUE : VK_FALSE;
  CHECK(cv.cooperativeVectorTrainingFloat16Accumulation == training);
  CHECK(cv.cooperativeVectorTrainingFloat32Accumulation == training);
}

// The extensions are advertised only once their shader side works and is tested. Until
// then they must be invisible: not listed, every feature bit false. When one is
// advertised, change the expectation here together with that commit.
TEST_CASE("VK_KHR_cooperative_matrix and VK_EXT_cooperative_matrix_maintenance1 and VK_NV_cooperative_vector are advertised with their features; VK_NV_cooperative_matrix2 with all seven") {
  DirectIcd icd;
  auto enumerate = icd.get<PFN_vkEnumerateDeviceExtensionProperties>("vkEnumerateDeviceExtensionProperties");
  uint32_t n = 0;
  REQUIRE(enumerate(icd.physical, nullptr, &n, nullptr) == VK_SUCCESS);
  std::vector<VkExtensionProperties> exts(n);
  REQUIRE(enumerate(icd.physical, nullptr, &n, exts.data()) == VK_SUCCESS);
  exts.resize(n);
  CHECK(lists_extension(exts, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME));
  CHECK(lists_extension(exts, VK_EXT_COOPERATIVE_MATRIX_MAINTENANCE_1_EXTENSION_NAME));
  CHECK(lists_extension(exts, VK_NV_COOPERATIVE_VECTOR_EXTENSION_NAME));
  CHECK(lists_extension(exts, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME));

  {
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{};
    std::memset(static_cast<void*>(&cm), 0, sizeof(cm));
    cm.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
    auto f2 = make_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cm);
    icd.get<PFN_vkGetPhysicalDeviceFeatures2>("vkGetPhysicalDeviceFeatures2")(icd.physical, &f2);
    CHECK(cm.cooperativeMatrix == VK_TRUE);
    CHECK(cm.cooperativeMatrixRobustBufferAccess == VK_TRUE);
  }
  {
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2{};
    std::memset(static_cast<void*>(&cm2), 0xFF, sizeof(cm2));
    cm2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV;
    cm2.pNext = nullptr;
    auto f2 = make_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cm2);
    icd.get<PFN_vkGetPhysicalDeviceFeatures2>("vkGetPhysicalDeviceFeatures2")(icd.physical, &f2);
    CHECK(cm2.cooperativeMatrixReductions == VK_TRUE);
    CHECK(cm2.cooperativeMatrixConversions == VK_TRUE);
    CHECK(cm2.cooperativeMatrixPerElementOperations == VK_TRUE);
    CHECK(cm2.cooperativeMatrixWorkgroupScope == VK_TRUE);
    CHECK(cm2.cooperativeMatrixFlexibleDimensions == VK_TRUE);
    CHECK(cm2.cooperativeMatrixTensorAddressing == VK_TRUE);
    CHECK(cm2.cooperativeMatrixBlockLoads == VK_TRUE);
  }
  {
    VkPhysicalDeviceCooperativeMatrixMaintenance1FeaturesEXT m1{};
    m1.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_MAINTENANCE_1_FEATURES_EXT;
    auto f2 = make_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &m1);
    icd.get<PFN_vkGetPhysicalDeviceFeatures2>("vkGetPhysicalDeviceFeatures2")(icd.physical, &f2);
    CHECK(m1.cooperativeMatrixProperties2 == VK_TRUE);
    CHECK(m1.cooperativeMatrixReductions == VK_TRUE);
    CHECK(m1.cooperativeMatrixConversions == VK_TRUE);
    CHECK(m1.cooperativeMatrixPerElementOperations == VK_TRUE);
    CHECK(m1.cooperativeMatrixGetCoordinate == VK_TRUE);
  }
  {
    auto cv = make_struct<VkPhysicalDeviceCooperativeVectorFeaturesNV>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV);
    auto f2 = make_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cv);
    icd.get<PFN_vkGetPhysicalDeviceFeatures2>("vkGetPhysicalDeviceFeatures2")(icd.physical, &f2);
    CHECK(cv.cooperativeVector == VK_TRUE);
    CHECK(cv.cooperativeVectorTraining == VK_TRUE);
  }
}
