// VK_NV_cooperative_vector through the loader: the extension, its features and
// properties; every entry vkGetPhysicalDeviceCooperativeVectorPropertiesNV reports
// multiplies correctly in every layout (row- and column-major with padded strides,
// inferencing- and training-optimal, transposed where the entry allows), with and
// without bias, at lengths 1 to 512, on divergent lanes (every fifth invocation inactive,
// odd ones reading a second matrix and bias); 512 components at every subgroup size; and
// what the device does not list fails pipeline creation.
//
// References and exactness: coopvec_matvec.h.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "coopvec_matvec.h"
#include "coopvec_test_env.h"

using namespace coopvk::test;

TEST_CASE("VK_NV_cooperative_vector is advertised with its features and properties") {
  Instance inst;
  CHECK(device_extensions(inst.physical).count(VK_NV_COOPERATIVE_VECTOR_EXTENSION_NAME) == 1);

  VkPhysicalDeviceCooperativeVectorFeaturesNV cv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cv};
  vkGetPhysicalDeviceFeatures2(inst.physical, &f2);
  CHECK(cv.cooperativeVector == VK_TRUE);
  CHECK(cv.cooperativeVectorTraining == VK_TRUE);

  const auto lim = vector_limits(inst.physical);
  CHECK(lim.cooperativeVectorSupportedStages == VK_SHADER_STAGE_COMPUTE_BIT);
  CHECK(lim.maxCooperativeVectorComponents >= 512);  // issue: "at least 512"
  CHECK(lim.cooperativeVectorTrainingFloat16Accumulation == VK_TRUE);
  CHECK(lim.cooperativeVectorTrainingFloat32Accumulation == VK_TRUE);

  const auto props = vector_properties(inst);
  // The required rows (coopvec_vk_info.h) and what NVIDIA's driver lists besides (the
  // issue): unsigned and packed unsigned 8-bit inputs into s32; and f32 throughout.
  std::vector<VectorRow> wanted(std::begin(kRequiredVectorRows), std::end(kRequiredVectorRows));
  wanted.push_back({VK_COMPONENT_TYPE_UINT8_KHR, VK_COMPONENT_TYPE_UINT8_KHR, VK_COMPONENT_TYPE_SINT8_KHR,
                    VK_COMPONENT_TYPE_SINT32_KHR, VK_COMPONENT_TYPE_SINT32_KHR});
  wanted.push_back({VK_COMPONENT_TYPE_UINT32_KHR, VK_COMPONENT_TYPE_UINT8_PACKED_NV, VK_COMPONENT_TYPE_SINT8_KHR,
                    VK_COMPONENT_TYPE_SINT32_KHR, VK_COMPONENT_TYPE_SINT32_KHR});
  wanted.push_back({VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR,
                    VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR});
  for (const VectorRow& r : wanted) {
    INFO("wanted " << r.input << " " << r.input_interp << " " << r.matrix << " " << r.bias << " " << r.result);
    CHECK(std::any_of(props.begin(), props.end(),
                      [&](const VkCooperativeVectorPropertiesNV& p) { return row_matches(r, p) && p.transpose == VK_TRUE; }));
  }
  for (const auto& p : props) {
    const Entry e = entry_of(p);
    INFO(e.shader);
    CHECK(have_shader(e.shader));  // an advertised entry without a test is a defect
  }
}

namespace {

// Every advertised entry with an integer (or a float) result, each layout once with it.
void run_every_layout(bool integer_results) {
  VectorDevice vd;
  Device dev(vd.opts);
  const auto props = vector_properties(dev.inst);
  REQUIRE(props.size() >= 6);
  // Each entry runs each layout once, at a shape of its own from this list, so every
  // entry meets most lengths and every length many entries.
  const std::pair<uint32_t, uint32_t> shapes[] = {{1, 1}, {7, 7}, {64, 129}, {129, 64}, {512, 7}, {7, 512}};
  using L = VkCooperativeVectorMatrixLayoutNV;
  const L row = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV, col = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_COLUMN_MAJOR_NV;
  const L inf = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV, tr = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_TRAINING_OPTIMAL_NV;
  struct Variant {
    L layout;
    bool transpose, bias;
  };
  const Variant variants[] = {{row, false, true}, {col, false, false}, {inf, false, false},
                              {tr, false, true},  {inf, true, true},   {tr, true, false}};
  uint32_t e_index = 0;
  for (const auto& p : props) {
    const Entry e = entry_of(p);
    REQUIRE(have_shader(e.shader));
    if (is_int_format(e.result.f) != integer_results) continue;
    uint32_t j = 0;
    for (const Variant& v : variants) {
      const auto& shape = shapes[(e_index + j++) % std::size(shapes)];
      // float8 matrices: optimal layouts only (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090);
      // row- and column-major matrices are never transposed.
      if (is_fp8(e.matrix.f) && (v.layout == row || v.layout == col)) continue;
      if (v.transpose && !p.transpose) continue;
      run_matvec(dev, e, {shape.first, shape.second, v.layout, v.transpose, v.bias}, 1000 * e_index + j);
    }
    ++e_index;
  }
}

}  // namespace

TEST_CASE("every advertised cooperative vector entry with integer results multiplies correctly in every layout with and without bias") {
  run_every_layout(true);
}

TEST_CASE("every advertised cooperative vector entry with float results multiplies correctly in every layout with and without bias") {
  run_every_layout(false);
}

TEST_CASE("512-component cooperative vectors multiply at every subgroup size") {
  VectorDevice vd;
  Device dev(vd.opts);
  const auto sc = subgroup_sizes(dev.inst.physical);
  const uint32_t n = vector_limits(dev.inst.physical).maxCooperativeVectorComponents;
  auto find = [&](VkComponentTypeKHR t) {
    for (const auto& p : vector_properties(dev.inst))
      if (p.inputType == t && p.inputInterpretation == t && p.matrixInterpretation == t && p.resultType == t) return entry_of(p);
    FAIL("no entry of one type throughout");
    return entry_of({});
  };
  const Entry f16 = find(VK_COMPONENT_TYPE_FLOAT16_KHR), f32 = find(VK_COMPONENT_TYPE_FLOAT32_KHR);
  const auto inf = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV;
  for (uint32_t sg = sc.minSubgroupSize; sg <= sc.maxSubgroupSize; sg *= 2) {
    // The whole limit in both directions, one workgroup (16 x 512 x 512 products), where
    // the frame the vectors take is largest: subgroup sizes 32 and up. Elsewhere the limit
    // on one side.
    const bool wide = sg >= 32;
    run_matvec(dev, f16, {n, wide ? n : 64, inf, true, true, sg, 1}, sg);
    // float32: the largest frame buffers (jit/src/lower/lowerer.h); at subgroup size 64 the
    // shader's five 512-component variables and temporaries take more than a thread's
    // stack may hold, so its subgroups run on the runner's fiber stacks.
    run_matvec(dev, f32, {wide ? n : 64, n, inf, false, false, sg, 1}, sg + 1);
  }
}

TEST_CASE("what the device does not list fails pipeline creation") {
  VectorDevice vd;
  Device dev(vd.opts);
  std::vector<uint8_t> buf(1 << 16);
  ComputeJob job;
  job.buffers = {&buf, &buf, &buf, &buf};
  job.push = u32_bytes({16, 16, 16, 0, 0});
  const uint32_t max_components = vector_limits(dev.inst.physical).maxCooperativeVectorComponents;
  auto specs = [](uint32_t m, uint32_t k, uint32_t layout) {
    return std::vector<std::pair<uint32_t, std::vector<uint8_t>>>{spec(0, m), spec(1, k), spec(2, k), spec(3, layout),
                                                                  spec(4, 0), spec(5, 1)};
  };
  SECTION("a listed combination at the limit compiles") {
    job.spirv = shader("matmul_f16_f16_f16_f16_f16");
    job.specialization = specs(max_components, 8, 0);
    CHECK(run_compute_job(dev, job) == VK_SUCCESS);
  }
  SECTION("more components than maxCooperativeVectorComponents") {
    job.spirv = shader("matmul_f16_f16_f16_f16_f16");
    job.specialization = specs(max_components + 1, 8, 0);
    CHECK(run_compute_job(dev, job) == VK_ERROR_UNKNOWN);
  }
  SECTION("a type combination no entry has (f32 input read as f16)") {
    job.spirv = shader("matmul_f32_f16_f16_f16_f16");
    job.specialization = specs(8, 8, 0);
    CHECK(run_compute_job(dev, job) == VK_ERROR_UNKNOWN);
  }
  SECTION("a component type no entry has (int16)") {
    job.spirv = shader("coopvec_unlisted_type");
    job.specialization = {spec(0, 8)};
    CHECK(run_compute_job(dev, job) == VK_ERROR_UNKNOWN);
  }
}

TEST_CASE("without the cooperativeVector feature a cooperative vector shader fails pipeline creation") {
  std::vector<uint8_t> buf(4096);
  ComputeJob job;
  job.buffers = {&buf, &buf, &buf, &buf};
  job.push = u32_bytes({16, 16, 16, 0, 0});
  job.spirv = shader("matmul_f16_f16_f16_f16_f16");
  job.specialization = {spec(0, 8), spec(1, 8), spec(2, 8), spec(3, 0), spec(4, 0), spec(5, 1)};
  SECTION("extension enabled, feature off") {
    VectorDevice vd(false, false);
    Device dev(vd.opts);
    CHECK(run_compute_job(dev, job) == VK_ERROR_UNKNOWN);
  }
  SECTION("extension not enabled") {
    Device dev;
    CHECK(run_compute_job(dev, job) == VK_ERROR_UNKNOWN);
  }
}
