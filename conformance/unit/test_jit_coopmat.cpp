// Cooperative matrices in the JIT without Vulkan (lower_coopmat.cpp): multiply-add of every
// kind of combination through load, mul-add and store, checked against a plain C++
// computation in double (float inputs are small integers, so every partial sum is exact
// and results compare exactly); B row- and column-major with padded strides; several
// subgroups per workgroup at every subgroup size.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "coopvk/kernels/number_formats.h"
#include "coopvk/kernels/tile_mma.h"
#include "jit_run.h"
#include "matrix_ops_reference.h"
#include "matrix_reference.h"

using namespace coopvk;
using namespace coopvk::test;
using kernels::NumberFormat;

namespace {

struct Combo {
  const char* shader;
  NumberFormat a, b, c, r;
  uint32_t m, n, k;
  bool saturating;
  int lo, hi;  // input range
};

jit::SpecializationValue spec_u32(uint32_t id, uint32_t v) {
  jit::SpecializationValue s{id, std::vector<uint8_t>(4)};
  std::memcpy(s.bytes.data(), &v, 4);
  return s;
}

}  // namespace

TEST_CASE("cooperative matrix multiply-add through load, mul-add and store") {
  const Combo combo = GENERATE(
      Combo{"muladd_f16_f32", NumberFormat::F16, NumberFormat::F16, NumberFormat::F32, NumberFormat::F32, 16, 16, 16, false, -4, 4},
      Combo{"muladd_f16_f32", NumberFormat::F16, NumberFormat::F16, NumberFormat::F32, NumberFormat::F32, 16, 8, 8, false, -4, 4},
      Combo{"muladd_f16_f16", NumberFormat::F16, NumberFormat::F16, NumberFormat::F16, NumberFormat::F16, 16, 8, 16, false, -3, 3},
      Combo{"muladd_f32_f32", NumberFormat::F32, NumberFormat::F32, NumberFormat::F32, NumberFormat::F32, 16, 16, 16, false, -8, 8},
      Combo{"muladd_s8_s32", NumberFormat::I8, NumberFormat::I8, NumberFormat::I32, NumberFormat::I32, 16, 16, 32, false, -128, 127},
      Combo{"muladd_s8_s32_sat", NumberFormat::I8, NumberFormat::I8, NumberFormat::I32, NumberFormat::I32, 16, 8, 32, true, -128, 127},
      Combo{"muladd_u8_u32", NumberFormat::U8, NumberFormat::U8, NumberFormat::U32, NumberFormat::U32, 16, 8, 32, false, 0, 255},
      Combo{"muladd_s8_s8", NumberFormat::I8, NumberFormat::I8, NumberFormat::I8, NumberFormat::I8, 16, 16, 16, false, -128, 127},
      Combo{"muladd_u8_u8_sat", NumberFormat::U8, NumberFormat::U8, NumberFormat::U8, NumberFormat::U8, 16, 16, 16, true, 0, 255},
      Combo{"muladd_s8_s8_sat", NumberFormat::I8, NumberFormat::I8, NumberFormat::I8, NumberFormat::I8, 16, 16, 16, true, -4, 4},
      Combo{"muladd_bf16_f32", NumberFormat::BF16, NumberFormat::BF16, NumberFormat::F32, NumberFormat::F32, 16, 16, 16, false, -16, 16},
      Combo{"muladd_e4m3_f32", NumberFormat::E4M3, NumberFormat::E4M3, NumberFormat::F32, NumberFormat::F32, 16, 16, 32, false, -8, 8});
  const uint32_t sg = GENERATE(4u, 8u, 16u, 32u, 64u);
  const int layout_b = GENERATE(0, 1);
  const uint32_t M = combo.m, N = combo.n, K = combo.k;
  const uint32_t subgroups = 2, groups = 3, tiles = subgroups * groups;
  // Padded strides (in elements): rows longer than the tile, as in a bigger matrix.
  const uint32_t lda = K + 3, ldb = (layout_b ? K : N) + 5, ldc = N + 1, ldd = N + 2;
  const uint32_t b_lines = layout_b ? N : K;
  std::vector<uint8_t> A(tiles * M * lda * kernels::format_size(combo.a)),
      Bm(tiles * b_lines * ldb * kernels::format_size(combo.b)),
      Cm(tiles * M * ldc * kernels::format_size(combo.c)),
      D(tiles * M * ldd * kernels::format_size(combo.r), 0xAB);
  std::mt19937 rng(12345 + sg);
  std::uniform_int_distribution<int> dist(combo.lo, combo.hi);
  std::vector<double> av(tiles * M * K), bv(tiles * K * N), cv(tiles * M * N);
  for (uint32_t t = 0; t < tiles; ++t) {
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t k = 0; k < K; ++k) put(A, (t * M + i) * lda + k, combo.a, av[(t * M + i) * K + k] = dist(rng));
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t j = 0; j < N; ++j) {
        double v = bv[(t * K + k) * N + j] = dist(rng);
        put(Bm, layout_b ? (t * N + j) * ldb + k : (t * K + k) * ldb + j, combo.b, v);
      }
    // Accumulators: near the top of the range for the saturating case, so it saturates.
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double v;
        if (combo.saturating) v = j % 2 ? int_hi(combo.c) - 20 - (dist(rng) & 7) : int_lo(combo.c) + 20 + (dist(rng) & 7);
        else if (is_int_format(combo.c) && kernels::format_size(combo.c) == 1) v = dist(rng);
        else v = double(dist(rng) * (combo.c == NumberFormat::U32 ? 100 : 10));
        put(Cm, (t * M + i) * ldc + j, combo.c, cv[(t * M + i) * N + j] = v);
      }
  }
  Run r;
  r.buffers = {&A, &Bm, &Cm, &D};
  r.groups[0] = groups;
  r.subgroup_size = sg;
  r.matrices = {{M, N, K, uint8_t(combo.a), uint8_t(combo.b), uint8_t(combo.c), uint8_t(combo.r), combo.saturating}};
  r.spec = {spec_u32(0, subgroups * sg), spec_u32(1, M), spec_u32(2, N), spec_u32(3, K), spec_u32(4, uint32_t(layout_b))};
  r.push = bytes_of(std::vector<uint32_t>{lda, ldb, ldc, ldd});
  run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, combo.shader), r);

  for (uint32_t t = 0; t < tiles; ++t)
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double want = cv[(t * M + i) * N + j];
        for (uint32_t k = 0; k < K; ++k) want += av[(t * M + i) * K + k] * bv[(t * K + k) * N + j];
        want = decode(combo.r, muladd_result(combo.r, want, combo.saturating));
        double got = get(D, (t * M + i) * ldd + j, combo.r);
        INFO(combo.shader << " " << M << "x" << N << "x" << K << " subgroup " << sg << " layout_b " << layout_b
                          << " tile " << t << " (" << i << ", " << j << ")");
        REQUIRE(got == want);
      }
  // Padding between rows of D is never written.
  for (uint32_t row = 0; row < tiles * M; ++row)
    for (uint32_t j = N; j < ldd; ++j)
      for (size_t byte = 0; byte < kernels::format_size(combo.r); ++byte)
        REQUIRE(D[(row * ldd + j) * kernels::format_size(combo.r) + byte] == 0xAB);
}

TEST_CASE("a cooperative matrix outside the allowed combinations fails to compile, naming it") {
  Run r;
  std::vector<uint8_t> a(64), b(64), c(64), d(64);
  r.buffers = {&a, &b, &c, &d};
  auto words = load_test_spv(COOPVK_TEST_SHADER_DIR, "muladd_f16_f32");
  jit::CompileResult none = compile_for(words, r);  // no combinations at all: feature off
  REQUIRE_FALSE(none.shader);
  CHECK(none.error.find("cooperativeMatrix") != std::string::npos);
  r.matrices = {{16, 16, 16, uint8_t(NumberFormat::F16), uint8_t(NumberFormat::F16), uint8_t(NumberFormat::F16),
                 uint8_t(NumberFormat::F16), false}};  // f16 accumulators only
  jit::CompileResult other = compile_for(words, r);
  REQUIRE_FALSE(other.shader);
  CHECK(other.error.find("f32") != std::string::npos);
}

namespace {

template <typename T>
void check_ops(const char* shader, uint32_t sg) {
  const uint32_t subgroups = 2, groups = 2;
  MatrixOpsCase<T> c(subgroups * groups, groups * subgroups * sg, 777 + sg);
  Run r;
  r.buffers = {&c.bx, &c.by, &c.out, &c.len};
  r.groups[0] = groups;
  r.subgroup_size = sg;
  using NF = NumberFormat;
  const bool fl = std::is_floating_point_v<T>;
  uint8_t me = uint8_t(fl ? NF::F32 : NF::I32), other = uint8_t(fl ? NF::F16 : NF::I8);
  r.matrices = {{16, 16, 16, other, other, me, me, false}, {16, 16, 16, other, other, other, other, false}};
  jit::SpecializationValue ls{0, std::vector<uint8_t>(4)};
  uint32_t wg = subgroups * sg;
  std::memcpy(ls.bytes.data(), &wg, 4);
  r.spec = {ls};
  run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, shader), r);
  INFO(shader << " subgroup " << sg);
  CHECK(c.first_error(sg) == "");
}

}  // namespace

TEST_CASE("cooperative matrix element-wise operations, components, constants and conversions") {
  uint32_t sg = GENERATE(4u, 8u, 16u, 32u, 64u);
  check_ops<float>("ops_f32", sg);
  check_ops<int32_t>("ops_i32", sg);
}

namespace {
// Calls `callee` (a packer: source, row stride, out) whose stride is not a constant: the
// packs from a buffer a shader loaded with a stride it computed.
size_t calls_with_runtime_stride(const std::string& ir, const std::string& callee) {
  size_t n = 0;
  for (size_t at = ir.find(callee); at != std::string::npos; at = ir.find(callee, at + 1)) {
    const std::string line = ir.substr(at, ir.find('\n', at) - at);
    if (line.find(", i64 %") != std::string::npos) ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("a K loop packs each tile of A and B once per step and computes the GEMM") {
  // gemm_body.glsl: 2 x 2 subgroups, each with 2 x 2 accumulator tiles, four K steps. Each
  // step loads 2 A and 2 B tiles into matrix variables and multiplies all four pairs: with
  // the packed-operand caches (lower_coopmat_packed.cpp) the optimized code packs 2 A and
  // 2 B tiles from the buffers and makes 4 packed multiply-adds per step, fused into two
  // calls of two. Every step reloads the tiles, so a
  // stale cache would also show in the results, checked against a double reference.
  struct Gemm {
    const char* shader;
    NumberFormat a, c;
    uint32_t tk;
    int lo, hi;
  };
  const Gemm g = GENERATE(Gemm{"gemm_f16_f32", NumberFormat::F16, NumberFormat::F32, 16, -3, 3},
                          Gemm{"gemm_s8_s32", NumberFormat::I8, NumberFormat::I32, 32, -128, 127});
  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t TM = 16, TN = 16, TK = g.tk, M = 128, N = 128, K = 4 * TK;
  std::vector<uint8_t> A(M * K * kernels::format_size(g.a)), Bm(K * N * kernels::format_size(g.a)),
      Cm(M * N * kernels::format_size(g.c)), D(M * N * kernels::format_size(g.c));
  std::mt19937 rng(99 + sg);
  std::uniform_int_distribution<int> dist(g.lo, g.hi);
  std::vector<double> av(M * K), bv(K * N), cv(M * N);
  for (size_t i = 0; i < av.size(); ++i) put(A, i, g.a, av[i] = dist(rng));
  for (size_t i = 0; i < bv.size(); ++i) put(Bm, i, g.a, bv[i] = dist(rng));
  for (size_t i = 0; i < cv.size(); ++i) put(Cm, i, g.c, cv[i] = dist(rng));
  Run r;
  r.buffers = {&A, &Bm, &Cm, &D};
  r.groups[0] = N / (4 * TN);
  r.groups[1] = M / (4 * TM);
  r.subgroup_size = sg;
  r.matrices = {{TM, TN, TK, uint8_t(g.a), uint8_t(g.a), uint8_t(g.c), uint8_t(g.c), false}};
  r.spec = {spec_u32(0, 4 * sg), spec_u32(1, TM), spec_u32(2, TN), spec_u32(3, TK), spec_u32(4, 2)};
  r.push = bytes_of(std::vector<uint32_t>{K, K, N, N, N});
  const std::vector<uint32_t> words = load_test_spv(COOPVK_TEST_SHADER_DIR, g.shader);
  INFO(g.shader << " subgroup " << sg);

  jit::CompileResult cr;
  const std::string ir = optimized_ir(words, options_for(r), &cr, true);
  kernels::TileMmaPacked parts;
  if (kernels::tile_mma_packed({g.a, g.a, g.c, g.c, TM, TN, TK}, &parts)) {
    // Packed straight from the buffers, at the loads' run-time stride (the variables
    // themselves are never written: every load of them feeds a multiply-add at once): one
    // call site per tile, or one in a loop of two LLVM chose not to unroll.
    for (const char* part : {"call void @coopvk_mma_split.a.", "call void @coopvk_mma_split.b."}) {
      INFO(part);
      const size_t sites = calls_with_runtime_stride(ir, part);
      CHECK((sites == 1 || sites == 2));
    }
    // Every store to the tile variables packs, so no multiply-add tests a flag, and the four
    // of a step are one run of calls: two pairs that share A (pair_muladds.cpp).
    CHECK(occurrences(ir, "call void @coopvk_mma_split.mma2.") == 2);
    CHECK(occurrences(ir, "call void @coopvk_mma_split.mma.") == 0);
    CHECK(occurrences(ir, "call void @coopvk_mma.") == 0);
    // A and B come from read-only bindings and D is the only one written: each load may
    // take its tile from the dispatch's tile cache (lower_tile_cache.cpp), tested against
    // D's range. So the subgroups do not interleave to share their packs (lower_interleave.cpp):
    // they run in turn, each to its end.
    CHECK(occurrences(ir, "call ptr @coopvk_rt_tile_cache_get(") == occurrences(ir, "call void @coopvk_mma_split.b.") / 2 +
                                                                       occurrences(ir, "call void @coopvk_mma_split.a.") / 2);
    CHECK(occurrences(ir, "call ptr @coopvk_rt_tile_cache_get(") > 0);
    CHECK(occurrences(ir, "call void @coopvk_jit_subgroup_yield(") == 0);
    CHECK(occurrences(ir, "!coopvk.pack_bookkeeping") == 0);
    CHECK_FALSE(cr.shader->interleaves_subgroups);
    CHECK(cr.shader->pack_sites == 0);
    CHECK(cr.shader->range_fn != nullptr);
  } else {  // a kernel arch without split forms: the whole kernel per multiply-add
    CHECK(occurrences(ir, "call void @coopvk_mma.") == 4);
  }

  // Also as a VkPipelineCache gives it back; with the tile cache and without (where each
  // workgroup packs its own tiles).
  r.serialized = GENERATE(false, true);
  r.tile_cache = GENERATE(false, true);
  INFO("serialized " << r.serialized << ", tile cache " << r.tile_cache);
  const jit::CompiledShader ran = run_words(words, r);
  CHECK_FALSE(ran.interleaves_subgroups);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      double want = cv[i * N + j];
      for (uint32_t k = 0; k < K; ++k) want += av[i * K + k] * bv[k * N + j];
      INFO("(" << i << ", " << j << ")");
      REQUIRE(get(D, i * N + j, g.c) == want);
    }
}

namespace {
// The shared-packing shaders (packed_shared_*.comp): 16 x 32 8-bit A tiles, one 32 x 16 B
// tile, a 16 x 16 s32 result per accumulator, `steps` K steps by `subgroups` subgroups.
struct SharedTiles {
  std::vector<uint8_t> A, Bm, D;
  std::vector<double> av, bv;  // A and B as loaded at the start
  SharedTiles(uint32_t a_tiles, uint32_t results, uint32_t seed)
      : A(a_tiles * 512), Bm(512), D(results * 256 * 4), av(A.size()), bv(Bm.size()) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(-9, 9);
    for (size_t i = 0; i < av.size(); ++i) put(A, i, NumberFormat::I8, av[i] = dist(rng));
    for (size_t i = 0; i < bv.size(); ++i) put(Bm, i, NumberFormat::I8, bv[i] = dist(rng));
  }
  // acc += A tile `t` of `a` x B.
  void mul_add(const std::vector<double>& a, uint32_t t, double* acc) const {
    for (uint32_t i = 0; i < 16; ++i)
      for (uint32_t j = 0; j < 16; ++j)
        for (uint32_t k = 0; k < 32; ++k) acc[i * 16 + j] += a[t * 512 + i * 32 + k] * bv[k * 16 + j];
  }
  // Runs the shader, after checking that it interleaves its subgroups and shares both loads.
  void run(const char* shader, uint32_t sg, uint32_t subgroups, uint32_t steps) {
    using NF = NumberFormat;
    Run r;
    r.buffers = {&A, &Bm, &D};
    r.subgroup_size = sg;
    r.matrices = {{16, 16, 32, uint8_t(NF::I8), uint8_t(NF::I8), uint8_t(NF::I32), uint8_t(NF::I32), false}};
    r.spec = {spec_u32(0, subgroups * sg)};
    r.push = bytes_of(std::vector<uint32_t>{steps});
    const std::vector<uint32_t> words = load_test_spv(COOPVK_TEST_SHADER_DIR, shader);
    kernels::TileMmaPacked parts;
    if (kernels::tile_mma_packed({NF::I8, NF::I8, NF::I32, NF::I32, 16, 16, 32}, &parts)) {
      jit::CompileResult cr;
      const std::string ir = optimized_ir(words, options_for(r), &cr, true);
      CHECK(occurrences(ir, "call void @coopvk_jit_subgroup_yield(") == 1);
      CHECK(cr.shader->pack_sites == 2);  // the A and the B loads
    }
    run_words(words, r);
  }
};
}  // namespace

TEST_CASE("a subgroup sees its own stores to a tile the interleaved subgroups share") {
  // packed_shared_write.comp: four subgroups load the same two 8-bit A tiles and one B tile
  // every step; the last rewrites the first A tile's first row (one element per lane)
  // before each of its loads. The others pack the tiles first each step, so a copy of their
  // packing would miss the store: the store must move the pack epoch. Replayed in double
  // for the last subgroup (the others race with its stores).
  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t subgroups = 4, steps = 9, lanes = std::min(sg, 32u);
  INFO("subgroup " << sg);
  SharedTiles t(2, 2 * subgroups, 5 + sg);
  std::vector<double> av = t.av, want(2 * 256, 0.0);
  for (uint32_t s = 0; s < steps; ++s) {
    for (uint32_t i = 0; i < lanes; ++i) av[i] = double(int(s) - int(i));
    for (uint32_t k = 0; k < 2; ++k) t.mul_add(av, k, &want[k * 256]);
  }
  t.run("packed_shared_write", sg, subgroups, steps);
  for (uint32_t i = 0; i < 2 * 256; ++i) {
    INFO("element " << i);
    REQUIRE(get(t.D, (subgroups - 1) * 512 + i, NumberFormat::I32) == want[i]);
  }
}

TEST_CASE("a subgroup does not copy a shared tile whose packed copy holds another one since") {
  // packed_shared_stale.comp: at step s the first of two subgroups loads A tile s % 4, the
  // second tile (s - 1) % 4, which the first packed a step before into the copy it has just
  // packed tile s % 4 into. Replayed in double for both.
  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t subgroups = 2, steps = 7;
  INFO("subgroup " << sg);
  SharedTiles t(4, subgroups, 17 + sg);
  std::vector<double> want(subgroups * 256, 0.0);
  for (uint32_t g = 0; g < subgroups; ++g)
    for (uint32_t s = 0; s < steps; ++s) t.mul_add(t.av, (s + 4 - g) % 4, &want[g * 256]);
  t.run("packed_shared_stale", sg, subgroups, steps);
  for (uint32_t i = 0; i < subgroups * 256; ++i) {
    INFO("element " << i);
    REQUIRE(get(t.D, i, NumberFormat::I32) == want[i]);
  }
}

namespace {
// A 16 x 16 tile in double, row-major: what the packed-operand tests replay their shaders in.
using Tile16 = std::vector<double>;
// Four f16 tiles of small integers (exact in f16 and in every partial sum), into buf and back.
std::vector<Tile16> random_f16_tiles(std::vector<uint8_t>& buf, std::uniform_int_distribution<int>& dist,
                                     std::mt19937& rng) {
  std::vector<Tile16> tiles(4, Tile16(256));
  for (uint32_t t = 0; t < 4; ++t)
    for (uint32_t i = 0; i < 256; ++i) put(buf, t * 256 + i, NumberFormat::F16, tiles[t][i] = dist(rng));
  return tiles;
}
void mul_add16(const Tile16& x, const Tile16& y, Tile16& acc) {
  for (uint32_t i = 0; i < 16; ++i)
    for (uint32_t j = 0; j < 16; ++j)
      for (uint32_t k = 0; k < 16; ++k) acc[i * 16 + j] += x[i * 16 + k] * y[k * 16 + j];
}
// A run of one of those shaders: f16 x f16 + f32 at 16x16x16, one workgroup of one subgroup.
Run f16_tiles_run(std::vector<std::vector<uint8_t>*> buffers, uint32_t sg, const std::vector<uint32_t>& push) {
  using NF = NumberFormat;
  Run r;
  r.buffers = std::move(buffers);
  r.subgroup_size = sg;
  r.matrices = {{16, 16, 16, uint8_t(NF::F16), uint8_t(NF::F16), uint8_t(NF::F32), uint8_t(NF::F32), false}};
  r.spec = {spec_u32(0, sg)};
  r.push = bytes_of(push);
  return r;
}
}  // namespace

TEST_CASE("stores to a matrix variable refresh its packed copies") {
  // packed_reuse.comp, replayed here in double: reuse across steps, reloads, a whole-array
  // store, an element-wise result stored back, and a variable feeding two combinations.
  const uint32_t sg = GENERATE(4u, 8u, 32u);
  const uint32_t T = 256, steps = 12;
  using NF = NumberFormat;
  std::vector<uint8_t> A(4 * T * 2), Bm(4 * T * 2), D(3 * T * 4), E(T * 2);
  std::mt19937 rng(7 + sg);
  std::uniform_int_distribution<int> dist(-2, 2);
  using Tile = Tile16;
  std::vector<Tile> at = random_f16_tiles(A, dist, rng), bt = random_f16_tiles(Bm, dist, rng);
  auto mul_add = mul_add16;
  Tile ma[2] = {Tile(T), Tile(T)}, mb[2] = {bt[0], bt[1]}, mixed = at[3];
  Tile acc0(T), acc1(T), acc2(T), acc16(T);
  for (uint32_t s = 0; s < steps; ++s) {
    if (s % 2 == 0) ma[0] = at[(s / 2) % 4], ma[1] = at[(s / 2 + 1) % 4];
    mul_add(ma[0], mb[s % 2], acc0);
    mul_add(ma[1], mb[(s + 1) % 2], acc1);
    if (s % 3 == 1) {
      std::swap(ma[0], ma[1]);
      for (double& v : ma[0]) v *= 2;
    }
    if (s % 4 == 3) mb[1] = bt[(s / 4 + 2) % 4];
    mul_add(ma[0], mb[0], acc2);
    mul_add(mixed, mb[1], acc16);
    mul_add(mixed, mb[1], acc2);
  }
  Run r = f16_tiles_run({&A, &Bm, &D, &E}, sg, {steps});
  r.matrices.push_back({16, 16, 16, uint8_t(NF::F16), uint8_t(NF::F16), uint8_t(NF::F16), uint8_t(NF::F16), false});
  run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, "packed_reuse"), r);
  INFO("subgroup " << sg);
  for (uint32_t i = 0; i < T; ++i) {
    INFO("element " << i);
    REQUIRE(get(D, i, NF::F32) == acc0[i]);
    REQUIRE(get(D, T + i, NF::F32) == acc1[i]);
    REQUIRE(get(D, 2 * T + i, NF::F32) == acc2[i]);
    REQUIRE(get(E, i, NF::F16) == acc16[i]);  // integers below 2048: exact in f16
  }
}

TEST_CASE("matrices packed straight from their buffer loads mix with stores that must reach the variable") {
  // packed_direct.comp, replayed in double: A and B tiles packed from the buffers, a B tile
  // loaded upside down through a negative stride (its rows gathered at run time), a splat
  // stored into a B variable, and the multiply-adds after each that must see them.
  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t T = 256, steps = 14;
  using NF = NumberFormat;
  std::vector<uint8_t> A(4 * T * 2), Bm(4 * T * 2), D(2 * T * 4);
  std::mt19937 rng(21 + sg);
  std::uniform_int_distribution<int> dist(-2, 2);
  using Tile = Tile16;
  std::vector<Tile> at = random_f16_tiles(A, dist, rng), bt = random_f16_tiles(Bm, dist, rng);
  auto mul_add = mul_add16;
  Tile acc0(T), acc1(T);
  for (uint32_t s = 0; s < steps; ++s) {
    const Tile& ma = at[s % 4];
    Tile mb0 = bt[s % 4];
    if (s % 3 == 0)  // rows from the last one up
      for (uint32_t r = 0; r < 16; ++r)
        for (uint32_t c = 0; c < 16; ++c) mb0[r * 16 + c] = bt[s % 4][(15 - r) * 16 + c];
    const Tile mb1 = s % 5 == 2 ? Tile(T, double(s % 3)) : bt[(s + 1) % 4];
    mul_add(ma, mb0, acc0);
    mul_add(ma, mb1, acc1);
  }
  Run r = f16_tiles_run({&A, &Bm, &D}, sg, {steps, uint32_t(-16)});
  const std::vector<uint32_t> words = load_test_spv(COOPVK_TEST_SHADER_DIR, "packed_direct");
  INFO("subgroup " << sg);
  kernels::TileMmaPacked parts;
  if (kernels::tile_mma_packed({NF::F16, NF::F16, NF::F32, NF::F32, 16, 16, 16}, &parts)) {
    jit::CompileResult cr;
    const std::string ir = optimized_ir(words, options_for(r), &cr, true);
    // the upside-down B loads pack from the buffer where their stride allows (the other
    // loads' constant strides leave nothing in the IR to tell them from packs of variables)
    CHECK(calls_with_runtime_stride(ir, "call void @coopvk_mma_split.b.") >= 1);
    // and gather the rows first where it does not (negative here)
    CHECK(ir.find("call void @coopvk_rt_copy_rows(") != std::string::npos);
  }
  run_words(words, r);
  for (uint32_t i = 0; i < T; ++i) {
    INFO("element " << i);
    REQUIRE(get(D, i, NF::F32) == acc0[i]);
    REQUIRE(get(D, T + i, NF::F32) == acc1[i]);
  }
}

TEST_CASE("paired multiply-adds that chain through one accumulator keep their order") {
  // packed_chain.comp: acc = A B0 + acc; acc = A B1 + acc; other = A B1 + other, every step,
  // with acc and other in an array of accumulators.
  // The first two calls share A and stand next to each other, so pair_muladds() fuses them
  // into one mma2 call whose second multiply-add reads the first's result (mma2 sees the
  // overlap and runs them in turn); the third is left alone. Checked against double.
  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t T = 256, steps = 6;
  using NF = NumberFormat;
  std::vector<uint8_t> A(4 * T * 2), Bm(4 * T * 2), D(2 * T * 4);
  std::mt19937 rng(21 + sg);
  std::uniform_int_distribution<int> dist(-2, 2);
  std::vector<Tile16> at = random_f16_tiles(A, dist, rng), bt = random_f16_tiles(Bm, dist, rng);
  Tile16 acc(T), other(T);
  for (uint32_t s = 0; s < steps; ++s) {
    const Tile16& a = at[(s + 1) % 4];  // ma[which]
    mul_add16(a, bt[s % 4], acc);
    mul_add16(a, bt[(s + 1) % 4], acc);
    mul_add16(a, bt[(s + 1) % 4], other);
  }
  Run r = f16_tiles_run({&A, &Bm, &D}, sg, {steps, 1});  // acc in acc[1], other in acc[0]
  const std::vector<uint32_t> words = load_test_spv(COOPVK_TEST_SHADER_DIR, "packed_chain");
  INFO("subgroup " << sg);
  jit::CompileResult cr;
  const std::string ir = optimized_ir(words, options_for(r), &cr, true);
  kernels::TileMmaPacked parts;
  if (kernels::tile_mma_packed({NF::F16, NF::F16, NF::F32, NF::F32, 16, 16, 16}, &parts)) {
    CHECK(occurrences(ir, "call void @coopvk_mma_split.mma2.") == 1);
    CHECK(occurrences(ir, "call void @coopvk_mma_split.mma.") == 1);
  }
  run_words(words, r);
  for (uint32_t i = 0; i < T; ++i) {
    INFO("element " << i);
    REQUIRE(get(D, i, NF::F32) == acc[i]);
    REQUIRE(get(D, T + i, NF::F32) == other[i]);
  }
}

TEST_CASE("a matrix variable's initializer reaches its packed copies") {
  // packed_init.spvasm: A tiles whose only store is the OpVariable initializer (splats of 1
  // and 2), each multiplied with the step's B tile. Checked against double.
  const uint32_t sg = GENERATE(8u, 32u);
  const uint32_t T = 256, steps = 5;
  using NF = NumberFormat;
  std::vector<uint8_t> Bm(4 * T * 2), D(2 * T * 4);
  std::mt19937 rng(31 + sg);
  std::uniform_int_distribution<int> dist(-2, 2);
  std::vector<Tile16> bt = random_f16_tiles(Bm, dist, rng);
  Tile16 acc[2] = {Tile16(T), Tile16(T)};
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t i = 0; i < 2; ++i) mul_add16(Tile16(T, double(i + 1)), bt[s % 4], acc[i]);
  Run r = f16_tiles_run({&Bm, &D}, sg, {steps});
  run_words(load_test_spv(COOPVK_TEST_SHADER_DIR, "packed_init"), r);
  INFO("subgroup " << sg);
  for (uint32_t i = 0; i < T; ++i) {
    INFO("element " << i);
    REQUIRE(get(D, i, NF::F32) == acc[0][i]);
    REQUIRE(get(D, T + i, NF::F32) == acc[1][i]);
  }
}
