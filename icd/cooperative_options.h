// What a device's enabled cooperative-matrix and cooperative-vector features let its
// pipelines compile: the capability table's entries (cooperative_caps.h) as the JIT's
// MatrixCombination and VectorCombination lists and limits, so the queries and the
// compiler can never disagree about what works.
#pragma once

#include "device.h"

#include "coopvk/jit/compiler.h"

namespace coopvk {

void add_cooperative_options(const Device& dev, jit::CompileOptions* opts);

}  // namespace coopvk
