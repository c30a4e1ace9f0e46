#include "tile_mma_arch.h"
namespace coopvk::kernels::detail {
TileMmaFn tile_mma_avx512_fp16(int, const TileShape&) { return nullptr; }
}
