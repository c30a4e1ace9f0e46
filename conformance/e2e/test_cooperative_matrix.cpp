// VK_KHR_cooperative_matrix through the loader: every entry vkGetPhysicalDevice-
// CooperativeMatrixPropertiesKHR reports multiplies correctly at every subgroup size the
// device allows, B row- and column-major, padded row strides; multiply-add through
// workgroup memory and PhysicalStorageBuffer pointers; a tiled GEMM with arrays of
// matrices, a K loop and several subgroups per workgroup, and its shape variants (staged
// through workgroup memory, zero-initialized accumulators, an outer loop over blocks,
// column-major B); robust out-of-bounds tiles;
// and a shader using an unadvertised combination fails pipeline creation.
// Inputs are small integers, so every partial sum is exact in f32 and the expected
// result is the exact sum rounded once to D's format (matrix_reference.h).
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compute_job.h"
#include "coopmat_test_env.h"
#include "matrix_ops_reference.h"
#include "matrix_reference.h"
#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

// One multiply-add case: D[t] = A[t] x B[t] + C[t] for `tiles` tiles with padded strides.
struct MulAddCase {
  Format a, c;
  uint32_t m, n, k;
  bool saturating;
};

void run_muladd(Device& dev, const MulAddCase& mc, uint32_t subgroup_size, int layout_b) {
  const uint32_t M = mc.m, N = mc.n, K = mc.k, subgroups = 2, groups = 2, tiles = subgroups * groups;
  const uint32_t lda = K + 3, ldb = (layout_b ? K : N) + 5, ldc = N + 1, ldd = N + 2, b_lines = layout_b ? N : K;
  const NumberFormat fa = mc.a.f, fc = mc.c.f;
  const size_t sa = coopvk::kernels::format_size(fa), sc = coopvk::kernels::format_size(fc);
  std::vector<uint8_t> A(tiles * M * lda * sa), Bm(tiles * b_lines * ldb * sa), C(tiles * M * ldc * sc),
      D(tiles * M * ldd * sc, 0xAB);
  std::mt19937 rng(M * 131 + N * 17 + K + subgroup_size);
  // Inputs exact in every format (float8 holds the integers up to 8 or 16 exactly).
  int lo = is_int_format(fa) ? int(std::max(-8.0, int_lo(fa))) : -4, hi = is_int_format(fa) ? 8 : 4;
  if (is_int_format(fa) && mc.saturating) lo = int(std::max(-128.0, int_lo(fa))), hi = int(std::min(127.0, int_hi(fa)));
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<double> av(tiles * M * K), bv(tiles * K * N), cv(tiles * M * N);
  for (uint32_t t = 0; t < tiles; ++t) {
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t k = 0; k < K; ++k) put(A, (t * M + i) * lda + k, fa, av[(t * M + i) * K + k] = dist(rng));
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t j = 0; j < N; ++j)
        put(Bm, layout_b ? (t * N + j) * ldb + k : (t * K + k) * ldb + j, fa, bv[(t * K + k) * N + j] = dist(rng));
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double v = dist(rng);
        // Saturating: C next to either end of its range, so sums cross it.
        if (mc.saturating) v = j % 2 ? int_hi(fc) - 3 : int_lo(fc) + 3;
        put(C, (t * M + i) * ldc + j, fc, cv[(t * M + i) * N + j] = v);
      }
  }
  ComputeJob job;
  job.spirv = shader(std::string("muladd_") + mc.a.tag + "_" + mc.c.tag + (mc.saturating ? "_sat" : ""));
  job.buffers = {&A, &Bm, &C, &D};
  job.push = u32_bytes({lda, ldb, ldc, ldd});
  job.specialization = {spec(0, subgroups * subgroup_size), spec(1, M), spec(2, N), spec(3, K), spec(4, uint32_t(layout_b))};
  job.required_subgroup_size = subgroup_size;
  job.full_subgroups = true;
  job.groups[0] = groups;
  REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
  for (uint32_t t = 0; t < tiles; ++t)
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double exact = cv[(t * M + i) * N + j];
        for (uint32_t k = 0; k < K; ++k) exact += av[(t * M + i) * K + k] * bv[(t * K + k) * N + j];
        INFO("tile " << t << " (" << i << ", " << j << ") exact " << exact);
        REQUIRE(get_bits(D, (t * M + i) * ldd + j, fc) == muladd_result(fc, exact, mc.saturating));
      }
  for (uint32_t row = 0; row < tiles * M; ++row)
    for (uint32_t j = N; j < ldd; ++j) REQUIRE(get_bits(D, row * ldd + j, fc) == get_bits(std::vector<uint8_t>(8, 0xAB), 0, fc));
}


}  // namespace

TEST_CASE("every advertised cooperative matrix entry multiplies correctly at every subgroup size") {
  MatrixDevice md;
  Device dev(md.opts);
  const auto props = matrix_properties(dev.inst);
  REQUIRE(props.size() >= 11);  // NVIDIA's shapes at least (issue: "Types and sizes")
  const auto sc = subgroup_sizes(dev.inst.physical);
  REQUIRE(sc.minSubgroupSize >= 1);
  for (const auto& p : props) {
    Format a, b, c, r;
    REQUIRE(format_of(p.AType, &a));
    REQUIRE(format_of(p.BType, &b));
    REQUIRE(format_of(p.CType, &c));
    REQUIRE(format_of(p.ResultType, &r));
    REQUIRE(p.scope == VK_SCOPE_SUBGROUP_KHR);
    // The test shaders have A = B and C = Result (every entry so far does).
    REQUIRE(a.f == b.f);
    REQUIRE(c.f == r.f);
    const MulAddCase mc{a, c, p.MSize, p.NSize, p.KSize, p.saturatingAccumulation == VK_TRUE};
    const std::string name = std::string("muladd_") + a.tag + "_" + c.tag + (mc.saturating ? "_sat" : "");
    INFO(name << " " << p.MSize << "x" << p.NSize << "x" << p.KSize);
    REQUIRE(have_shader(name));  // an advertised entry without a test is a defect
    for (uint32_t sg = sc.minSubgroupSize; sg <= sc.maxSubgroupSize; sg *= 2) {
      INFO("subgroup size " << sg);
      run_muladd(dev, mc, sg, 0);
      // Column-major B at the smallest and largest sizes.
      if (sg == sc.minSubgroupSize || sg == sc.maxSubgroupSize) run_muladd(dev, mc, sg, 1);
    }
  }
}

TEST_CASE("cooperative matrix multiply-add through workgroup memory and buffer device addresses") {
  MatrixDevice md;
  Device dev(md.opts);
  const uint32_t tiles = 4, T = 16;
  std::vector<uint8_t> A(tiles * 256 * 2), B(tiles * 256 * 2), C(tiles * 256 * 4), D(tiles * 256 * 4, 0);
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<double> av(tiles * 256), bv(tiles * 256), cv(tiles * 256);
  for (uint32_t i = 0; i < tiles * 256; ++i) {
    put(A, i, NumberFormat::F16, av[i] = dist(rng));
    put(B, i, NumberFormat::F16, bv[i] = dist(rng));
    put(C, i, NumberFormat::F32, cv[i] = dist(rng) * 10);
  }
  auto check = [&](const std::vector<uint8_t>& out) {
    for (uint32_t t = 0; t < tiles; ++t)
      for (uint32_t i = 0; i < T; ++i)
        for (uint32_t j = 0; j < T; ++j) {
          double want = cv[t * 256 + i * T + j];
          for (uint32_t k = 0; k < T; ++k) want += av[t * 256 + i * T + k] * bv[t * 256 + k * T + j];
          INFO("tile " << t << " (" << i << ", " << j << ")");
          REQUIRE(get(out, t * 256 + i * T + j, NumberFormat::F32) == want);
        }
  };
  const auto sc = subgroup_sizes(dev.inst.physical);
  for (uint32_t sg : {sc.minSubgroupSize, sc.maxSubgroupSize}) {
    INFO("subgroup size " << sg);
    SECTION("workgroup memory") {
      ComputeJob job;
      job.spirv = shader("muladd_shared");
      std::fill(D.begin(), D.end(), 0);
      job.buffers = {&A, &B, &C, &D};
      job.specialization = {spec(0, 2 * sg)};
      job.required_subgroup_size = sg;
      job.full_subgroups = true;
      job.groups[0] = tiles / 2;
      REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
      check(D);
    }
    SECTION("PhysicalStorageBuffer pointers") {
      const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
      Buffer bufs[4] = {dev.create_buffer(A.size(), usage), dev.create_buffer(B.size(), usage),
                        dev.create_buffer(C.size(), usage), dev.create_buffer(D.size(), usage)};
      std::memcpy(bufs[0].mapped, A.data(), A.size());
      std::memcpy(bufs[1].mapped, B.data(), B.size());
      std::memcpy(bufs[2].mapped, C.data(), C.size());
      std::memset(bufs[3].mapped, 0, D.size());
      uint64_t addr[4];
      for (int i = 0; i < 4; ++i) {
        VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, bufs[i].buffer};
        addr[i] = vkGetBufferDeviceAddress(dev.device, &ai);
      }
      ComputeJob job;
      job.spirv = shader("muladd_bda");
      job.push.resize(sizeof(addr));
      std::memcpy(job.push.data(), addr, sizeof(addr));
      job.specialization = {spec(0, 2 * sg)};
      job.required_subgroup_size = sg;
      job.full_subgroups = true;
      job.groups[0] = tiles / 2;
      REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
      std::vector<uint8_t> out(D.size());
      std::memcpy(out.data(), bufs[3].mapped, out.size());
      check(out);
      for (auto& b : bufs) dev.destroy_buffer(b);
    }
  }
}

TEST_CASE("a tiled cooperative matrix GEMM: blocks of tiles per subgroup, a K loop, several subgroups") {
  MatrixDevice md;
  Device dev(md.opts);
  struct Variant {
    const char* name;
    NumberFormat a, c;
    uint32_t tm, tn, tk;
    unsigned seed = 9;
  };
  // The s8 GEMM twice with other data: the device's tile cache (jit/tile_cache.h) keeps the
  // first dispatch's packed tiles, likely at the same buffer addresses, which the second
  // must not read.
  for (const Variant& v : {Variant{"gemm_f16_f32", NumberFormat::F16, NumberFormat::F32, 16, 16, 16},
                           Variant{"gemm_f16_f32", NumberFormat::F16, NumberFormat::F32, 16, 8, 8},
                           Variant{"gemm_s8_s32", NumberFormat::I8, NumberFormat::I32, 16, 16, 32},
                           Variant{"gemm_s8_s32", NumberFormat::I8, NumberFormat::I32, 16, 16, 32, 10},
                           Variant{"gemm_bf16_f32", NumberFormat::BF16, NumberFormat::F32, 16, 16, 16}}) {
    INFO(v.name << " " << v.tm << "x" << v.tn << "x" << v.tk << " seed " << v.seed);
    // 2 x 2 tiles per subgroup, 2 x 2 subgroups per workgroup, 2 x 3 workgroups.
    const uint32_t wn = 2, wm = 2, gx = 2, gy = 3, M = gy * wm * 2 * v.tm, N = gx * wn * 2 * v.tn, K = 6 * v.tk;
    const uint32_t lda = K + 4, ldb = N + 8, ldc = N, ldd = N + 4;
    const size_t sa = coopvk::kernels::format_size(v.a), sc = coopvk::kernels::format_size(v.c);
    std::vector<uint8_t> A(M * lda * sa), B(K * ldb * sa), C(M * ldc * sc), D(M * ldd * sc, 0);
    std::vector<double> av(M * K), bv(K * N), cv(M * N);
    std::mt19937 rng(v.seed);
    std::uniform_int_distribution<int> dist(-3, 3);
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t k = 0; k < K; ++k) put(A, i * lda + k, v.a, av[i * K + k] = dist(rng));
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t j = 0; j < N; ++j) put(B, k * ldb + j, v.a, bv[k * N + j] = dist(rng));
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) put(C, i * ldc + j, v.c, cv[i * N + j] = dist(rng) * 7);
    const uint32_t sg = subgroup_sizes(dev.inst.physical).maxSubgroupSize;
    ComputeJob job;
    job.spirv = shader(v.name);
    job.buffers = {&A, &B, &C, &D};
    job.push = u32_bytes({K, lda, ldb, ldc, ldd});
    job.specialization = {spec(0, wm * wn * sg), spec(1, v.tm), spec(2, v.tn), spec(3, v.tk), spec(4, wn)};
    job.required_subgroup_size = sg;
    job.full_subgroups = true;
    job.groups[0] = gx;
    job.groups[1] = gy;
    REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double want = cv[i * N + j];
        for (uint32_t k = 0; k < K; ++k) want += av[i * K + k] * bv[k * N + j];
        INFO("(" << i << ", " << j << ")");
        REQUIRE(get_bits(D, i * ldd + j, v.c) == muladd_result(v.c, want, false));
      }
  }
}

TEST_CASE("the GEMM shape variants compute D = A x B + C like the baseline shape") {
  // gemm_staged_body.glsl's variants as bench_coopmat_gemm runs them, at 256 x 256 x 128
  // with padded strides (16-byte multiples, as the staged copies need), at the smallest and
  // largest subgroup sizes; checked against C + A x B summed here in double (small
  // integers: every sum is exact in f32 and s32).
  MatrixDevice md;
  Device dev(md.opts);
  struct Shape {
    const char* name;  // "" for the baseline, gemm_body.glsl
    uint32_t subgroups, blocks;
    bool b_colmajor, staged;
  };
  const Shape shapes[] = {{"", 4, 1, false, false},
                          {"staged", 8, 1, false, true},
                          {"zero_init", 4, 1, false, false},
                          {"outer_loop", 4, 2, false, false},
                          {"b_colmajor", 4, 1, true, false}};
  struct Types {
    const char* name;
    NumberFormat a, c;
    uint32_t tm, tn, tk;
  };
  const Types types[] = {{"f16_f32", NumberFormat::F16, NumberFormat::F32, 16, 16, 16},
                         {"f16_f32", NumberFormat::F16, NumberFormat::F32, 16, 8, 8},
                         {"s8_s32", NumberFormat::I8, NumberFormat::I32, 16, 16, 32}};
  const uint32_t M = 256, N = 256, K = 128, stage_steps = 2;
  const auto sc = subgroup_sizes(dev.inst.physical);
  for (const Types& t : types) {
    const size_t sa = coopvk::kernels::format_size(t.a), sz = coopvk::kernels::format_size(t.c);
    const uint32_t pad = uint32_t(16 / sa);  // 16 bytes of A's components
    const uint32_t lda = K + pad, ldb_row = N + pad, ldb_col = K + pad, ldc = N + 4, ldd = N + 8;
    std::vector<uint8_t> A(M * lda * sa), B(K * ldb_row * sa), Bt(N * ldb_col * sa), C(M * ldc * sz);
    std::vector<double> av(M * K), bv(K * N), cv(M * N);
    std::mt19937 rng(21);
    std::uniform_int_distribution<int> dist(-3, 3);
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t k = 0; k < K; ++k) put(A, i * lda + k, t.a, av[i * K + k] = dist(rng));
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t j = 0; j < N; ++j) {
        put(B, k * ldb_row + j, t.a, bv[k * N + j] = dist(rng));
        put(Bt, j * ldb_col + k, t.a, bv[k * N + j]);
      }
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) put(C, i * ldc + j, t.c, cv[i * N + j] = dist(rng) * 5);
    std::vector<double> want(M * N);
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double sum = cv[i * N + j];
        for (uint32_t k = 0; k < K; ++k) sum += av[i * K + k] * bv[k * N + j];
        want[i * N + j] = sum;
      }
    for (const Shape& s : shapes)
      for (uint32_t sg : {sc.minSubgroupSize, sc.maxSubgroupSize}) {
        const std::string name = std::string("gemm_") + (*s.name ? std::string(s.name) + "_" : "") + t.name;
        INFO(name << " " << t.tm << "x" << t.tn << "x" << t.tk << " subgroup size " << sg);
        REQUIRE(have_shader(name));
        std::vector<uint8_t> D(M * ldd * sz, 0xAB);
        ComputeJob job;
        job.spirv = shader(name);
        job.buffers = {&A, s.b_colmajor ? &Bt : &B, &C, &D};
        job.push = u32_bytes({K, lda, s.b_colmajor ? ldb_col : ldb_row, ldc, ldd});
        job.specialization = {spec(0, s.subgroups * sg), spec(1, t.tm), spec(2, t.tn), spec(3, t.tk), spec(4, 2)};
        if (s.staged) {
          job.specialization.push_back(spec(5, s.subgroups / 2));
          job.specialization.push_back(spec(6, stage_steps));
        }
        job.required_subgroup_size = sg;
        job.full_subgroups = true;
        // 2 subgroups of 2 tiles across a workgroup, the rest of its subgroups down it.
        job.groups[0] = N / (4 * t.tn);
        job.groups[1] = M / (s.subgroups / 2 * 2 * t.tm * s.blocks);
        REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
        int bad = 0;
        for (uint32_t i = 0; i < M; ++i)
          for (uint32_t j = 0; j < N; ++j)
            if (get(D, i * ldd + j, t.c) != want[i * N + j] && bad++ < 3)
              UNSCOPED_INFO("D(" << i << ", " << j << ") = " << get(D, i * ldd + j, t.c) << ", expected " << want[i * N + j]);
        CHECK(bad == 0);
        // The padding between D's rows is not written.
        for (uint32_t i = 0; i < M; ++i)
          for (uint32_t j = N; j < ldd; ++j) REQUIRE(get_bits(D, i * ldd + j, t.c) == get_bits(std::vector<uint8_t>(8, 0xAB), 0, t.c));
      }
  }
}

TEST_CASE("a tile is not taken from the dispatch's tile cache where a writable binding overlaps its buffer") {
  MatrixDevice md;
  Device dev(md.opts);
  const uint32_t steps = 5;
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> dist(-3, 3);
  std::vector<int> a0(16 * 32), bv(32 * 16);
  for (int& x : a0) x = dist(rng);
  for (int& x : bv) x = dist(rng);
  for (bool aliased : {true, false}) {
    INFO((aliased ? "binding 2 is binding 0's buffer" : "binding 2 is a buffer of its own"));
    std::vector<uint8_t> A(a0.size()), B(bv.size()), W(A.size()), D(16 * 16 * 4, 0);
    for (size_t i = 0; i < A.size(); ++i) A[i] = uint8_t(a0[i]);
    for (size_t i = 0; i < B.size(); ++i) B[i] = uint8_t(bv[i]);
    ComputeJob job;
    job.spirv = shader("tile_cache_alias");
    job.buffers = {&A, &B, aliased ? &A : &W, &D};
    job.push = u32_bytes({steps, 1});
    const uint32_t sg = subgroup_sizes(dev.inst.physical).maxSubgroupSize;
    job.specialization = {spec(0, sg)};
    job.required_subgroup_size = sg;
    job.full_subgroups = true;
    REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
    // The steps on the host: aliased, odd steps read the tile with every low bit flipped.
    for (uint32_t i = 0; i < 16; ++i)
      for (uint32_t j = 0; j < 16; ++j) {
        int64_t want = 0;
        for (uint32_t s = 0; s < steps; ++s)
          for (uint32_t k = 0; k < 32; ++k) {
            const int a = aliased && (s & 1) ? int(int8_t(uint8_t(a0[i * 32 + k]) ^ 1)) : a0[i * 32 + k];
            want += int64_t(a) * bv[k * 16 + j];
          }
        int32_t got;
        std::memcpy(&got, &D[(i * 16 + j) * 4], 4);
        INFO("(" << i << ", " << j << ")");
        REQUIRE(got == want);
      }
  }
}

TEST_CASE("cooperative matrix element-wise operations, conversions, length and per-element indexing") {
  MatrixDevice md;
  Device dev(md.opts);
  const auto sc = subgroup_sizes(dev.inst.physical);
  for (uint32_t sg = sc.minSubgroupSize; sg <= sc.maxSubgroupSize; sg *= 2) {
    const uint32_t subgroups = 2, groups = 2;
    auto run = [&](auto c, const char* name) {
      ComputeJob job;
      job.spirv = shader(name);
      job.buffers = {&c.bx, &c.by, &c.out, &c.len};
      job.specialization = {spec(0, subgroups * sg)};
      job.required_subgroup_size = sg;
      job.full_subgroups = true;
      job.groups[0] = groups;
      REQUIRE(run_compute_job(dev, job) == VK_SUCCESS);
      INFO(name << " subgroup size " << sg);
      CHECK(c.first_error(sg) == "");
    };
    run(MatrixOpsCase<float>(subgroups * groups, groups * subgroups * sg, 31 + sg), "ops_f32");
    run(MatrixOpsCase<int32_t>(subgroups * groups, groups * subgroups * sg, 37 + sg), "ops_i32");
  }
}

TEST_CASE("cooperativeMatrixRobustBufferAccess: tiles past a bound range read zero and store nothing") {
  MatrixDevice md(true);
  Device dev(md.opts);
  VkDevice d = dev.device;
  // Both buffers hold 1024 u32; the bound ranges are 300 elements at element 100.
  const uint32_t kCanary = 0xC0FFEE00u, first = 100, count = 300, ld = 20;
  Buffer src = dev.create_buffer(4096), dst = dev.create_buffer(4096);
  auto* s = static_cast<uint32_t*>(src.mapped);
  auto* o = static_cast<uint32_t*>(dst.mapped);
  StorageLayout layout(d, 2, 12);
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = 1;
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &ps;
  VkDescriptorPool pool;
  VK_CHECK(vkCreateDescriptorPool(d, &pci, nullptr, &pool));
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &layout.set_layout;
  VkDescriptorSet set;
  VK_CHECK(vkAllocateDescriptorSets(d, &dai, &set));
  VkDescriptorBufferInfo bi[2] = {{src.buffer, first * 4, count * 4}, {dst.buffer, first * 4, count * 4}};
  VkWriteDescriptorSet w[2];
  for (uint32_t i = 0; i < 2; ++i) {
    w[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w[i].dstSet = set;
    w[i].dstBinding = i;
    w[i].descriptorCount = 1;
    w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w[i].pBufferInfo = &bi[i];
  }
  vkUpdateDescriptorSets(d, 2, w, 0, nullptr);
  const uint32_t sg = subgroup_sizes(dev.inst.physical).maxSubgroupSize;
  auto words = shader("robust_tile");
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = words.size() * 4;
  smci.pCode = words.data();
  VkSpecializationMapEntry me{0, 0, 4};
  VkSpecializationInfo si{1, &me, 4, &sg};
  VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, &smci, 0, VK_SHADER_STAGE_COMPUTE_BIT,
               VK_NULL_HANDLE, "main", &si};
  cci.layout = layout.layout;
  VkPipeline pipe;
  VK_CHECK(vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &cci, nullptr, &pipe));
  // Tiles starting at these elements of the ranges: inside, running past the end by some
  // rows, starting past the end, and starting at a huge offset.
  for (uint32_t start : {0u, 10u, 60u, 250u, 299u, 400u, 0x7FFFFFF0u}) {
    INFO("tile at element " << start);
    for (uint32_t i = 0; i < 1024; ++i) {
      s[i] = i >= first && i < first + count ? 5000 + (i - first) : kCanary;
      o[i] = kCanary;
    }
    VkCommandBuffer cb = dev.begin();
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout.layout, 0, 1, &set, 0, nullptr);
    uint32_t pc[3] = {start, start, ld};
    vkCmdPushConstants(cb, layout.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 12, pc);
    vkCmdDispatch(cb, 1, 1, 1);
    dev.submit_and_wait(cb);
    for (uint32_t i = 0; i < 1024; ++i) {
      INFO("element " << i);
      if (i < first || i >= first + count) {
        REQUIRE(o[i] == kCanary);  // outside the bound range: never written
        continue;
      }
      uint32_t e = i - first;  // element of the range
      bool in_tile = uint64_t(e) >= start && (e - start) / ld < 16 && (e - start) % ld < 16;
      // Inside the tile: the source element of the range (also in range), else untouched.
      REQUIRE(o[i] == (in_tile ? 5000 + e : kCanary));
    }
  }
  vkDestroyPipeline(d, pipe, nullptr);
  vkDestroyDescriptorPool(d, pool, nullptr);
  dev.destroy_buffer(src);
  dev.destroy_buffer(dst);
}

TEST_CASE("a shader using a cooperative matrix combination the device does not list fails pipeline creation") {
  MatrixDevice md;
  Device dev(md.opts);
  std::vector<uint8_t> A(4096), B(4096), C(4096), D(4096);
  ComputeJob job;
  job.buffers = {&A, &B, &C, &D};
  job.push = u32_bytes({16, 16, 16, 16});
  SECTION("an unlisted size") {
    job.spirv = shader("muladd_f16_f32");
    job.specialization = {spec(0, 32), spec(1, 24), spec(2, 16), spec(3, 16), spec(4, 0)};
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
  SECTION("s8 accumulators without saturation (listed only saturating)") {
    job.spirv = shader("muladd_s8_s8");
    job.specialization = {spec(0, 32), spec(1, 16), spec(2, 16), spec(3, 16), spec(4, 0)};
    CHECK(run_compute_job(dev, job) != VK_SUCCESS);
  }
}

TEST_CASE("without the cooperativeMatrix feature a matrix shader fails pipeline creation") {
  Device dev;
  std::vector<uint8_t> A(4096), B(4096), C(4096), D(4096);
  ComputeJob job;
  job.buffers = {&A, &B, &C, &D};
  job.push = u32_bytes({16, 16, 16, 16});
  job.spirv = shader("muladd_f32_f32");
  job.specialization = {spec(0, 32), spec(1, 16), spec(2, 16), spec(3, 16), spec(4, 0)};
  CHECK(run_compute_job(dev, job) != VK_SUCCESS);
}
