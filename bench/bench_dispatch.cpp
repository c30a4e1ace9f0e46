// What a small dispatch costs: one command buffer of N dispatches, submitted whole, timed
// from vkQueueSubmit to the fence, divided by N. Four kinds of command buffer:
//
//   empty    an empty shader (dispatch_empty.comp), bound once, N dispatches back to back;
//   atomic   a tiny shader (dispatch_atomic.comp: 64 invocations per workgroup, one atomic
//            add each into a small buffer), bound once, no barriers (atomics need none);
//   barrier  a tiny shader updating a buffer in place (dispatch_add.comp), bound once, a
//            compute-to-compute pipeline barrier between every two dispatches: each reads
//            what the one before wrote;
//   ggml     what ggml's graphs record for every node: bind a pipeline (two alternate),
//            bind a descriptor set (two alternate, ping-ponging between two buffers), push
//            constants (different each time), dispatch, barrier;
//   busy     like barrier, but each workgroup iterates an integer hash kBusyIters times
//            (dispatch_busy.comp: a few microseconds): dispatches worth spreading over
//            threads, whose time shows whether a driver's threads are awake to take them.
//
// Each at N = 100 and N = [n], with 1 workgroup per dispatch and with [groups] (64
// invocations each). Every command buffer's first submission is checked against a CPU
// reference (exact: integer arithmetic) before any is timed. Then the latency of a single
// dispatch, vkQueueSubmit to the fence signalled: back to back, and after [idle-ms] of idle
// queue (long enough for a driver's threads to go to sleep).
//
//   bench_dispatch [n=1000] [reps=11] [groups=16] [idle-ms=5] [kind...]
//
// (Kinds named at the end: only those, and no latency; to profile one.)
// Also the time to record the ggml command buffer of N dispatches of [groups] (ggml records
// its graphs again for every token). Prints a table of microseconds (medians of reps
// submissions) and machine-readable lines `dispatch_<kind>_g<groups>_n<N>_us`,
// `dispatch_record_ggml_us` (per dispatch), `dispatch_latency_g<groups>_us`,
// `dispatch_latency_idle_g<groups>_us`.
#include <thread>

#include "bench_vk.h"

namespace {

constexpr uint32_t kLocal = 64;  // every shader's workgroup size

enum class Kind { Empty, Atomic, Barrier, Ggml, Busy };
constexpr int kKinds = 5;
const char* const kKindNames[kKinds] = {"empty", "atomic", "barrier", "ggml", "busy"};
constexpr uint32_t kBusyIters = 1000;

uint32_t busy_hash(uint32_t x, uint32_t k) { return (x ^ (x >> 15)) * 2654435761u + k; }

struct Rig {
  bench::Context& ctx;
  uint32_t elements;  // of each buffer: the most invocations one dispatch has
  bench::Compute comp;  // 2 storage buffers, 4 bytes of push constants
  VkPipeline empty, atomic, add1, add3, busy;
  bench::Buffer a, b;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet aa = VK_NULL_HANDLE, ab = VK_NULL_HANDLE, ba = VK_NULL_HANDLE;  // (src, dst)

  Rig(bench::Context& c, uint32_t max_groups)
      : ctx(c), elements(max_groups * kLocal), comp(c.device, 2, 4) {
    empty = comp.create(bench::load_spv("dispatch_empty"));
    atomic = comp.create(bench::load_spv("dispatch_atomic"));
    busy = comp.create(bench::load_spv("dispatch_busy"));
    const std::vector<uint32_t> add = bench::load_spv("dispatch_add");
    for (uint32_t mul : {1u, 3u}) {
      VkSpecializationMapEntry e{0, 0, 4};
      VkSpecializationInfo si{1, &e, 4, &mul};
      (mul == 1 ? add1 : add3) = comp.create(add, VK_NULL_HANDLE, &si);
    }
    a = ctx.buffer(VkDeviceSize(elements) * 4);
    b = ctx.buffer(VkDeviceSize(elements) * 4);
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 6};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 3;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &size;
    BENCH_VK(vkCreateDescriptorPool(ctx.device, &dpci, nullptr, &pool));
    aa = make_set(a, a);
    ab = make_set(a, b);
    ba = make_set(b, a);
  }
  ~Rig() {
    for (VkPipeline p : {empty, atomic, add1, add3, busy}) vkDestroyPipeline(ctx.device, p, nullptr);
    vkDestroyDescriptorPool(ctx.device, pool, nullptr);
    ctx.destroy(a);
    ctx.destroy(b);
  }
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  VkDescriptorSet make_set(const bench::Buffer& src, const bench::Buffer& dst) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &comp.set_layout;
    VkDescriptorSet set;
    BENCH_VK(vkAllocateDescriptorSets(ctx.device, &ai, &set));
    VkDescriptorBufferInfo infos[2] = {{src.buffer, 0, VK_WHOLE_SIZE}, {dst.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet w[2];
    for (uint32_t i = 0; i < 2; ++i) {
      w[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w[i].dstSet = set;
      w[i].dstBinding = i;
      w[i].descriptorCount = 1;
      w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(ctx.device, 2, w, 0, nullptr);
    return set;
  }

  static void barrier(VkCommandBuffer cb) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
                         0, nullptr, 0, nullptr);
  }

  // A command buffer of n dispatches of `kind`, groups workgroups each.
  VkCommandBuffer record(Kind kind, uint32_t n, uint32_t groups) {
    VkCommandBuffer cb = ctx.begin();
    const uint32_t push = kind == Kind::Busy ? kBusyIters : 1;
    if (kind != Kind::Ggml) {
      const VkPipeline p = kind == Kind::Empty    ? empty
                           : kind == Kind::Atomic ? atomic
                           : kind == Kind::Busy   ? busy
                                                  : add1;
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, comp.layout, 0, 1, &aa, 0, nullptr);
      vkCmdPushConstants(cb, comp.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &push);
    }
    for (uint32_t k = 0; k < n; ++k) {
      if (kind == Kind::Ggml) {
        const uint32_t add = k + 1;
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k % 2 ? add3 : add1);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, comp.layout, 0, 1, k % 2 ? &ba : &ab, 0, nullptr);
        vkCmdPushConstants(cb, comp.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &add);
      }
      vkCmdDispatch(cb, groups, 1, 1);
      if (kind != Kind::Empty && kind != Kind::Atomic && k + 1 < n) barrier(cb);
    }
    BENCH_VK(vkEndCommandBuffer(cb));
    return cb;
  }

  uint32_t* A() { return static_cast<uint32_t*>(a.mapped); }
  uint32_t* B() { return static_cast<uint32_t*>(b.mapped); }

  // Sets the buffers up for `kind`, submits cb once and checks the result exactly; exits on
  // a wrong one.
  void check(Kind kind, VkCommandBuffer cb, uint32_t n, uint32_t groups) {
    const uint32_t used = groups * kLocal;
    for (uint32_t i = 0; i < elements; ++i) {
      A()[i] = kind == Kind::Atomic ? 0 : i * 7 + 1;
      B()[i] = 0xFFFFFFFFu;
    }
    std::vector<uint32_t> ra(A(), A() + elements), rb(B(), B() + elements);
    if (kind == Kind::Busy)  // (the element loop innermost, so that it vectorizes)
      for (uint32_t k = 0; k < n; ++k)
        for (uint32_t it = 0; it < kBusyIters; ++it)
          for (uint32_t i = 0; i < used; ++i) ra[i] = busy_hash(ra[i], it);
    for (uint32_t i = 0; i < used; ++i) {
      if (kind == Kind::Atomic) ra[i] = n;
      if (kind == Kind::Barrier) ra[i] += n;
      if (kind == Kind::Ggml)
        for (uint32_t k = 0; k < n; ++k) {
          if (k % 2 == 0) rb[i] = ra[i] * 1 + (k + 1);
          else ra[i] = rb[i] * 3 + (k + 1);
        }
    }
    ctx.submit_and_wait(cb);
    for (uint32_t i = 0; i < elements; ++i)
      if (A()[i] != ra[i] || B()[i] != rb[i]) {
        std::fprintf(stderr,
                     "bench_dispatch: WRONG RESULT: %s, %u dispatches of %u workgroups: element %u is (%u, %u), "
                     "expected (%u, %u)\n",
                     kKindNames[int(kind)], n, groups, i, A()[i], B()[i], ra[i], rb[i]);
        std::exit(1);
      }
  }
};

}  // namespace

int main(int argc, char** argv) {
  bench::report_crashes("bench_dispatch");
  const uint32_t n_big = argc > 1 ? uint32_t(std::atoi(argv[1])) : 1000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 11;
  const uint32_t groups = argc > 3 ? uint32_t(std::atoi(argv[3])) : 16;
  const int idle_ms = argc > 4 ? std::atoi(argv[4]) : 5;
  if (n_big == 0 || reps <= 0 || groups == 0 || groups > 65535 || idle_ms < 0) {
    std::fprintf(stderr, "usage: bench_dispatch [n>0] [reps>0] [groups in 1..65535] [idle-ms>=0]\n");
    return 2;
  }
  bool run_kind[kKinds];
  for (int k = 0; k < kKinds; ++k) {
    run_kind[k] = argc <= 5;
    for (int a = 5; a < argc; ++a) run_kind[k] |= std::strcmp(argv[a], kKindNames[k]) == 0;
  }
  bench::Context ctx;
  bench::print_device(ctx);
  Rig rig(ctx, groups);

  const uint32_t ns[2] = {std::min<uint32_t>(100, n_big), n_big};
  const uint32_t gs[2] = {1, groups};
  // us[kind][g][n]
  double us[kKinds][2][2] = {};
  double record_us = 0;  // recording the big ggml command buffer, per dispatch (with its binds)
  for (int k = 0; k < kKinds; ++k)
    for (int g = 0; g < 2; ++g)
      for (int i = 0; i < 2; ++i) {
        if (!run_kind[k]) continue;
        const Kind kind = Kind(k);
        const double t0 = bench::now_s();
        VkCommandBuffer cb = rig.record(kind, ns[i], gs[g]);
        if (kind == Kind::Ggml && g == 1 && i == 1) record_us = (bench::now_s() - t0) / ns[i] * 1e6;
        rig.check(kind, cb, ns[i], gs[g]);
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) t.push_back(ctx.submit_and_wait(cb));
        us[k][g][i] = bench::median(t) / ns[i] * 1e6;
        vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
      }

  // Latency of one tiny dispatch (the in-place add, checked like the rest).
  const int lat_reps = std::max(reps * 10, 50);
  double lat[2] = {}, lat_min[2] = {}, lat_idle = 0;
  for (int g = 0; g < 2 && argc <= 5; ++g) {
    VkCommandBuffer cb = rig.record(Kind::Barrier, 1, gs[g]);
    rig.check(Kind::Barrier, cb, 1, gs[g]);
    std::vector<double> t;
    for (int r = 0; r < lat_reps; ++r) t.push_back(ctx.submit_and_wait(cb));
    lat[g] = bench::median(t) * 1e6;
    lat_min[g] = bench::minimum(t) * 1e6;
    if (g == 1) {
      t.clear();
      for (int r = 0; r < std::max(reps, 20); ++r) {
        std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
        t.push_back(ctx.submit_and_wait(cb));
      }
      lat_idle = bench::median(t) * 1e6;
    }
    vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  }

  std::printf("us per dispatch, median of %d submissions of one command buffer, results match:\n", reps);
  std::printf("  %-9s", "kind");
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < 2; ++i) {
      char col[32];
      std::snprintf(col, sizeof(col), "%u x %u wg", ns[i], gs[g]);
      std::printf(" %13s", col);
    }
  std::printf("\n");
  for (int k = 0; k < kKinds; ++k) {
    if (!run_kind[k]) continue;
    std::printf("  %-9s", kKindNames[k]);
    for (int g = 0; g < 2; ++g)
      for (int i = 0; i < 2; ++i) std::printf(" %13.2f", us[k][g][i]);
    std::printf("\n");
  }
  if (run_kind[int(Kind::Ggml)])
    std::printf("recording the ggml command buffer of %u dispatches: %.2f us per dispatch (with its binds and "
                "barrier)\n", ns[1], record_us);
  if (argc <= 5)
    std::printf("one dispatch, vkQueueSubmit to fence, us: 1 workgroup median %.1f (min %.1f); %u workgroups median "
                "%.1f (min %.1f); %u workgroups after %d ms idle median %.1f\n",
                lat[0], lat_min[0], groups, lat[1], lat_min[1], groups, idle_ms, lat_idle);
  for (int k = 0; k < kKinds; ++k)
    for (int g = 0; g < 2 && run_kind[k]; ++g)
      for (int i = 0; i < 2; ++i)
        std::printf("dispatch_%s_g%u_n%u_us %.3f\n", kKindNames[k], gs[g], ns[i], us[k][g][i]);
  if (run_kind[int(Kind::Ggml)]) std::printf("dispatch_record_ggml_us %.3f\n", record_us);
  if (argc > 5) return 0;
  for (int g = 0; g < 2; ++g) std::printf("dispatch_latency_g%u_us %.2f\n", gs[g], lat[g]);
  std::printf("dispatch_latency_idle_g%u_us %.2f\n", groups, lat_idle);
  return 0;
}
