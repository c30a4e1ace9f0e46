// tile_mma_kernel(): finds the combination in the one list and asks the active arch for its
// kernel, falling back to the next simpler arch where an arch has none of its own. Called
// when the JIT compiles a pipeline, never per multiply-add.
#include "coopvk/kernels/cpu_dispatch.h"
#include "tile_mma_arch.h"

namespace coopvk::kernels {

TileMmaFn tile_mma_kernel(const TileMmaDesc& desc) {
  const int i = detail::combo_index({desc.a, desc.b, desc.c, desc.d, desc.saturate});
  if (i < 0) return nullptr;
  const uint32_t features = active_cpu_features();
  const detail::TileShape shape{desc.m, desc.n, desc.k};
  TileMmaFn fn = nullptr;
  switch (active_kernel_arch()) {
    case KernelArch::Avx512:
      if ((fn = detail::tile_mma_avx512(i, features, shape))) return fn;
      [[fallthrough]];
    case KernelArch::Avx2:
      if ((fn = detail::tile_mma_avx2(i, features, shape))) return fn;
      [[fallthrough]];
    case KernelArch::Portable:
      if ((fn = detail::tile_mma_portable(i))) return fn;
      [[fallthrough]];
    case KernelArch::Scalar: break;
  }
  return detail::tile_mma_scalar(i);
}

}  // namespace coopvk::kernels
