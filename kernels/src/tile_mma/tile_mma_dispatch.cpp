// tile_mma_kernel() and tile_mma_packed(): find the combination in the one list and ask the
// active arch for its kernel, falling back to the next simpler arch where an arch has none
// of its own. Called when the JIT compiles a pipeline, never per multiply-add.
#include "coopvk/kernels/cpu_dispatch.h"
#include "tile_mma/tile_mma_arch.h"

namespace coopvk::kernels {

namespace {

// The kernel, and in *packed (when given) its split form from the same arch: whichever arch
// answers fills it, so the parts always belong to the kernel returned.
TileMmaFn find_kernel(const TileMmaDesc& desc, TileMmaPacked* packed) {
  if (packed) *packed = {};
  const int i = detail::combo_index({desc.a, desc.b, desc.c, desc.d, desc.saturate});
  if (i < 0) return nullptr;
  const uint32_t features = active_cpu_features();
  const detail::TileShape shape{desc.m, desc.n, desc.k};
  TileMmaFn fn = nullptr;
  switch (active_kernel_arch()) {
    case KernelArch::Avx512:
      if ((fn = detail::tile_mma_avx512(i, features, shape, packed))) return fn;
      [[fallthrough]];
    case KernelArch::Avx2:
      if ((fn = detail::tile_mma_avx2(i, features, shape, packed))) return fn;
      [[fallthrough]];
    case KernelArch::Portable:
      if ((fn = detail::tile_mma_portable(i))) return fn;
      [[fallthrough]];
    case KernelArch::Scalar: break;
  }
  return detail::tile_mma_scalar(i);
}

}  // namespace

TileMmaFn tile_mma_kernel(const TileMmaDesc& desc) { return find_kernel(desc, nullptr); }

bool tile_mma_packed(const TileMmaDesc& desc, TileMmaPacked* out) {
  if (!out) return false;
  find_kernel(desc, out);
  return out->mma != nullptr;
}

}  // namespace coopvk::kernels
