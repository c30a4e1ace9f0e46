// VK_EXT_cooperative_matrix_maintenance1 on accumulator matrices of component type T
// (from the including file), M x N from specialization constants (a property entry's
// accumulator shape): reductions (Row with add, Column with max, Row|Column with min),
// a per-element callback with coordinates, extra operands, a branch and a nested call,
// and the coordinate of every component. test_matrix_maintenance1.cpp checks each
// against a scalar reference. Each subgroup works on tile t of x.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_cooperative_matrix_maintenance1 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 16;
layout(constant_id = 2) const uint N = 16;
layout(set = 0, binding = 0) readonly buffer BX { T x[]; };
layout(set = 0, binding = 1) readonly buffer BY { T y[]; };
layout(set = 0, binding = 2) writeonly buffer BO { T o[]; };      // 4 results per tile
layout(set = 0, binding = 3) writeonly buffer BC { uvec4 coord[]; };  // (row, col, value bits, length)
#define MAT coopmat<T, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator>

T add(const in T a, const in T b) { return a + b; }
T maximum(const in T a, const in T b) { return max(a, b); }
T minimum(const in T a, const in T b) { return a < b ? a : b; }
T twice(const in T v) { return v + v; }
// row, column, element, then an extra scalar and the element of a second matrix.
T per_element(const in uint r, const in uint c, const in T v, const in T k, const in T w) {
  if (((r + c) & 1u) == 0u) return twice(v) + w - T(int(c));
  return v * k - w + T(int(r));
}

void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  uint tile = M * N;
  MAT a, b, r;
  coopMatLoad(a, x, t * tile, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, y, t * tile, N, gl_CooperativeMatrixLayoutRowMajor);
  uint base = t * tile * 4;
  coopMatReduceEXT(r, a, gl_CooperativeMatrixReduceRowEXT, add);
  coopMatStore(r, o, base, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatReduceEXT(r, a, gl_CooperativeMatrixReduceColumnEXT, maximum);
  coopMatStore(r, o, base + tile, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatReduceEXT(r, a, gl_CooperativeMatrixReduceRowAndColumnEXT, minimum);
  coopMatStore(r, o, base + 2 * tile, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatPerElementEXT(r, a, per_element, T(3), b);
  coopMatStore(r, o, base + 3 * tile, N, gl_CooperativeMatrixLayoutRowMajor);
  // Every component's coordinate, with the component's value to check it against.
  uint len = a.length();
  for (uint i = 0; i < len; ++i) {
    uvec2 rc = coopMatGetCoordinateEXT(a, i);
    coord[(t * len + i) * gl_SubgroupSize + gl_SubgroupInvocationID] = uvec4(rc, uint(BITS(a[i])), len);
  }
}
