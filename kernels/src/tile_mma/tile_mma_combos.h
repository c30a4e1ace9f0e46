// The one list of supported tile multiply-add combinations (formats and saturate), and the
// integer format facts the kernels need. tile_mma_supported(), the reference, and each
// arch's kernel table are all driven by this list, so they cannot disagree.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels::detail {

struct MmaCombo {
  NumberFormat a, b, c, d;
  bool saturate;
  constexpr bool operator==(const MmaCombo&) const = default;
};

constexpr size_t fmt_size(NumberFormat f) {
  switch (f) {
    case NumberFormat::F64: case NumberFormat::I64: case NumberFormat::U64: return 8;
    case NumberFormat::F32: case NumberFormat::I32: case NumberFormat::U32: return 4;
    case NumberFormat::F16: case NumberFormat::BF16: case NumberFormat::I16: case NumberFormat::U16: return 2;
    default: return 1;
  }
}
constexpr bool is_int_format(NumberFormat f) { return f >= NumberFormat::I8; }
constexpr bool is_signed_int(NumberFormat f) {
  return f == NumberFormat::I8 || f == NumberFormat::I16 || f == NumberFormat::I32 ||
         f == NumberFormat::I64;
}
constexpr unsigned int_bits(NumberFormat f) {
  switch (f) {
    case NumberFormat::I8: case NumberFormat::U8: return 8;
    case NumberFormat::I16: case NumberFormat::U16: return 16;
    case NumberFormat::I32: case NumberFormat::U32: return 32;
    case NumberFormat::I64: case NumberFormat::U64: return 64;
    default: return 0;
  }
}
// The signed and unsigned format of a width.
constexpr NumberFormat int_format(unsigned bits, bool is_signed) {
  switch (bits) {
    case 8: return is_signed ? NumberFormat::I8 : NumberFormat::U8;
    case 16: return is_signed ? NumberFormat::I16 : NumberFormat::U16;
    case 32: return is_signed ? NumberFormat::I32 : NumberFormat::U32;
    default: return is_signed ? NumberFormat::I64 : NumberFormat::U64;
  }
}

namespace combos_impl {
using NF = NumberFormat;
constexpr MmaCombo kFloat[] = {
    {NF::F16, NF::F16, NF::F32, NF::F32, false},   {NF::F16, NF::F16, NF::F16, NF::F16, false},
    {NF::BF16, NF::BF16, NF::F32, NF::F32, false}, {NF::BF16, NF::BF16, NF::BF16, NF::BF16, false},
    {NF::E4M3, NF::E4M3, NF::F32, NF::F32, false}, {NF::E4M3, NF::E5M2, NF::F32, NF::F32, false},
    {NF::E5M2, NF::E4M3, NF::F32, NF::F32, false}, {NF::E5M2, NF::E5M2, NF::F32, NF::F32, false},
    {NF::E4M3, NF::E4M3, NF::F16, NF::F16, false}, {NF::E4M3, NF::E5M2, NF::F16, NF::F16, false},
    {NF::E5M2, NF::E4M3, NF::F16, NF::F16, false}, {NF::E5M2, NF::E5M2, NF::F16, NF::F16, false},
    {NF::F32, NF::F32, NF::F32, NF::F32, false},   {NF::F64, NF::F64, NF::F64, NF::F64, false},
    // float8 accumulators (the Vulkan CTS's floate4m3_floate4m3 / floate5m2_floate5m2):
    // accumulated in f32 like the rest, rounded once to D's format.
    {NF::E4M3, NF::E4M3, NF::E4M3, NF::E4M3, false}, {NF::E5M2, NF::E5M2, NF::E5M2, NF::E5M2, false},
};
// (input width, result width): every signedness of a, b, c and d, with and without saturate.
constexpr unsigned kIntWidths[][2] = {{8, 32}, {8, 8}, {16, 32}, {16, 16}, {32, 32}};
constexpr size_t kCount = std::size(kFloat) + std::size(kIntWidths) * 32;

constexpr std::array<MmaCombo, kCount> make() {
  std::array<MmaCombo, kCount> out{};
  size_t i = 0;
  for (const MmaCombo& f : kFloat) out[i++] = f;
  for (const auto& w : kIntWidths)
    for (unsigned bits = 0; bits < 32; ++bits)
      out[i++] = {int_format(w[0], bits & 1), int_format(w[0], bits & 2),
                  int_format(w[1], bits & 4), int_format(w[1], bits & 8), (bits & 16) != 0};
  return out;
}
}  // namespace combos_impl

inline constexpr std::array<MmaCombo, combos_impl::kCount> kMmaCombos = combos_impl::make();

// The combinations the JIT uses most (tile_mma.h): arches give them copies fixed to the
// hot shapes as well.
constexpr bool is_hot(const MmaCombo& t) {
  using NF = NumberFormat;
  if (t.saturate || t.c != t.d) return false;
  if (int_bits(t.a) == 8)  // a signed result exactly when an input is signed
    return int_bits(t.d) == 32 && is_signed_int(t.d) == (is_signed_int(t.a) || is_signed_int(t.b));
  return (t.a == NF::F16 && t.b == NF::F16) || (t.a == NF::BF16 && t.b == NF::BF16 && t.d == NF::F32) ||
         (t.a == NF::E4M3 && t.b == NF::E4M3 && t.d == NF::F32) || t.a == NF::F32;
}

// Index of the combination in kMmaCombos, or -1.
constexpr int combo_index(const MmaCombo& c) {
  for (size_t i = 0; i < kMmaCombos.size(); ++i)
    if (kMmaCombos[i] == c) return int(i);
  return -1;
}

}  // namespace coopvk::kernels::detail
