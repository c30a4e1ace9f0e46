#version 450
// A subgroup-scope multiply-add of M x N x K (specialization constants 1..3): with
// cooperativeMatrixFlexibleDimensions any multiple of an entry's shape
// (test_workgroup_matrix.cpp). One subgroup; the workgroup size is specialization constant 0.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 32;
layout(constant_id = 2) const uint N = 32;
layout(constant_id = 3) const uint K = 32;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };  // M x K
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };  // K x N
layout(set = 0, binding = 2) readonly buffer BC { float c[]; };      // M x N
layout(set = 0, binding = 3) writeonly buffer BD { float d[]; };     // A B + C

void main() {
  coopmat<float16_t, gl_ScopeSubgroup, M, K, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, K, N, gl_MatrixUseB> mb;
  coopmat<float, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> acc;
  coopMatLoad(ma, a, 0, K, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, b, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(acc, c, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  acc = coopMatMulAdd(ma, mb, acc);
  coopMatStore(acc, d, 0, N, gl_CooperativeMatrixLayoutRowMajor);
}
