// WorkgroupRunner with hand-written C++ functions standing in for JIT-compiled subgroups:
// barrier semantics (nobody passes until everybody arrived), several barriers in a row,
// the no-barrier path, yields, MXCSR across switches, shared memory zeroing, workgroup
// ids, and stack reuse across many workgroups.
#include <catch2/catch_test_macros.hpp>

#include <pthread.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "coopvk/jit/workgroup_runner.h"

using namespace coopvk::jit;

namespace {

constexpr uint32_t kSubgroups = 8;

// Results go to a "buffer" descriptor, as real shaders' would.
uint32_t* out_words(const DispatchState* ds) {
  return reinterpret_cast<uint32_t*>(ds->sets[0][0].base);
}

// Each subgroup writes its id, meets the others at a barrier, then reads every slot:
// with a correct barrier all slots are filled; without one the early subgroups would see
// zeros (shared memory is zeroed per workgroup).
void write_barrier_read(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  auto* shared = reinterpret_cast<uint32_t*>(ws->shared_memory);
  shared[s] = s + 1;
  coopvk_jit_workgroup_barrier(ws);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < kSubgroups; ++i) sum += shared[i];
  out_words(ds)[s] = sum;
}

// Several phases: in phase p subgroup s reads its left neighbour's value of phase p-1.
// Two barriers per phase (read, then write) keep phases from overlapping.
constexpr uint32_t kPhases = 5;
void shift_ring(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  auto* shared = reinterpret_cast<uint32_t*>(ws->shared_memory);
  shared[s] = s;
  for (uint32_t p = 0; p < kPhases; ++p) {
    coopvk_jit_workgroup_barrier(ws);
    uint32_t v = shared[(s + kSubgroups - 1) % kSubgroups];
    coopvk_jit_workgroup_barrier(ws);
    shared[s] = v;
  }
  coopvk_jit_workgroup_barrier(ws);
  out_words(ds)[s] = shared[s];
}

// Without barriers subgroups run in order on the calling thread.
void record_order(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  auto* shared = reinterpret_cast<uint32_t*>(ws->shared_memory);
  uint32_t pos = shared[0]++;
  out_words(ds)[pos] = s;
  const uint32_t* id = ws->workgroup_id;
  out_words(ds)[16 + s] = id[0] + 100 * id[1] + 10000 * id[2];
}

// Uses a good deal of stack on every fiber, then barriers, then checks its stack data
// survived the other fibers running: each fiber must have a stack of its own.
void deep_stack(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  volatile uint8_t local[64 * 1024];
  for (size_t i = 0; i < sizeof(local); i += 64) local[i] = static_cast<uint8_t>(s * 7 + i);
  coopvk_jit_workgroup_barrier(ws);
  bool ok = true;
  for (size_t i = 0; i < sizeof(local); i += 64) ok &= local[i] == static_cast<uint8_t>(s * 7 + i);
  out_words(ds)[s] = ok ? 1 : 0;
}

// Sums shared memory (must read as zero at start), accumulates a per-workgroup count.
void counts_workgroups(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  auto* shared = reinterpret_cast<uint32_t*>(ws->shared_memory);
  uint32_t dirty = 0;
  for (uint32_t i = 0; i < 64; ++i) dirty |= shared[i];
  coopvk_jit_workgroup_barrier(ws);
  shared[s] = 0xFFFFFFFF;  // leave garbage for the next workgroup
  coopvk_jit_workgroup_barrier(ws);
  if (dirty) out_words(ds)[1] = 1;
  if (s == 0) out_words(ds)[0]++;
}

// A frame far larger than the thread that dispatches it has (needs_fiber_stack): 4 MiB,
// all of it touched, in order, without barriers.
void huge_frame(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  volatile uint8_t local[4u << 20];
  for (size_t i = 0; i < sizeof(local); i += 4096) local[i] = static_cast<uint8_t>(s + i);
  bool ok = true;
  for (size_t i = 0; i < sizeof(local); i += 4096) ok &= local[i] == static_cast<uint8_t>(s + i);
  auto* shared = reinterpret_cast<uint32_t*>(ws->shared_memory);
  out_words(ds)[shared[0]++] = ok ? s + 1 : 0;
}

struct Harness {
  std::vector<uint32_t> out = std::vector<uint32_t>(256, 0);
  BufferDescriptor desc{};
  DispatchState ds{};
  uint8_t push[kMaxPushConstantBytes] = {};
  Harness() {
    desc.base = reinterpret_cast<uint8_t*>(out.data());
    desc.range = out.size() * 4;
    ds.sets[0] = &desc;
    ds.push_constants = push;
    ds.num_workgroups[0] = ds.num_workgroups[1] = ds.num_workgroups[2] = 1;
  }
};

// Three steps each, yielding after every one: interleaved, the steps go round the subgroups.
void yield_steps(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  auto* shared = reinterpret_cast<uint32_t*>(ws->shared_memory);
  for (uint32_t step = 0; step < 3; ++step) {
    out_words(ds)[shared[0]++] = step * 100 + s;
    coopvk_jit_subgroup_yield(ws);
  }
}

#if defined(__x86_64__)
// Each subgroup runs with a rounding mode of its own (MXCSR bits 13-14) across barriers,
// which switch to fibers running with the others'.
void own_rounding(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  const uint32_t mine = 0x1F80u | (s % 4) << 13;
  _mm_setcsr(mine);
  bool kept = true;
  for (uint32_t p = 0; p < 3; ++p) {
    coopvk_jit_workgroup_barrier(ws);
    kept = kept && _mm_getcsr() == mine;
  }
  out_words(ds)[s] = kept ? 1 : 0;
}
#endif

CompiledShader make_shader(SubgroupFn fn, uint32_t subgroups, uint32_t shared_bytes, bool barriers) {
  CompiledShader sh;
  sh.fn = fn;
  sh.subgroup_size = 8;
  sh.local_size[0] = 8 * subgroups;
  sh.subgroups_per_workgroup = subgroups;
  sh.shared_memory_bytes = shared_bytes;
  sh.uses_workgroup_barrier = barriers;
  return sh;
}

}  // namespace

TEST_CASE("a barrier lets no subgroup pass before all have arrived") {
  Harness h;
  WorkgroupRunner runner;
  CompiledShader sh = make_shader(write_barrier_read, kSubgroups, kSubgroups * 4, true);
  const uint32_t wg[3] = {0, 0, 0};
  runner.run(sh, h.ds, wg);
  const uint32_t expect = kSubgroups * (kSubgroups + 1) / 2;
  for (uint32_t s = 0; s < kSubgroups; ++s) CHECK(h.out[s] == expect);
}

TEST_CASE("many barriers in a row keep phases apart") {
  Harness h;
  WorkgroupRunner runner;
  CompiledShader sh = make_shader(shift_ring, kSubgroups, kSubgroups * 4, true);
  const uint32_t wg[3] = {0, 0, 0};
  runner.run(sh, h.ds, wg);
  // After kPhases shifts by one, slot s holds the id of subgroup s - kPhases (mod n).
  for (uint32_t s = 0; s < kSubgroups; ++s)
    CHECK(h.out[s] == (s + kSubgroups * kPhases - kPhases) % kSubgroups);
}

TEST_CASE("without barriers subgroups run in order with the workgroup id") {
  Harness h;
  WorkgroupRunner runner;
  CompiledShader sh = make_shader(record_order, kSubgroups, 64, false);
  const uint32_t wg[3] = {3, 5, 7};
  runner.run(sh, h.ds, wg);
  for (uint32_t s = 0; s < kSubgroups; ++s) {
    CHECK(h.out[s] == s);
    CHECK(h.out[16 + s] == 3 + 500 + 70000);
  }
}

TEST_CASE("yields take the subgroups of an interleaving shader round in turn") {
  Harness h;
  WorkgroupRunner runner;
  CompiledShader sh = make_shader(yield_steps, kSubgroups, 64, false);
  sh.interleaves_subgroups = true;
  const uint32_t wg[3] = {0, 0, 0};
  runner.run(sh, h.ds, wg);
  for (uint32_t i = 0; i < 3 * kSubgroups; ++i) CHECK(h.out[i] == (i / kSubgroups) * 100 + i % kSubgroups);
  // Without asking for it, each subgroup runs to its end first (the yields do nothing).
  Harness h2;
  sh.interleaves_subgroups = false;
  runner.run(sh, h2.ds, wg);
  for (uint32_t i = 0; i < 3 * kSubgroups; ++i) CHECK(h2.out[i] == (i % 3) * 100 + i / 3);
}

#if defined(__x86_64__)
TEST_CASE("fiber switches keep each subgroup's MXCSR and give the runner its own back") {
  Harness h;
  WorkgroupRunner runner;
  CompiledShader sh = make_shader(own_rounding, kSubgroups, 0, true);
  const uint32_t wg[3] = {0, 0, 0};
  const uint32_t before = _mm_getcsr();
  const uint32_t flush = 0x9FC0;  // FTZ and DAZ, round to nearest
  _mm_setcsr(flush);
  for (int rep = 0; rep < 2; ++rep) runner.run(sh, h.ds, wg);
  const uint32_t after = _mm_getcsr();
  _mm_setcsr(before);
  CHECK(after == flush);
  for (uint32_t s = 0; s < kSubgroups; ++s) CHECK(h.out[s] == 1);
}
#endif

TEST_CASE("each fiber has its own stack") {
  Harness h;
  WorkgroupRunner runner;
  CompiledShader sh = make_shader(deep_stack, kSubgroups, 0, true);
  const uint32_t wg[3] = {0, 0, 0};
  for (int rep = 0; rep < 3; ++rep) {  // stacks are reused: run a few workgroups
    std::fill(h.out.begin(), h.out.end(), 0);
    runner.run(sh, h.ds, wg);
    for (uint32_t s = 0; s < kSubgroups; ++s) CHECK(h.out[s] == 1);
  }
}

TEST_CASE("shared memory is zero at the start of every workgroup; runners reuse fibers") {
  Harness h;
  WorkgroupRunner runner;
  CompiledShader sh = make_shader(counts_workgroups, kSubgroups, 256, true);
  const uint32_t wg[3] = {0, 0, 0};
  for (int i = 0; i < 1000; ++i) runner.run(sh, h.ds, wg);
  CHECK(h.out[0] == 1000);
  CHECK(h.out[1] == 0);
}

TEST_CASE("one subgroup with barriers runs without fibers; sizes may change between runs") {
  Harness h;
  WorkgroupRunner runner;
  const uint32_t wg[3] = {0, 0, 0};
  CompiledShader one = make_shader(write_barrier_read, 1, kSubgroups * 4, true);
  runner.run(one, h.ds, wg);
  CHECK(h.out[0] == 1);
  // Then a larger workgroup on the same runner (more stacks, more shared memory).
  CompiledShader big = make_shader(shift_ring, kSubgroups, 4096, true);
  runner.run(big, h.ds, wg);
  for (uint32_t s = 0; s < kSubgroups; ++s)
    CHECK(h.out[s] == (s + kSubgroups * kPhases - kPhases) % kSubgroups);
}

TEST_CASE("runners on different threads are independent") {
  constexpr int kThreads = 4;
  std::vector<Harness> hs(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      WorkgroupRunner runner;
      CompiledShader sh = make_shader(shift_ring, kSubgroups, kSubgroups * 4, true);
      const uint32_t wg[3] = {0, 0, 0};
      for (int rep = 0; rep < 200; ++rep) {
        runner.run(sh, hs[t].ds, wg);
        for (uint32_t s = 0; s < kSubgroups; ++s)
          if (hs[t].out[s] != (s + kSubgroups * kPhases - kPhases) % kSubgroups) failures++;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
}

TEST_CASE("a shader whose frame needs the fiber stacks runs there, without barriers too") {
  Harness h;
  CompiledShader sh = make_shader(huge_frame, 3, 16, false);
  sh.needs_fiber_stack = true;
  struct Job {
    Harness* h;
    CompiledShader* sh;
  } job{&h, &sh};
  // A thread with a 256 KiB stack: the 4 MiB frames would fault on it.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256u << 10);
  pthread_t t;
  REQUIRE(pthread_create(
              &t, &attr,
              [](void* p) -> void* {
                auto* j = static_cast<Job*>(p);
                WorkgroupRunner runner;
                const uint32_t wg[3] = {0, 0, 0};
                for (int rep = 0; rep < 2; ++rep) {
                  std::memset(j->h->out.data(), 0, 64);
                  runner.run(*j->sh, j->h->ds, wg);
                }
                return nullptr;
              },
              &job) == 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  for (uint32_t s = 0; s < 3; ++s) CHECK(h.out[s] == s + 1);
}

namespace {

// The order workgroups run in: each appends its linear index (x + nx * y) to a list.
std::vector<uint32_t> g_visits;
void visit_subgroup(const DispatchState* ds, WorkgroupState* ws, uint32_t s) {
  if (s == 0) g_visits.push_back(ws->workgroup_id[0] + ds->num_workgroups[0] * ws->workgroup_id[1]);
}
// A stand-in for a compiled range function: the linear index as shader_abi.h defines it.
void visit_range(const DispatchState* ds, WorkgroupState*, uint64_t first, uint64_t count) {
  for (uint64_t i = first; i < first + count; ++i) g_visits.push_back(uint32_t(i));
}

// Runs a 5 x 10 grid through run_range in pieces of 7 positions (as the worker pool hands
// them out) and returns the visits.
std::vector<uint32_t> visit_grid(const CompiledShader& sh) {
  Harness h;
  h.ds.num_workgroups[0] = 5;
  h.ds.num_workgroups[1] = 10;
  WorkgroupRunner runner;
  g_visits.clear();
  for (uint64_t first = 0; first < 50; first += 7) runner.run_range(sh, h.ds, first, std::min<uint64_t>(7, 50 - first));
  return g_visits;
}

}  // namespace

TEST_CASE("a shader walking the tile cache takes a 2D grid in strips of rows, every workgroup once") {
  for (bool ranged : {false, true}) {
    CompiledShader sh = make_shader(visit_subgroup, 1, 0, false);
    if (ranged) sh.range_fn = visit_range;
    // The linear order without the tile cache.
    std::vector<uint32_t> v = visit_grid(sh);
    REQUIRE(v.size() == 50);
    for (uint32_t i = 0; i < 50; ++i) CHECK(v[i] == i);
    // Strips of 4 rows (the last of 2), column by column: (x, y) = (0,0) (0,1) (0,2) (0,3)
    // (1,0) ... (4,3), then rows 4-7, then rows 8-9.
    sh.walks_tile_cache = true;
    v = visit_grid(sh);
    REQUIRE(v.size() == 50);
    std::vector<uint32_t> expect;
    for (uint32_t y0 = 0; y0 < 10; y0 += 4)
      for (uint32_t x = 0; x < 5; ++x)
        for (uint32_t y = y0; y < std::min(y0 + 4, 10u); ++y) expect.push_back(x + 5 * y);
    CHECK(v == expect);
  }
}
