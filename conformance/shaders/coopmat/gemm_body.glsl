// A tiled GEMM on cooperative matrices, D = A x B + C, the shape real shaders have: each
// subgroup owns a BM x BN block of accumulator tiles (register blocking) and walks K,
// several subgroups per workgroup (WM x WN of them). A is M x K, B is K x N, C and D are
// M x N, all row-major with the given row strides; M, N, K are multiples of the block.
// TA / TC (component types) and OPS come from the including file; the tile shape TM x TN
// x TK (a property entry's MSize, NSize, KSize) and the subgroup grid are specialization
// constants, so one SPIR-V module runs on any device's entries (bench_coopmat_gemm,
// e2e_cooperative_matrix).
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 16;
layout(constant_id = 2) const uint TN = 16;
layout(constant_id = 3) const uint TK = 16;
layout(constant_id = 4) const uint WN = 2;  // subgroups across a workgroup's columns
#define BM 2
#define BN 2
layout(set = 0, binding = 0) readonly buffer BA { TA a[]; };
layout(set = 0, binding = 1) readonly buffer BB { TA b[]; };
layout(set = 0, binding = 2) readonly buffer BC { TC c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { TC d[]; };
layout(push_constant) uniform P { uint k_total, lda, ldb, ldc, ldd; } pc;
void main() {
  uint wm = gl_NumSubgroups / WN;
  uint row0 = (gl_WorkGroupID.y * wm + gl_SubgroupID / WN) * (BM * TM);
  uint col0 = (gl_WorkGroupID.x * WN + gl_SubgroupID % WN) * (BN * TN);
  coopmat<TC, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc[BM][BN];
  for (uint i = 0; i < BM; ++i)
    for (uint j = 0; j < BN; ++j)
      coopMatLoad(acc[i][j], c, (row0 + i * TM) * pc.ldc + col0 + j * TN, pc.ldc, gl_CooperativeMatrixLayoutRowMajor);
  for (uint k = 0; k < pc.k_total; k += TK) {
    coopmat<TA, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> ma[BM];
    coopmat<TA, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> mb[BN];
    for (uint i = 0; i < BM; ++i)
      coopMatLoad(ma[i], a, (row0 + i * TM) * pc.lda + k, pc.lda, gl_CooperativeMatrixLayoutRowMajor);
    for (uint j = 0; j < BN; ++j)
      coopMatLoad(mb[j], b, k * pc.ldb + col0 + j * TN, pc.ldb, gl_CooperativeMatrixLayoutRowMajor);
    for (uint i = 0; i < BM; ++i)
      for (uint j = 0; j < BN; ++j)
        acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j] OPS);
  }
  for (uint i = 0; i < BM; ++i)
    for (uint j = 0; j < BN; ++j)
      coopMatStore(acc[i][j], d, (row0 + i * TM) * pc.ldd + col0 + j * TN, pc.ldd, gl_CooperativeMatrixLayoutRowMajor);
}
