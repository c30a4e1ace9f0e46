// Small transposes (transpose.h): square blocks of SSE2 unpacks (baseline x86-64, so no
// dispatch; 8 x 8 for 1- and 2-byte elements, 4 x 4 and 2 x 2 for 4 and 8), the edges
// element by element. A lanes x components block of a subgroup's vectors is a few KiB: it
// stays in L1, and the unpacks replace one load and store per element.
#include "coopvk/kernels/transpose.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace coopvk::kernels {

namespace {

template <typename T>
void scalar_part(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds, uint32_t r0, uint32_t r1, uint32_t c0,
                 uint32_t c1) {
  for (uint32_t c = c0; c < c1; ++c) {
    uint8_t* d = dst + int64_t(c) * ds;
    for (uint32_t r = r0; r < r1; ++r) {
      T v;
      std::memcpy(&v, src + int64_t(r) * ss + int64_t(c) * int64_t(sizeof(T)), sizeof(T));
      std::memcpy(d + int64_t(r) * int64_t(sizeof(T)), &v, sizeof(T));
    }
  }
}

#if defined(__SSE2__)
// One block: rows r.. of src (kB elements each) become rows of dst.
template <size_t E>
struct Block;

template <>
struct Block<2> {
  static constexpr uint32_t kB = 8;
  static void run(const uint8_t* s, int64_t ss, uint8_t* d, int64_t ds) {
    __m128i r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k * ss));
    __m128i t[8], u[8];
    for (int k = 0; k < 4; ++k) {
      t[2 * k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
    }
    for (int h = 0; h < 2; ++h)
      for (int k = 0; k < 2; ++k) {
        u[4 * h + 2 * k] = _mm_unpacklo_epi32(t[4 * h + k], t[4 * h + k + 2]);
        u[4 * h + 2 * k + 1] = _mm_unpackhi_epi32(t[4 * h + k], t[4 * h + k + 2]);
      }
    // u[0..3]: columns (0,1), (2,3), (4,5), (6,7) of rows 0-3; u[4..7] of rows 4-7.
    for (int k = 0; k < 4; ++k) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k) * ds), _mm_unpacklo_epi64(u[k], u[k + 4]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k + 1) * ds), _mm_unpackhi_epi64(u[k], u[k + 4]));
    }
  }
};

template <>
struct Block<1> {
  static constexpr uint32_t kB = 8;
  static void run(const uint8_t* s, int64_t ss, uint8_t* d, int64_t ds) {
    __m128i r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + k * ss));
    __m128i t[4], u[4];
    for (int k = 0; k < 4; ++k) t[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);  // rows 2k, 2k+1 interleaved
    for (int h = 0; h < 2; ++h) {
      u[2 * h] = _mm_unpacklo_epi16(t[2 * h], t[2 * h + 1]);      // columns 0-3 of 4 rows
      u[2 * h + 1] = _mm_unpackhi_epi16(t[2 * h], t[2 * h + 1]);  // columns 4-7
    }
    for (int k = 0; k < 2; ++k) {
      const __m128i lo = _mm_unpacklo_epi32(u[k], u[k + 2]), hi = _mm_unpackhi_epi32(u[k], u[k + 2]);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (4 * k) * ds), lo);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (4 * k + 1) * ds), _mm_unpackhi_epi64(lo, lo));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (4 * k + 2) * ds), hi);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (4 * k + 3) * ds), _mm_unpackhi_epi64(hi, hi));
    }
  }
};

template <>
struct Block<4> {
  static constexpr uint32_t kB = 4;
  static void run(const uint8_t* s, int64_t ss, uint8_t* d, int64_t ds) {
    __m128i r[4];
    for (int k = 0; k < 4; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k * ss));
    const __m128i t0 = _mm_unpacklo_epi32(r[0], r[1]), t1 = _mm_unpackhi_epi32(r[0], r[1]);
    const __m128i t2 = _mm_unpacklo_epi32(r[2], r[3]), t3 = _mm_unpackhi_epi32(r[2], r[3]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(t0, t2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ds), _mm_unpackhi_epi64(t0, t2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * ds), _mm_unpacklo_epi64(t1, t3));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 3 * ds), _mm_unpackhi_epi64(t1, t3));
  }
};

template <>
struct Block<8> {
  static constexpr uint32_t kB = 2;
  static void run(const uint8_t* s, int64_t ss, uint8_t* d, int64_t ds) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + ss));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(a, b));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ds), _mm_unpackhi_epi64(a, b));
  }
};
#endif

template <typename T>
void transpose_t(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds, uint32_t rows, uint32_t cols) {
  uint32_t rb = 0, cb = 0;  // the extent covered by whole blocks
#if defined(__SSE2__)
  using Blk = Block<sizeof(T)>;
  constexpr uint32_t kB = Blk::kB;
  constexpr int64_t e = sizeof(T);
  rb = rows / kB * kB;
  cb = cols / kB * kB;
  for (uint32_t c0 = 0; c0 < cb; c0 += kB)
    for (uint32_t r0 = 0; r0 < rb; r0 += kB)
      Blk::run(src + int64_t(r0) * ss + int64_t(c0) * e, ss, dst + int64_t(c0) * ds + int64_t(r0) * e, ds);
#endif
  scalar_part<T>(src, ss, dst, ds, rb, rows, 0, cols);  // rows below the blocks
  scalar_part<T>(src, ss, dst, ds, 0, rb, cb, cols);    // columns right of them
}

}  // namespace

void transpose_elements(const void* src, int64_t src_stride, void* dst, int64_t dst_stride, uint32_t rows,
                        uint32_t cols, uint32_t esz) {
  auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  switch (esz) {
    case 1: transpose_t<uint8_t>(s, src_stride, d, dst_stride, rows, cols); break;
    case 2: transpose_t<uint16_t>(s, src_stride, d, dst_stride, rows, cols); break;
    case 4: transpose_t<uint32_t>(s, src_stride, d, dst_stride, rows, cols); break;
    case 8: transpose_t<uint64_t>(s, src_stride, d, dst_stride, rows, cols); break;
    default: break;  // no other element size exists (the JIT asks for these only)
  }
}

}  // namespace coopvk::kernels
