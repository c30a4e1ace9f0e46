// GEMM shape variants, D = A x B + C, for measuring how the shape of a shader (not only
// its size) changes its speed: each variant differs from gemm_body.glsl (the baseline) in
// one way, chosen by one define that the generated file sets to 1 (muladd_variants.cmake,
// coopvk_gemm_shape_variants):
//
//   GEMM_STAGED      the workgroup copies its A and B blocks for KS steps of TK from the
//                    buffers into workgroup memory, 16 bytes (a uvec4) per invocation per
//                    copy, meets at a barrier, loads its matrices from there, multiplies,
//                    and meets again before the next stage (the shape of NVIDIA's
//                    vk_cooperative_matrix_perf shmem.comp and of ggml's mul_mm).
//                    Needs WM (spec. constant 5) = gl_NumSubgroups / WN, since workgroup
//                    memory is sized from it; and every row stride, TK and TN a multiple
//                    of 16 bytes of A's component (TA_BYTES).
//   GEMM_ZERO_INIT   the accumulators start from a constant 0; C is loaded after the K
//                    loop and added with matrix arithmetic.
//   GEMM_OUTER_LOOP  each subgroup computes OUTER_BLOCKS (2) blocks one after the other,
//                    the K loop inside the loop over them; the blocks are a workgroup's
//                    height apart, so a workgroup covers twice the rows of the baseline's.
//   GEMM_B_COLMAJOR  B is stored column-major (element (k, n) at n * ldb + k) and loaded
//                    with gl_CooperativeMatrixLayoutColumnMajor.
//
// With none set this is the baseline's shape. The defines are not meant to be combined
// (GEMM_STAGED with GEMM_B_COLMAJOR is refused). As in gemm_body.glsl: each subgroup owns
// BM x BN accumulator tiles, WN subgroups across a workgroup's columns and the rest down
// its rows; bindings, push constants and spec. constants 0-4 are gemm_body's; A is M x K
// row-major; C and D are M x N row-major; M, N, K are multiples of the blocks (K of KS x TK
// when staged). TA, TC, OPS and TA_BYTES come from the generated file.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#ifndef GEMM_STAGED
#define GEMM_STAGED 0
#endif
#ifndef GEMM_ZERO_INIT
#define GEMM_ZERO_INIT 0
#endif
#ifndef GEMM_OUTER_LOOP
#define GEMM_OUTER_LOOP 0
#endif
#ifndef GEMM_B_COLMAJOR
#define GEMM_B_COLMAJOR 0
#endif
#if GEMM_STAGED && GEMM_B_COLMAJOR
#error "gemm_staged_body.glsl: GEMM_STAGED stages B row-major only"
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 16;
layout(constant_id = 2) const uint TN = 16;
layout(constant_id = 3) const uint TK = 16;
layout(constant_id = 4) const uint WN = 2;  // subgroups across a workgroup's columns
#define BM 2
#define BN 2
#if GEMM_B_COLMAJOR
#define LAYOUT_B gl_CooperativeMatrixLayoutColumnMajor
#else
#define LAYOUT_B gl_CooperativeMatrixLayoutRowMajor
#endif
#if GEMM_OUTER_LOOP
#define OUTER_BLOCKS 2
#else
#define OUTER_BLOCKS 1
#endif

#if GEMM_STAGED
layout(constant_id = 5) const uint WM = 4;  // subgroups down a workgroup's rows: gl_NumSubgroups / WN
layout(constant_id = 6) const uint KS = 2;  // TK steps per stage
const uint EPV = 16 / TA_BYTES;             // A's (and B's) components per uvec4
const uint SA_ROW = KS * TK / EPV;          // uvec4 per row of the staged A block
const uint SB_ROW = WN * BN * TN / EPV;     // uvec4 per row of the staged B block
const uint SA_SIZE = WM * BM * TM * SA_ROW, SB_SIZE = KS * TK * SB_ROW;
// The buffers seen as 16-byte words: the staging copies move whole uvec4s.
layout(set = 0, binding = 0) readonly buffer BA { uvec4 a4[]; };
layout(set = 0, binding = 1) readonly buffer BB { uvec4 b4[]; };
shared uvec4 sa[SA_SIZE];
shared uvec4 sb[SB_SIZE];
#else
layout(set = 0, binding = 0) readonly buffer BA { TA a[]; };
layout(set = 0, binding = 1) readonly buffer BB { TA b[]; };
#endif
layout(set = 0, binding = 2) readonly buffer BC { TC c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { TC d[]; };
layout(push_constant) uniform P { uint k_total, lda, ldb, ldc, ldd; } pc;

void main() {
  uint wm = gl_NumSubgroups / WN;
  uint sg_row = gl_SubgroupID / WN, sg_col = gl_SubgroupID % WN;
  uint col0 = (gl_WorkGroupID.x * WN + sg_col) * (BN * TN);
#if GEMM_OUTER_LOOP
  for (uint blk = 0; blk < OUTER_BLOCKS; ++blk) {
    uint row0 = ((gl_WorkGroupID.y * OUTER_BLOCKS + blk) * wm + sg_row) * (BM * TM);
#else
  {
    uint row0 = (gl_WorkGroupID.y * wm + sg_row) * (BM * TM);
#endif
    coopmat<TC, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc[BM][BN];
    for (uint i = 0; i < BM; ++i)
      for (uint j = 0; j < BN; ++j) {
#if GEMM_ZERO_INIT
        acc[i][j] = coopmat<TC, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(TC(0));
#else
        coopMatLoad(acc[i][j], c, (row0 + i * TM) * pc.ldc + col0 + j * TN, pc.ldc, gl_CooperativeMatrixLayoutRowMajor);
#endif
      }

#if GEMM_STAGED
    // The workgroup's blocks: rows [wg_row0, + wm * BM * TM) of A, columns [wg_col0,
    // + WN * BN * TN) of B, KS * TK of K at a time.
    uint wg_row0 = gl_WorkGroupID.y * wm * (BM * TM), wg_col0 = gl_WorkGroupID.x * WN * (BN * TN);
    for (uint k0 = 0; k0 < pc.k_total; k0 += KS * TK) {
      for (uint v = gl_LocalInvocationIndex; v < SA_SIZE; v += gl_WorkGroupSize.x) {
        uint r = v / SA_ROW, x = v % SA_ROW;
        sa[v] = a4[((wg_row0 + r) * pc.lda + k0) / EPV + x];
      }
      for (uint v = gl_LocalInvocationIndex; v < SB_SIZE; v += gl_WorkGroupSize.x) {
        uint r = v / SB_ROW, x = v % SB_ROW;
        sb[v] = b4[((k0 + r) * pc.ldb + wg_col0) / EPV + x];
      }
      barrier();
      for (uint ks = 0; ks < KS; ++ks) {
        coopmat<TA, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> ma[BM];
        coopmat<TA, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> mb[BN];
        for (uint i = 0; i < BM; ++i)
          coopMatLoad(ma[i], sa, ((sg_row * BM + i) * TM) * SA_ROW + ks * TK / EPV, SA_ROW, gl_CooperativeMatrixLayoutRowMajor);
        for (uint j = 0; j < BN; ++j)
          coopMatLoad(mb[j], sb, ks * TK * SB_ROW + (sg_col * BN + j) * TN / EPV, SB_ROW, gl_CooperativeMatrixLayoutRowMajor);
        for (uint i = 0; i < BM; ++i)
          for (uint j = 0; j < BN; ++j)
            acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j] OPS);
      }
      barrier();
    }
#else
    for (uint k = 0; k < pc.k_total; k += TK) {
      coopmat<TA, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> ma[BM];
      coopmat<TA, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> mb[BN];
      for (uint i = 0; i < BM; ++i)
        coopMatLoad(ma[i], a, (row0 + i * TM) * pc.lda + k, pc.lda, gl_CooperativeMatrixLayoutRowMajor);
      for (uint j = 0; j < BN; ++j) {
#if GEMM_B_COLMAJOR
        coopMatLoad(mb[j], b, (col0 + j * TN) * pc.ldb + k, pc.ldb, LAYOUT_B);
#else
        coopMatLoad(mb[j], b, k * pc.ldb + col0 + j * TN, pc.ldb, LAYOUT_B);
#endif
      }
      for (uint i = 0; i < BM; ++i)
        for (uint j = 0; j < BN; ++j)
          acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j] OPS);
    }
#endif

    for (uint i = 0; i < BM; ++i)
      for (uint j = 0; j < BN; ++j) {
#if GEMM_ZERO_INIT
        coopmat<TC, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> mc;
        coopMatLoad(mc, c, (row0 + i * TM) * pc.ldc + col0 + j * TN, pc.ldc, gl_CooperativeMatrixLayoutRowMajor);
        acc[i][j] = acc[i][j] + mc;
#endif
        coopMatStore(acc[i][j], d, (row0 + i * TM) * pc.ldd + col0 + j * TN, pc.ldd, gl_CooperativeMatrixLayoutRowMajor);
      }
  }
}
