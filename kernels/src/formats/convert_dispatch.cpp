// convert(): plans a conversion as "source -> f32 bits -> destination" through the active
// arch's bulk kernels wherever that route rounds exactly once, and falls back to the
// scalar reference element by element where it would not (or for 64-bit formats).
#include <cstring>

#include "formats/convert_arch.h"
#include "coopvk/kernels/cpu_dispatch.h"
#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels {
namespace {

bool valid(NumberFormat f) { return format_size(f) != 0; }

// Formats whose every value is an f32: going through f32 adds no rounding.
bool exact_in_f32(NumberFormat f) {
  switch (f) {
    case NumberFormat::F32:
    case NumberFormat::F16:
    case NumberFormat::BF16:
    case NumberFormat::E4M3:
    case NumberFormat::E5M2:
    case NumberFormat::I8:
    case NumberFormat::U8:
    case NumberFormat::I16:
    case NumberFormat::U16: return true;
    default: return false;
  }
}

// I32 rounds when it becomes f32 (|x| > 2^24). That single rounding is the final answer
// for an F32 destination, and harmless for F16/E4M3/E5M2: every integer they can hold is
// below 2^24 and so exact in f32, and every larger one overflows them whether rounded
// first or not (their overflow thresholds are floats, and rounding is monotonic). BF16
// keeps 8 bits at any magnitude, so a second rounding there could differ: scalar.
bool via_f32(NumberFormat sf, NumberFormat df) {
  if (df == NumberFormat::F64) return false;
  if (exact_in_f32(sf)) return true;
  if (sf == NumberFormat::I32)
    return df == NumberFormat::F32 || df == NumberFormat::F16 || df == NumberFormat::E4M3 ||
           df == NumberFormat::E5M2;
  return false;
}

uint64_t load_bits(const uint8_t* p, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);  // little-endian host: the low bytes are the element
  return v;
}

void scalar_loop(NumberFormat sf, const uint8_t* src, NumberFormat df, uint8_t* dst, size_t n,
                 Overflow o) {
  const size_t ss = format_size(sf), ds = format_size(df);
  for (size_t i = 0; i < n; ++i) {
    uint64_t out = 0;
    convert_scalar(sf, load_bits(src + i * ss, ss), df, &out, o);
    std::memcpy(dst + i * ds, &out, ds);
  }
}

const detail::ConvertKernels* kernels_for(KernelArch a) {
  switch (a) {
    case KernelArch::Portable: return detail::convert_kernels_portable();
    case KernelArch::Avx2: return detail::convert_kernels_avx2();
    case KernelArch::Avx512: return detail::convert_kernels_avx512();
    default: return nullptr;
  }
}

}  // namespace

bool convert(NumberFormat sf, const void* src, NumberFormat df, void* dst, size_t n, Overflow o) {
  if (!valid(sf) || !valid(df)) return false;
  if (n == 0) return true;
  if (sf == df && !format_is_float(sf)) {  // an integer into its own format: the same bits
    std::memcpy(dst, src, n * format_size(sf));
    return true;
  }
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  const detail::ConvertKernels* k = kernels_for(active_kernel_arch());
  if (k == nullptr || !via_f32(sf, df)) {
    scalar_loop(sf, in, df, out, n, o);
    return true;
  }
  // A chunk small enough to stay in L1 between the two halves.
  constexpr size_t kChunk = 1024;
  alignas(64) uint32_t mid[kChunk];
  const size_t ss = format_size(sf), ds = format_size(df);
  for (size_t i = 0; i < n; i += kChunk) {
    const size_t m = n - i < kChunk ? n - i : kChunk;
    const uint32_t* bits = mid;
    if (sf == NumberFormat::F32 && df != NumberFormat::F32) {
      bits = reinterpret_cast<const uint32_t*>(in + i * ss);  // already f32; quieting is done on encode
    } else {
      k->to_f32(sf, in + i * ss, mid, m);
    }
    if (!k->from_f32(df, bits, out + i * ds, m, o)) {
      // Destinations without a vector encoder (U32, I64, U64): the f32 value is the exact
      // source value here, so the reference conversion from it is the same answer.
      for (size_t j = 0; j < m; ++j) {
        uint64_t v = 0;
        convert_scalar(NumberFormat::F32, bits[j], df, &v, o);
        std::memcpy(out + (i + j) * ds, &v, ds);
      }
    }
  }
  return true;
}

}  // namespace coopvk::kernels
