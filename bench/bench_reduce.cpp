// 1-D sum reduction of n floats, two ways, on whatever driver VK_DRIVER_FILES selects:
//   shared     shaders/reduce_shared.comp: a barrier-separated tree in shared memory
//   subgroup   shaders/reduce_subgroup.comp: subgroupAdd, then shared memory across the
//              subgroups of the workgroup
// Each 256-invocation workgroup sums 4096 consecutive elements into one partial; the host
// adds the partials. The inputs are multiples of 1/4 in [-8, 8), so every partial sum of
// 4096 of them is exact in fp32 whatever the order of additions: the result is checked
// for exact equality with the host's sum before timing.
//
//   bench_reduce [n=16777216] [reps=10] [variant...]
//
// Traffic counted: 4 bytes per element read (the partials are 1/4096 of that). Prints
// GB/s (median of reps) and per variant a machine-readable `reduce_<variant>_gbps`.
#include <cmath>

#include "bench_vk.h"

namespace {

struct Variant {
  const char* name;
  bool subgroup;  // needs VK_SUBGROUP_FEATURE_ARITHMETIC_BIT
};
const Variant kVariants[] = {{"shared", false}, {"subgroup", true}};
constexpr uint32_t kPerWorkgroup = 256 * 16;

}  // namespace

int main(int argc, char** argv) {
  bench::report_crashes("bench_reduce");
  const uint32_t n = argc > 1 ? uint32_t(std::atoll(argv[1])) : (16u << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  std::vector<std::string> only(argv + std::min(argc, 3), argv + argc);
  if (n == 0 || reps <= 0) {
    std::fprintf(stderr, "usage: bench_reduce [n>0] [reps>0] [shared|subgroup...]\n");
    return 2;
  }
  bench::Context ctx;
  bench::print_device(ctx);
  VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &sg;
  vkGetPhysicalDeviceProperties2(ctx.physical, &p2);
  const bool have_arith = (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                          (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
  std::printf("subgroup size %u, arithmetic %s\n", sg.subgroupSize, have_arith ? "yes" : "no");

  const uint32_t groups = (n + kPerWorkgroup - 1) / kPerWorkgroup;
  const uint32_t gx = std::min<uint32_t>(groups, 4096), gy = (groups + gx - 1) / gx;
  bench::Buffer x = ctx.buffer(VkDeviceSize(n) * 4), partial = ctx.buffer(VkDeviceSize(gx) * gy * 4);
  auto* xf = static_cast<float*>(x.mapped);
  double expect = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t h = (i * 2654435761u) >> 26;  // 0..63, scattered
    xf[i] = float(int(h) - 32) * 0.25f;
    expect += xf[i];
  }

  int failures = 0;
  for (const Variant& v : kVariants) {
    if (!only.empty() && std::find(only.begin(), only.end(), v.name) == only.end()) continue;
    if (v.subgroup && !have_arith) {
      std::printf("reduce %s: skipped, the device has no subgroup arithmetic in compute\n", v.name);
      continue;
    }
    bench::Compute comp(ctx.device, 2, 4);
    comp.pipeline = comp.create(bench::load_spv(std::string("reduce_") + v.name));
    comp.bind({&x, &partial});
    VkCommandBuffer cb = comp.record(ctx, &n, 4, gx, gy);
    std::fill_n(static_cast<float*>(partial.mapped), size_t(gx) * gy, std::nanf(""));
    ctx.submit_and_wait(cb);
    double got = 0.0;
    for (size_t g = 0; g < size_t(gx) * gy; ++g) got += static_cast<const float*>(partial.mapped)[g];
    if (got != expect) {
      std::fprintf(stderr, "reduce_%s: WRONG RESULT: sum of %u floats is %.17g, expected exactly %.17g; not timed\n",
                   v.name, n, got, expect);
      ++failures;
      vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
      continue;
    }
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) times.push_back(ctx.submit_and_wait(cb));
    const double gbps = 4.0 * n / bench::median(times) * 1e-9;
    std::printf("reduce %-8s sum of %u floats = %.17g (exact): median %.2f ms, best %.2f ms over %d reps, %.2f GB/s\n",
                v.name, n, got, bench::median(times) * 1e3, bench::minimum(times) * 1e3, reps, gbps);
    std::printf("reduce_%s_gbps %.3f\n", v.name, gbps);
    vkFreeCommandBuffers(ctx.device, ctx.pool, 1, &cb);
  }
  ctx.destroy(x);
  ctx.destroy(partial);
  return failures ? 1 : 0;
}
