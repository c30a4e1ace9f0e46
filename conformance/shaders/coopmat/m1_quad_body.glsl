// 2x2 reductions (VK_EXT_cooperative_matrix_maintenance1) of an M x N accumulator matrix
// of component type T to (M/2) x (N/2), with add, min, max and a user combine function
// that branches, and a Row|Column sum into the half-size matrix.
// test_matrix_maintenance1.cpp checks them against a scalar reference.
// A(v) / R(v): as in m1_ops_body.glsl.
#include "m1_common.glsl"
layout(constant_id = 1) const uint M = 16;
layout(constant_id = 2) const uint N = 16;
const uint MH = M / 2, NH = N / 2;
layout(set = 0, binding = 0) readonly buffer BX { T x[]; };
layout(set = 0, binding = 2) writeonly buffer BO { T o[]; };  // 5 results per tile

T add(const in T a, const in T b) { return R(A(a) + A(b)); }
T minimum(const in T a, const in T b) { return R(min(A(a), A(b))); }
T maximum(const in T a, const in T b) { return A(a) < A(b) ? b : a; }
T larger(const in T a, const in T b) {
  T r = b;
  if (A(a) > A(b)) r = a;
  return r;
}

void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  coopmat<T, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> a;
  coopmat<T, gl_ScopeSubgroup, MH, NH, gl_MatrixUseAccumulator> q;
  coopMatLoad(a, x, t * M * N, N, gl_CooperativeMatrixLayoutRowMajor);
  uint q_tile = MH * NH, base = t * q_tile * 5;
  REDUCE(q, a, REDUCE_2X2, add);
  coopMatStore(q, o, base, NH, gl_CooperativeMatrixLayoutRowMajor);
  REDUCE(q, a, REDUCE_2X2, minimum);
  coopMatStore(q, o, base + q_tile, NH, gl_CooperativeMatrixLayoutRowMajor);
  REDUCE(q, a, REDUCE_2X2, maximum);
  coopMatStore(q, o, base + 2 * q_tile, NH, gl_CooperativeMatrixLayoutRowMajor);
  REDUCE(q, a, REDUCE_2X2, larger);
  coopMatStore(q, o, base + 3 * q_tile, NH, gl_CooperativeMatrixLayoutRowMajor);
  // Row|Column may give a result of any shape: the whole tile's sum in every element.
  REDUCE(q, a, REDUCE_ROW_AND_COLUMN, add);
  coopMatStore(q, o, base + 4 * q_tile, NH, gl_CooperativeMatrixLayoutRowMajor);
}
