// The seam between tile_mma_kernel() (tile_mma_dispatch.cpp) and the per-instruction-set
// translation units (tile_mma_<arch>.cpp): each returns its kernel for a combination of
// kMmaCombos, or nullptr where it has none of its own (the dispatcher then falls back to
// the next simpler arch) or was not compiled into this build. Where `packed` is given, the
// arches with blocked kernels also fill in the split form of the kernel they return
// (tile_mma_packed()), or clear it when that kernel has none; the others leave it alone.
#pragma once

#include <cstdint>

#include "coopvk/kernels/tile_mma.h"
#include "tile_mma/tile_mma_combos.h"

namespace coopvk::kernels::detail {

// The shape a kernel is looked up for: arches may return a copy specialized for it.
struct TileShape {
  uint32_t m, n, k;
};

// The reference, per combination: KernelArch::Scalar. Never nullptr for a valid index.
TileMmaFn tile_mma_scalar(int combo);
// Plain loops and xsimd-free blocking at the compiler's baseline: every combination.
TileMmaFn tile_mma_portable(int combo);
// `features`: active_cpu_features(); the arch uses the extensions named there.
TileMmaFn tile_mma_avx2(int combo, uint32_t features, const TileShape& shape, TileMmaPacked* packed = nullptr);
TileMmaFn tile_mma_avx2_vnni(int combo, const TileShape& shape, TileMmaPacked* packed = nullptr);  // AVX-VNNI: 8-bit integers
TileMmaFn tile_mma_avx512(int combo, uint32_t features, const TileShape& shape, TileMmaPacked* packed = nullptr);
TileMmaFn tile_mma_avx512_vnni(int combo, const TileShape& shape, TileMmaPacked* packed = nullptr);  // AVX512-VNNI: 8-bit integers
TileMmaFn tile_mma_avx512_bf16(int combo, const TileShape& shape, TileMmaPacked* packed = nullptr);  // AVX512-BF16: bf16 inputs
TileMmaFn tile_mma_avx512_fp16(int combo, const TileShape& shape, TileMmaPacked* packed = nullptr);  // AVX512-FP16: f16 -> f16
// AMX-INT8: only a split form (8-bit integers into 32 bits, the fixed shapes), which fills
// *packed and returns true; the caller pairs it with another arch's whole kernel, which gives
// the same bits.
bool tile_mma_amx_int8(int combo, const TileShape& shape, TileMmaPacked* packed);

}  // namespace coopvk::kernels::detail
