// The multiply-add test shader (test_jit_coopmat.cpp, e2e_cooperative_matrix): each
// subgroup owns one tile t: D[t] = A[t] x B[t] + C[t]. TA, TB, TC, TR (component types)
// and OPS (extra operands) come from the including file; M, N, K, the workgroup size and
// B's layout are specialization constants; the row strides are push constants.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 16;
layout(constant_id = 2) const uint N = 16;
layout(constant_id = 3) const uint K = 16;
layout(constant_id = 4) const int LAYOUT_B = 0;  // gl_CooperativeMatrixLayoutRowMajor / ColumnMajor
layout(set = 0, binding = 0) readonly buffer BA { TA a[]; };
layout(set = 0, binding = 1) readonly buffer BB { TB b[]; };
layout(set = 0, binding = 2) readonly buffer BC { TC c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { TR d[]; };
layout(push_constant) uniform P { uint lda, ldb, ldc, ldd; } pc;
void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  coopmat<TA, gl_ScopeSubgroup, M, K, gl_MatrixUseA> ma;
  coopmat<TB, gl_ScopeSubgroup, K, N, gl_MatrixUseB> mb;
  coopmat<TC, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> mc;
  coopMatLoad(ma, a, t * M * pc.lda, pc.lda, gl_CooperativeMatrixLayoutRowMajor);
  // B's tile: K rows of ldb (row-major) or N columns of ldb (column-major)
  coopMatLoad(mb, b, t * (LAYOUT_B == 0 ? K : N) * pc.ldb, pc.ldb, LAYOUT_B);
  coopMatLoad(mc, c, t * M * pc.ldc, pc.ldc, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<TR, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> mr = coopMatMulAdd(ma, mb, mc OPS);
  coopMatStore(mr, d, t * M * pc.ldd, pc.ldd, gl_CooperativeMatrixLayoutRowMajor);
}
