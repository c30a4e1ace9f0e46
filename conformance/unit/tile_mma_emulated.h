// The AVX-512 kernel families (512-bit widths, VNNI's sign fix-ups, BF16's pairs) built on
// AVX2 with their wide or missing instructions emulated exactly, so that the code they share
// with the real AVX-512 units - blocking, packing, corrections, width choice - runs on any
// AVX2 machine (tile_mma_emulated.cpp).
#pragma once

#include <vector>

#include "coopvk/kernels/tile_mma.h"

struct EmulatedPath {
  const char* name;
  // The kernel for the descriptor (its shape picks a fixed copy as tile_mma_kernel does),
  // or nullptr where the family has none for the combination.
  coopvk::kernels::TileMmaFn (*kernel)(const coopvk::kernels::TileMmaDesc&);
  // That kernel's split form (tile_mma_packed()); false where it has none.
  bool (*packed)(const coopvk::kernels::TileMmaDesc&, coopvk::kernels::TileMmaPacked*);
};

// Empty when this CPU has no AVX2 (the emulations are AVX2 code).
std::vector<EmulatedPath> emulated_paths();
