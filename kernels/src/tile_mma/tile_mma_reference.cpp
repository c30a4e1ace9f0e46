// The scalar reference of tile multiply-add: tile_mma.h's rules written out element by
// element, with no blocking and no vectors, so that it can be read against the header.
#include <cmath>
#include <cstring>

#include "coopvk/kernels/tile_mma.h"
#include "tile_mma/tile_mma_combos.h"

namespace coopvk::kernels {
namespace {

using detail::int_bits;
using detail::is_int_format;
using detail::is_signed_int;
using i128 = __int128;

uint64_t load_bits(NumberFormat f, const void* base, size_t i) {
  const size_t size = format_size(f);
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + i * size, size);  // little-endian
  return v;
}

void store_bits(NumberFormat f, void* base, size_t i, uint64_t v) {
  const size_t size = format_size(f);
  std::memcpy(static_cast<uint8_t*>(base) + i * size, &v, size);
}

// An integer element extended per its format's signedness.
i128 load_int(NumberFormat f, const void* base, size_t i) {
  const unsigned w = int_bits(f);
  const uint64_t v = load_bits(f, base, i);
  if (!is_signed_int(f) || w == 64) return is_signed_int(f) ? i128(int64_t(v)) : i128(v);
  return i128(int64_t(v << (64 - w)) >> (64 - w));
}

// A float element widened exactly to double (f32's and f64's values are all doubles).
double load_float(NumberFormat f, const void* base, size_t i) {
  const uint64_t v = load_bits(f, base, i);
  if (f == NumberFormat::F64) {
    double x;
    std::memcpy(&x, &v, 8);
    return x;
  }
  uint64_t f32 = 0;
  convert_scalar(f, v, NumberFormat::F32, &f32);  // exact for every narrower float
  float x;
  const uint32_t b = uint32_t(f32);
  std::memcpy(&x, &b, 4);
  return x;
}

void float_mma(const TileMmaDesc& t, const void* a, const void* b, const void* c, void* d) {
  for (uint32_t i = 0; i < t.m; ++i)
    for (uint32_t j = 0; j < t.n; ++j) {
      const size_t ij = size_t(i) * t.n + j;
      uint64_t out = 0;
      if (t.d == NumberFormat::F64) {
        double acc = load_float(t.c, c, ij);
        for (uint32_t kk = 0; kk < t.k; ++kk)
          acc = std::fma(load_float(t.a, a, size_t(i) * t.k + kk),
                         load_float(t.b, b, size_t(kk) * t.n + j), acc);
        std::memcpy(&out, &acc, 8);
      } else {
        float acc = float(load_float(t.c, c, ij));
        for (uint32_t kk = 0; kk < t.k; ++kk)
          acc = std::fma(float(load_float(t.a, a, size_t(i) * t.k + kk)),
                         float(load_float(t.b, b, size_t(kk) * t.n + j)), acc);
        uint32_t bits;
        std::memcpy(&bits, &acc, 4);
        convert_scalar(NumberFormat::F32, bits, t.d, &out);  // the one rounding
      }
      store_bits(t.d, d, ij, out);
    }
}

void int_mma(const TileMmaDesc& t, const void* a, const void* b, const void* c, void* d) {
  const unsigned w = int_bits(t.d);
  // |products| < 2^64 and k < 2^32: the sum is exact in 128 bits.
  const i128 hi = is_signed_int(t.d) ? (i128(1) << (w - 1)) - 1 : (i128(1) << w) - 1;
  const i128 lo = is_signed_int(t.d) ? -(i128(1) << (w - 1)) : 0;
  for (uint32_t i = 0; i < t.m; ++i)
    for (uint32_t j = 0; j < t.n; ++j) {
      const size_t ij = size_t(i) * t.n + j;
      i128 sum = 0;
      for (uint32_t kk = 0; kk < t.k; ++kk)
        sum += load_int(t.a, a, size_t(i) * t.k + kk) * load_int(t.b, b, size_t(kk) * t.n + j);
      i128 r = load_int(t.c, c, ij) + sum;
      if (t.saturate) r = r < lo ? lo : r > hi ? hi : r;
      store_bits(t.d, d, ij, uint64_t(r));  // the low w bits: wrap modulo 2^w
    }
}

}  // namespace

bool tile_mma_supported(const TileMmaDesc& desc) {
  return detail::combo_index({desc.a, desc.b, desc.c, desc.d, desc.saturate}) >= 0;
}

bool tile_mma_reference(const TileMmaDesc& desc, const void* a, const void* b, const void* c,
                        void* d) {
  if (!tile_mma_supported(desc)) return false;
  // Every element of C is read before D[i][j] is written only for the same (i, j), so
  // D == C works here as in the kernels.
  if (is_int_format(desc.d))
    int_mma(desc, a, b, c, d);
  else
    float_mma(desc, a, b, c, d);
  return true;
}

}  // namespace coopvk::kernels
