// Bulk conversions to and from f32 bit patterns, written once against xsimd and compiled
// once per instruction set (convert_<arch>.cpp includes this with its own flags).
//
// Everything is integer bit manipulation except where the float unit is exact whatever the
// MXCSR says (small integers to float, a power-of-two scale of a small integer): the JIT
// may run shaders with FTZ/DAZ set, and a conversion must not flush denormals because of it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "formats/convert_arch.h"

namespace coopvk::kernels::detail::simd {

template <class A>
struct Kernels {
  using u32 = xsimd::batch<uint32_t, A>;
  using i32 = xsimd::batch<int32_t, A>;
  using f32 = xsimd::batch<float, A>;
  static constexpr size_t W = u32::size;

  // ---- decoding: narrow float formats to f32 bits (exact) ----

  template <int EB, int MB, int BIAS, bool HAS_INF>
  static u32 decode_float(u32 c) {
    constexpr uint32_t mag_mask = (1u << (EB + MB)) - 1;
    constexpr uint32_t mmask = (1u << MB) - 1;
    constexpr uint32_t exp_field = ((1u << EB) - 1) << MB;
    const u32 sign = (c >> (EB + MB)) << 31;
    const u32 m = c & u32(mag_mask);
    u32 r = (m << (23 - MB)) + u32(uint32_t(127 - BIAS) << 23);
    if constexpr (BIAS != 127) {
      // A denormal of a narrower exponent range is a normal f32: scale the integer
      // significand by the denormal quantum. Both steps are exact, so the MXCSR is moot.
      const f32 scale(std::ldexp(1.0f, 1 - BIAS - MB));
      const u32 denorm = xsimd::bitwise_cast<uint32_t>(
          xsimd::batch_cast<float>(xsimd::bitwise_cast<int32_t>(m)) * scale);
      r = xsimd::select((m & u32(exp_field)) == u32(0), denorm, r);
    } else {
      // Same exponent range as f32 (bf16): the shifted pattern is already right, denormals
      // included; only exponent zero must not get the bias added (it added 0 here).
    }
    if constexpr (HAS_INF) {
      const u32 mant = m & u32(mmask);
      const u32 special = u32(0x7f800000u) | (mant << (23 - MB)) |
                          xsimd::select(mant != u32(0), u32(0x00400000u), u32(0));
      r = xsimd::select((m & u32(exp_field)) == u32(exp_field), special, r);
    } else {
      r = xsimd::select(m == u32(mag_mask), u32(0x7fc00000u | (mmask << (23 - MB))), r);
    }
    return r | sign;
  }

  // ---- encoding: f32 bits to narrow float formats (round to nearest even) ----

  template <int EB, int MB, int BIAS, bool HAS_INF>
  static u32 encode_float(u32 u, bool saturate) {
    constexpr int S = 23 - MB;  // f32 significand bits dropped
    constexpr uint32_t mag_mask = (1u << (EB + MB)) - 1;
    constexpr uint32_t mmask = (1u << MB) - 1;
    constexpr uint32_t exp_field = ((1u << EB) - 1) << MB;
    constexpr uint32_t min_normal = uint32_t(128 - BIAS) << 23;  // 2^(1-BIAS) as f32 bits
    constexpr uint32_t max_code = HAS_INF ? exp_field - 1 : mag_mask - 1;
    constexpr uint32_t overflow_code = HAS_INF ? exp_field : mag_mask;
    const u32 a = u & u32(0x7fffffffu);
    const u32 sign = (u >> 31) << (EB + MB);
    // Normal range: rebias, then add just under half an ulp plus the kept lsb, so that a
    // tie rounds up exactly when the kept part is odd. A carry moves into the exponent.
    const u32 rounding = u32((1u << (S - 1)) - 1) + ((a >> S) & u32(1));
    u32 r = (a - u32(uint32_t(127 - BIAS) << 23) + rounding) >> S;
    if constexpr (BIAS != 127) {
      // Below the destination's normal range: shift the full significand by a per-lane
      // amount and round by comparing the dropped bits with one half.
      const u32 e = a >> 23;
      const u32 mant = (a & u32(0x7fffffu)) | xsimd::select(e != u32(0), u32(0x800000u), u32(0));
      const u32 sh = xsimd::min(u32(uint32_t(151 - BIAS - MB)) - xsimd::max(e, u32(1)), u32(31));
      const u32 q = mant >> sh;
      const u32 rem = mant & ((u32(1) << sh) - u32(1));
      // sh is 0 for lanes already in the normal range (discarded below); clamp so the
      // shift count stays defined there too. With sh = 0, rem is 0 and never rounds up.
      const u32 half = u32(1) << (xsimd::max(sh, u32(1)) - u32(1));
      const auto up = (rem > half) | ((rem == half) & ((q & u32(1)) != u32(0)));
      const u32 denorm = q + xsimd::select(up, u32(1), u32(0));
      r = xsimd::select(a < u32(min_normal), denorm, r);
    }
    r = xsimd::select(r > u32(max_code), u32(saturate ? max_code : overflow_code), r);
    u32 nan_code;
    if constexpr (HAS_INF)
      nan_code = u32(exp_field | (1u << (MB - 1))) | ((a >> S) & u32(mmask));
    else
      nan_code = u32(mag_mask);
    r = xsimd::select(a > u32(0x7f800000u), nan_code, r);
    return r | sign;
  }

  static u32 encode_f32(u32 u, bool saturate) {
    const u32 a = u & u32(0x7fffffffu);
    u32 r = u;
    if (saturate) r = xsimd::select(a == u32(0x7f800000u), (u & u32(0x80000000u)) | u32(0x7f7fffffu), r);
    return xsimd::select(a > u32(0x7f800000u), u | u32(0x00400000u), r);
  }

  // f32 to integer: round half to even, clamp to [lo, hi], NaN to 0; where the top of the
  // range is not a float (I32), x >= `above` gives `above_value` instead.
  static i32 encode_int(u32 u, float lo, float hi, float above, int32_t above_value) {
    const f32 x = xsimd::bitwise_cast<float>(u);
    // Clamping first is harmless (the bounds are integers) and keeps the truncating
    // conversion below inside int32 range.
    const f32 c = xsimd::min(xsimd::max(x, f32(lo)), f32(hi));
    const i32 t = xsimd::batch_cast<int32_t>(c);  // toward zero, independent of MXCSR
    const f32 frac = xsimd::abs(c - xsimd::batch_cast<float>(t));  // exact
    const auto up = (frac > f32(0.5f)) |
                    ((frac == f32(0.5f)) & xsimd::batch_bool_cast<float>((t & i32(1)) != i32(0)));
    const i32 step = xsimd::select(xsimd::batch_bool_cast<int32_t>(up),
                                   xsimd::select(xsimd::batch_bool_cast<int32_t>(c < f32(0.0f)),
                                                 i32(-1), i32(1)),
                                   i32(0));
    i32 r = t + step;
    if (above > hi)
      r = xsimd::select(xsimd::batch_bool_cast<int32_t>(x >= f32(above)), i32(above_value), r);
    return xsimd::select(xsimd::batch_bool_cast<int32_t>(x != x), i32(0), r);
  }

  // ---- bulk drivers ----

  // Runs `body(i)` over whole batches, then once more on a zero-padded copy of the tail
  // so that short and ragged lengths take the same vector code as long ones.
  template <class Src, class Dst, class F>
  static void run(const Src* src, Dst* dst, size_t n, F body) {
    size_t i = 0;
    for (; i + W <= n; i += W) body(src + i, dst + i);
    if (i < n) {
      alignas(64) Src in[W] = {};
      alignas(64) Dst out[W] = {};
      std::memcpy(in, src + i, (n - i) * sizeof(Src));
      body(in, out);
      std::memcpy(dst + i, out, (n - i) * sizeof(Dst));
    }
  }

  template <int EB, int MB, int BIAS, bool HAS_INF, class T>
  static void decode_loop(const T* src, uint32_t* dst, size_t n) {
    run(src, dst, n, [](const T* s, uint32_t* d) {
      decode_float<EB, MB, BIAS, HAS_INF>(u32::load_unaligned(s)).store_unaligned(d);
    });
  }

  template <int EB, int MB, int BIAS, bool HAS_INF, class T>
  static void encode_loop(const uint32_t* src, T* dst, size_t n, bool sat) {
    run(src, dst, n, [sat](const uint32_t* s, T* d) {
      encode_float<EB, MB, BIAS, HAS_INF>(u32::load_unaligned(s), sat).store_unaligned(d);
    });
  }

  template <class T>
  static void int_to_f32(const T* src, uint32_t* dst, size_t n) {
    // Integers up to 32 bits convert with the CPU's rounding mode, nearest-even unless a
    // caller changed it; only I32 can round at all (|x| > 2^24).
    run(src, dst, n, [](const T* s, uint32_t* d) {
      xsimd::bitwise_cast<uint32_t>(xsimd::batch_cast<float>(i32::load_unaligned(s))).store_unaligned(d);
    });
  }

  template <class T>
  static void f32_to_int(const uint32_t* src, T* dst, size_t n, float lo, float hi,
                         float above = 0.f, int32_t above_value = 0) {
    run(src, dst, n, [=](const uint32_t* s, T* d) {
      encode_int(u32::load_unaligned(s), lo, hi, above, above_value).store_unaligned(d);
    });
  }

  static bool to_f32(NumberFormat sf, const void* src, uint32_t* dst, size_t n) {
    switch (sf) {
      case NumberFormat::F32:
        run(static_cast<const uint32_t*>(src), dst, n, [](const uint32_t* s, uint32_t* d) {
          encode_f32(u32::load_unaligned(s), false).store_unaligned(d);
        });
        return true;
      case NumberFormat::F16:
        if (native_f16_to_f32(static_cast<const uint16_t*>(src), dst, n)) return true;
        decode_loop<5, 10, 15, true>(static_cast<const uint16_t*>(src), dst, n);
        return true;
      case NumberFormat::BF16: decode_loop<8, 7, 127, true>(static_cast<const uint16_t*>(src), dst, n); return true;
      case NumberFormat::E4M3: decode_loop<4, 3, 7, false>(static_cast<const uint8_t*>(src), dst, n); return true;
      case NumberFormat::E5M2: decode_loop<5, 2, 15, true>(static_cast<const uint8_t*>(src), dst, n); return true;
      case NumberFormat::I8: int_to_f32(static_cast<const int8_t*>(src), dst, n); return true;
      case NumberFormat::U8: int_to_f32(static_cast<const uint8_t*>(src), dst, n); return true;
      case NumberFormat::I16: int_to_f32(static_cast<const int16_t*>(src), dst, n); return true;
      case NumberFormat::U16: int_to_f32(static_cast<const uint16_t*>(src), dst, n); return true;
      case NumberFormat::I32: int_to_f32(static_cast<const int32_t*>(src), dst, n); return true;
      default: return false;
    }
  }

  static bool from_f32(NumberFormat df, const uint32_t* src, void* dst, size_t n, Overflow o) {
    const bool sat = o == Overflow::Saturate;
    switch (df) {
      case NumberFormat::F32:
        run(src, static_cast<uint32_t*>(dst), n, [sat](const uint32_t* s, uint32_t* d) {
          encode_f32(u32::load_unaligned(s), sat).store_unaligned(d);
        });
        return true;
      case NumberFormat::F16:
        if (!sat && native_f32_to_f16(src, static_cast<uint16_t*>(dst), n)) return true;
        encode_loop<5, 10, 15, true>(src, static_cast<uint16_t*>(dst), n, sat);
        return true;
      case NumberFormat::BF16:
        if (!sat && native_f32_to_bf16(src, static_cast<uint16_t*>(dst), n)) return true;
        encode_loop<8, 7, 127, true>(src, static_cast<uint16_t*>(dst), n, sat);
        return true;
      case NumberFormat::E4M3: encode_loop<4, 3, 7, false>(src, static_cast<uint8_t*>(dst), n, sat); return true;
      case NumberFormat::E5M2: encode_loop<5, 2, 15, true>(src, static_cast<uint8_t*>(dst), n, sat); return true;
      case NumberFormat::I8: f32_to_int(src, static_cast<int8_t*>(dst), n, -128.f, 127.f); return true;
      case NumberFormat::U8: f32_to_int(src, static_cast<uint8_t*>(dst), n, 0.f, 255.f); return true;
      case NumberFormat::I16: f32_to_int(src, static_cast<int16_t*>(dst), n, -32768.f, 32767.f); return true;
      case NumberFormat::U16: f32_to_int(src, static_cast<uint16_t*>(dst), n, 0.f, 65535.f); return true;
      case NumberFormat::I32:
        // 2^31 - 1 is not a float: clamp to the float below 2^31, and send x >= 2^31 to
        // INT32_MAX separately.
        f32_to_int(src, static_cast<int32_t*>(dst), n, -2147483648.f, 2147483520.f, 2147483648.f,
                   INT32_MAX);
        return true;
      default: return false;
    }
  }

  // Hooks for conversions the instruction set does natively; the arch's .cpp defines them
  // (returning false where it has none). They must give the same bits as the code above.
  static bool native_f16_to_f32(const uint16_t* src, uint32_t* dst, size_t n);
  static bool native_f32_to_f16(const uint32_t* src, uint16_t* dst, size_t n);
  static bool native_f32_to_bf16(const uint32_t* src, uint16_t* dst, size_t n);

  static const ConvertKernels* table() {
    static const ConvertKernels k{&to_f32, &from_f32};
    return &k;
  }
};

}  // namespace coopvk::kernels::detail::simd
