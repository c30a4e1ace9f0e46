// Helpers shared by the cooperative-vector layout files (kernels/src only).
#pragma once

#include <cstddef>

#include "coopvk/kernels/coopvec_layout.h"

namespace coopvk::kernels {

inline size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

bool layout_is_optimal(MatrixLayout l);

}  // namespace coopvk::kernels
