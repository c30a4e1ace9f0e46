#include "tile_mma_arch.h"
namespace coopvk::kernels::detail {
TileMmaFn tile_mma_avx512(int, uint32_t, const TileShape&) { return nullptr; }
}
