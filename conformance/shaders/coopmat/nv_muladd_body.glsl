// The legacy VK_NV_cooperative_matrix multiply-add (e2e_nv_cooperative_matrix): each
// subgroup owns one tile t: D[t] = A[t] x B[t] + C[t], then, as a second output,
// E[t] = (D[t] - C[t]) * 2 + C[t] + 1 computed with the NV element-wise forms (add, sub,
// times scalar, a constant matrix, and every component of the invocation's share through
// OpCooperativeMatrixLengthNV and component access). TA / TC (buffer element types) and
// MAT_A, MAT_B, MAT_C (the NV matrix types) come from the generated file; M, N, K, the
// workgroup size and B's layout are specialization constants; strides are push constants.
#pragma use_vulkan_memory_model
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 16;
layout(constant_id = 2) const uint N = 16;
layout(constant_id = 3) const uint K = 16;
layout(constant_id = 4) const bool B_COLMAJOR = false;
layout(set = 0, binding = 0) readonly buffer BA { TA a[]; };
layout(set = 0, binding = 1) readonly buffer BB { TA b[]; };
layout(set = 0, binding = 2) readonly buffer BC { TC c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { TC d[]; };
layout(set = 0, binding = 4) writeonly buffer BE { TC e[]; };
layout(push_constant) uniform P { uint lda, ldb, ldc, ldd; } pc;
void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  MAT_A ma;
  MAT_B mb;
  MAT_C mc;
  coopMatLoadNV(ma, a, t * M * pc.lda, pc.lda, false);
  coopMatLoadNV(mb, b, t * (B_COLMAJOR ? N : K) * pc.ldb, pc.ldb, B_COLMAJOR);
  coopMatLoadNV(mc, c, t * M * pc.ldc, pc.ldc, false);
  MAT_C md = coopMatMulAddNV(ma, mb, mc);
  coopMatStoreNV(md, d, t * M * pc.ldd, pc.ldd, false);
  MAT_C one = MAT_C(TC(1));
  MAT_C me = (md - mc) * TC(2) + mc;
  for (int i = 0; i < me.length(); ++i) me[i] = me[i] + one[i];
  // Column-major store, read back by the test as the transpose.
  coopMatStoreNV(me, e, t * N * pc.ldd, pc.ldd, true);
}
