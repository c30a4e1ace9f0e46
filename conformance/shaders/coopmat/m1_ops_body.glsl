// VK_EXT_cooperative_matrix_maintenance1 on accumulator matrices of component type T
// (from the including file), M x N from specialization constants (a property entry's
// accumulator shape): each reduction mode (Row, Column, Row|Column) with add, min, max
// and a user function that branches, a per-element callback with coordinates, extra
// operands, a branch and a nested call, and the coordinate of every component.
// test_matrix_maintenance1.cpp checks each against a scalar reference. Each subgroup
// works on tile t of x. A(v) is v as a type arithmetic applies to and R(v) back to T
// (float for bfloat16 and float8, which have no arithmetic of their own).
#include "m1_common.glsl"
layout(constant_id = 1) const uint M = 16;
layout(constant_id = 2) const uint N = 16;
layout(set = 0, binding = 0) readonly buffer BX { T x[]; };
layout(set = 0, binding = 1) readonly buffer BY { T y[]; };
layout(set = 0, binding = 2) writeonly buffer BO { T o[]; };      // 13 results per tile
layout(set = 0, binding = 3) writeonly buffer BC { uvec4 coord[]; };  // (row, col, value bits, length)
#define MAT coopmat<T, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator>

T add(const in T a, const in T b) { return R(A(a) + A(b)); }
T maximum(const in T a, const in T b) { return R(max(A(a), A(b))); }
T minimum(const in T a, const in T b) { return A(a) < A(b) ? a : b; }
// A user function: the larger, through a branch and a nested call.
bool above(const in T a, const in T b) { return A(a) > A(b); }
T larger(const in T a, const in T b) {
  T r = b;
  if (above(a, b)) r = a;
  return r;
}
T twice(const in T v) { return R(A(v) + A(v)); }
// row, column, element, then an extra scalar and the element of a second matrix.
T per_element(const in uint r, const in uint c, const in T v, const in T k, const in T w) {
  if (((r + c) & 1u) == 0u) return R(A(twice(v)) + A(w) - A(T(int(c))));
  return R(A(v) * A(k) - A(w) + A(T(int(r))));
}

void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  uint tile = M * N;
  MAT a, b, r;
  coopMatLoad(a, x, t * tile, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, y, t * tile, N, gl_CooperativeMatrixLayoutRowMajor);
  uint base = t * tile * 13;
  // Region 4 * mode + function: modes Row, Column, Row|Column; add, min, max, larger.
#define REDUCE_STORE(mode, fn, region) \
  REDUCE(r, a, mode, fn); \
  coopMatStore(r, o, base + (region) * tile, N, gl_CooperativeMatrixLayoutRowMajor)
  REDUCE_STORE(REDUCE_ROW, add, 0);
  REDUCE_STORE(REDUCE_ROW, minimum, 1);
  REDUCE_STORE(REDUCE_ROW, maximum, 2);
  REDUCE_STORE(REDUCE_ROW, larger, 3);
  REDUCE_STORE(REDUCE_COLUMN, add, 4);
  REDUCE_STORE(REDUCE_COLUMN, minimum, 5);
  REDUCE_STORE(REDUCE_COLUMN, maximum, 6);
  REDUCE_STORE(REDUCE_COLUMN, larger, 7);
  REDUCE_STORE(REDUCE_ROW_AND_COLUMN, add, 8);
  REDUCE_STORE(REDUCE_ROW_AND_COLUMN, minimum, 9);
  REDUCE_STORE(REDUCE_ROW_AND_COLUMN, maximum, 10);
  REDUCE_STORE(REDUCE_ROW_AND_COLUMN, larger, 11);
  PER_ELEMENT(r, a, per_element, T(3), b);
  coopMatStore(r, o, base + 12 * tile, N, gl_CooperativeMatrixLayoutRowMajor);
#ifndef NV2
  // Every component's coordinate, with the component's value to check it against.
  uint len = a.length();
  for (uint i = 0; i < len; ++i) {
    uvec2 rc = coopMatGetCoordinateEXT(a, i);
    coord[(t * len + i) * gl_SubgroupSize + gl_SubgroupInvocationID] = uvec4(rc, uint(BITS(a[i])), len);
  }
#endif
}
