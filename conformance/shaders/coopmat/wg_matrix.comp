#version 450
// Workgroup-scope cooperative matrices (VK_NV_cooperative_matrix2, test_workgroup_matrix.cpp):
// the whole workgroup (specialization constant 0 invocations) holds each matrix. A K loop of
// multiply-adds (M x N x K from specialization constants 1..3, K in steps of 16) from
// f16 A and B into an f32 accumulator loaded from C; the result stored row- and
// column-major; a per-element callback with coordinates; Row sum, Column max and 2x2 sum
// reductions; a transpose into an f32 B matrix; every invocation's components scaled
// through the per-invocation view; and, in the same shader, a subgroup-scope matrix per
// subgroup. Binding 13 gets each invocation's component count.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 32;
layout(constant_id = 2) const uint N = 32;
layout(constant_id = 3) const uint K = 16;
const uint M2 = M / 2, N2 = N / 2;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };    // M x K
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };    // K x N
layout(set = 0, binding = 2) readonly buffer BC { float c[]; };        // M x N
layout(set = 0, binding = 3) writeonly buffer BD { float d[]; };       // D = A B + C
layout(set = 0, binding = 4) writeonly buffer BDC { float dcol[]; };   // D column-major
layout(set = 0, binding = 5) writeonly buffer BE { float e[]; };       // 2 D + 1000 row + col
layout(set = 0, binding = 6) writeonly buffer BR { float rsum[]; };    // row sums of D
layout(set = 0, binding = 7) writeonly buffer BM { float cmax[]; };    // column maxima of D
layout(set = 0, binding = 8) writeonly buffer BQ { float quad[]; };    // 2x2 sums, M/2 x N/2
layout(set = 0, binding = 9) writeonly buffer BT { float tr[]; };      // D transposed, N x M
layout(set = 0, binding = 10) writeonly buffer BS { float scaled[]; }; // 3 D, component by component
layout(set = 0, binding = 11) readonly buffer BX { float x[]; };       // 16x16 per subgroup
layout(set = 0, binding = 12) writeonly buffer BY { float y[]; };      // 2 x, subgroup scope
layout(set = 0, binding = 13) writeonly buffer BL { uint len[]; };

#define ACC(R, C) coopmat<float, gl_ScopeWorkgroup, R, C, gl_MatrixUseAccumulator>

float add(const in float p, const in float q) { return p + q; }
float maximum(const in float p, const in float q) { return max(p, q); }
float mark(const in uint r, const in uint col, const in float v) { return 2.0 * v + float(r * 1000u + col); }

void main() {
  ACC(M, N) acc;
  coopMatLoad(acc, c, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  for (uint k = 0; k < K; k += 16) {
    coopmat<float16_t, gl_ScopeWorkgroup, M, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeWorkgroup, 16, N, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, k, K, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, k * N, N, gl_CooperativeMatrixLayoutRowMajor);
    acc = coopMatMulAdd(ma, mb, acc);
  }
  coopMatStore(acc, d, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(acc, dcol, 0, M, gl_CooperativeMatrixLayoutColumnMajor);

  ACC(M, N) marked;
  coopMatPerElementNV(marked, acc, mark);
  coopMatStore(marked, e, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  ACC(M, N) rows;
  coopMatReduceNV(rows, acc, gl_CooperativeMatrixReduceRowNV, add);
  coopMatStore(rows, rsum, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  ACC(M, N) cols;
  coopMatReduceNV(cols, acc, gl_CooperativeMatrixReduceColumnNV, maximum);
  coopMatStore(cols, cmax, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  ACC(M2, N2) q;
  coopMatReduceNV(q, acc, gl_CooperativeMatrixReduce2x2NV, add);
  coopMatStore(q, quad, 0, N2, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeWorkgroup, N, M, gl_MatrixUseB> t;
  coopMatTransposeNV(t, acc);
  coopMatStore(t, tr, 0, M, gl_CooperativeMatrixLayoutRowMajor);

  for (int i = 0; i < acc.length(); ++i) acc[i] = acc[i] * 3.0;
  coopMatStore(acc, scaled, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  len[gl_LocalInvocationIndex] = uint(acc.length());

  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> s;
  coopMatLoad(s, x, gl_SubgroupID * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  s = s * 2.0;
  coopMatStore(s, y, gl_SubgroupID * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
