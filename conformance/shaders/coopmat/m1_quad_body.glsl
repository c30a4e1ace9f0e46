// A 2x2 reduction (VK_EXT_cooperative_matrix_maintenance1) of an M x N accumulator matrix
// of component type T to (M/2) x (N/2), with a user combine function that branches
// (the larger of the two, plus nothing: a max written as control flow).
// test_matrix_maintenance1.cpp checks it against a scalar reference.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_cooperative_matrix_maintenance1 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 16;
layout(constant_id = 2) const uint N = 16;
const uint MH = M / 2, NH = N / 2;
layout(set = 0, binding = 0) readonly buffer BX { T x[]; };
layout(set = 0, binding = 2) writeonly buffer BO { T o[]; };

T larger(const in T a, const in T b) {
  T r = b;
  if (a > b) r = a;
  return r;
}

void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  coopmat<T, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> a;
  coopmat<T, gl_ScopeSubgroup, MH, NH, gl_MatrixUseAccumulator> q;
  coopMatLoad(a, x, t * M * N, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatReduceEXT(q, a, gl_CooperativeMatrixReduce2x2EXT, larger);
  coopMatStore(q, o, t * MH * NH, NH, gl_CooperativeMatrixLayoutRowMajor);
}
