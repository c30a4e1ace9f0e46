// Cooperative-matrix tile multiply-add, D = A x B + C, the work of OpCooperativeMatrixMulAddKHR
// (SPV_KHR_cooperative_matrix, 3.42.13 "Arithmetic Instructions") on one tile.
//
// Tiles are dense and row-major: A is m x k (row stride k elements), B is k x n (stride n),
// C and D are m x n (stride n), no padding, no alignment required. D may be exactly C (in
// place, the usual case inside a K loop); it must not overlap A, B, or C partially.
//
// Semantics. The SPIR-V text leaves floating-point order and internal precision to the client
// API, and Vulkan leaves them to the implementation (appendix "Precision and Operation of
// SPIR-V Instructions": "OpCooperativeMatrixMulAddKHR performs its operations in an
// implementation-dependent order and internal precision"). coopvk's choice, which
// tile_mma_reference() implements literally:
//  - Floats: inputs are widened exactly to f32 (f16, bf16, E4M3, E5M2, f32) or f64 (f64).
//    Each D[i][j] starts from C[i][j] and accumulates A[i][kk] * B[kk][j] for kk = 0..k-1
//    in that order, each step one fused multiply-add in f32 (f64), then is rounded once,
//    to nearest even, to D's format (products of the narrow formats are exact in f32, so
//    only the additions round). NaN inputs give NaN (payload unspecified).
//    Documented departures, each bounded by the tests' tolerance:
//      * Avx512 arch with AVX512-FP16, f16 x f16 + f16 -> f16: accumulates in f16 with
//        vfmadd231ph (one f16 rounding per step; FP16 arithmetic never flushes denormals).
//      * Avx512 arch with AVX512-BF16, bf16 inputs: vdpbf16ps adds two products per step
//        (k pairs in an unspecified order; an odd k is padded with +0, so a -0 result may
//        come out +0) and, by its definition, treats denormal inputs as zero and flushes
//        denormal results; Vulkan allows that by default ("any denormalized floating-point
//        value ... may be flushed to zero") but not under DenormPreserve, for which the JIT
//        must not pick this path (restrict_cpu_features() without kAvx512Bf16).
//      * Portable arch, f32 x f32 and f64 x f64: multiply then add (two roundings) where
//        the baseline ISA has no FMA.
//    The native f32 paths honour the calling thread's MXCSR: with FTZ/DAZ set (a shader's
//    default denorm mode may flush) f32 denormal intermediates flush, otherwise they are kept;
//    its rounding mode must be the default, to nearest. Widening and the final rounding to D
//    never depend on the MXCSR.
//  - Integers (SPIR-V ibid.): every element is sign- or zero-extended per its own format,
//    so the Matrix{A,B,C,Result}SignedComponentsKHR operands are already folded into the
//    formats (I8 vs U8 ...). Without saturation, D is the low N bits (N = D's width) of the
//    exact C + sum A*B: arithmetic wraps modulo 2^N. With SaturatingAccumulation, the
//    products and their sum are computed exactly (wider than N; the spec makes the result
//    undefined if that sum overflows N bits, so exact is a valid refinement), and the
//    addition to C saturates to D's range with D's signedness ("saturating ... with the
//    signedness of the saturation being that of the components of 'Result Type'").
//    Integer results are the same bits on every arch.
//
// Combinations (a x b + c -> d), each with any m, n >= 1 and k >= 0 (k = 0: D = C converted):
//  floats: f16 f16 f32 f32, f16 f16 f16 f16, bf16 bf16 f32 f32, bf16 bf16 bf16 bf16,
//          X Y f32 f32 and X Y f16 f16 for X, Y in {E4M3, E5M2}, E4M3^4, E5M2^4, f32^4, f64^4;
//  integers, with and without saturate (c may differ from d in signedness only):
//          {I8,U8} x {I8,U8} + {I32,U32} -> {I32,U32} and + {I8,U8} -> {I8,U8};
//          {I16,U16} x {I16,U16} + {I32,U32} -> {I32,U32} and + {I16,U16} -> {I16,U16};
//          {I32,U32} x {I32,U32} + {I32,U32} -> {I32,U32}.
// Native paths (the rest runs the portable code), by KernelArch and CPU extension:
//   Avx2:   every float combination but f64 (f32 FMA on ymm); 8-bit integers into 32 bits
//           (vpmaddwd on exact int16 pairs; vpdpbusd with AVX-VNNI).
//   Avx512: the same on zmm (ymm with 32 registers when n fills 8-lane vectors better), plus
//           vfmadd231ph for f16 -> f16 with AVX512-FP16, vdpbf16ps for bf16 with
//           AVX512-BF16, vpdpbusd with AVX512-VNNI. (f16 widens with AVX512F's vcvtph2ps,
//           which gives the same bits as AVX512-FP16's vcvtph2psx.)
// The hot combinations (f16 x f16 + f32/f16, bf16 x bf16 + f32, e4m3 x e4m3 + f32, f32, and
// the non-saturating 8-bit ones into 32 bits of matching signedness) also have copies fixed
// to the JIT's usual shapes: 16x16x16, 16x8x16, 16x8x8, 8x8x8 (floats) and 16x16x32,
// 16x8x32, 8x8x32 (8-bit integers). Stack use is at most 25 KiB per call (the JIT's fiber
// stacks are 8 MiB).
#pragma once

#include <cstdint>

#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels {

struct TileMmaDesc {
  NumberFormat a, b, c, d;  // element formats of A, B, C and the result D
  uint32_t m, n, k;
  bool saturate = false;  // SaturatingAccumulationKHR (only for integer d)
};

using TileMmaFn = void (*)(const void* a, const void* b, const void* c, void* d, uint32_t m,
                           uint32_t n, uint32_t k);

// The kernel for this combination on the active KernelArch and CPU features, or nullptr if
// the combination is unsupported. desc's m, n, k pick a copy fixed to that shape where there
// is one; every kernel still takes any shape it is called with.
// Each call of the kernel is a plain function call: no allocation, no locks, no dispatch
// beyond a branch on the shape. Thread-safe; the pointers stay valid for the process's life.
TileMmaFn tile_mma_kernel(const TileMmaDesc& desc);

// A kernel split into its parts, for operands that several multiply-adds share: in a K loop
// over a block of accumulator tiles, each tile of A meets every tile of B of that step, and
// the whole kernel would convert and repack it once per use. pack_a / pack_b write A (m x k)
// and B (k x n), dense row-major as above, into a_bytes / b_bytes of the layout the kernel
// reads (widened to the accumulator's type, k grouped for the dot-product instructions, sign
// fix-ups precomputed); mma then computes D = A x B + C from packed operands, with exactly
// the bits tile_mma_kernel(desc) gives for the unpacked ones (D may be C). Packed operands are
// opaque: they hold no pointers and may be copied, but only this desc's mma reads them.
// Outputs need no alignment.
struct TileMmaPacked {
  // lda / ldb: elements between the rows of A (>= k) / of B (>= n), so that a tile can be
  // packed straight from the buffer a shader loads it from.
  void (*pack_a)(const void* a, size_t lda, void* out) = nullptr;
  void (*pack_b)(const void* b, size_t ldb, void* out) = nullptr;
  void (*mma)(const void* a_packed, const void* b_packed, const void* c, void* d) = nullptr;
  // mma(a_packed, b0_packed, c0, d0) then mma(a_packed, b1_packed, c1, d1), with the same
  // result whatever overlaps; faster where the results overlap nothing else (two tiles of a
  // register block that share A), since each broadcast of A then serves both.
  void (*mma2)(const void* a_packed, const void* b0_packed, const void* c0, void* d0, const void* b1_packed,
               const void* c1, void* d1) = nullptr;
  uint32_t a_bytes = 0, b_bytes = 0;
};

// The split form of tile_mma_kernel(desc) on the active KernelArch and CPU features, or false
// (out cleared) where that kernel has none: only the fixed shapes of the hot combinations
// whose accumulators are D's own format (no saturation, floats into f32, 8-bit integers into
// 32 bits) and whose columns fill the kernel's vectors.
bool tile_mma_packed(const TileMmaDesc& desc, TileMmaPacked* out);

// The scalar reference (the semantics above, without the departures); false if unsupported.
bool tile_mma_reference(const TileMmaDesc& desc, const void* a, const void* b, const void* c,
                        void* d);

// Whether the combination (formats and saturate) is supported at all, for any shape.
bool tile_mma_supported(const TileMmaDesc& desc);

}  // namespace coopvk::kernels
