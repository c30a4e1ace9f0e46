// KernelArch::Scalar: the reference itself behind a kernel pointer per combination, so that
// the element-by-element semantics can be run in place of every faster path.
#include <array>
#include <utility>

#include "tile_mma/tile_mma_arch.h"

namespace coopvk::kernels::detail {
namespace {

template <size_t I>
void reference_entry(const void* a, const void* b, const void* c, void* d, uint32_t m, uint32_t n,
                     uint32_t k) {
  constexpr MmaCombo t = kMmaCombos[I];
  tile_mma_reference({t.a, t.b, t.c, t.d, m, n, k, t.saturate}, a, b, c, d);
}

template <size_t... I>
constexpr std::array<TileMmaFn, sizeof...(I)> reference_table(std::index_sequence<I...>) {
  return {&reference_entry<I>...};
}

}  // namespace

TileMmaFn tile_mma_scalar(int combo) {
  static constexpr auto table = reference_table(std::make_index_sequence<kMmaCombos.size()>());
  return table[combo];
}

}  // namespace coopvk::kernels::detail
