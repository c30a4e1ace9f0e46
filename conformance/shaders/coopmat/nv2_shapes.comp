#version 450
// VK_NV_cooperative_matrix2 forms whose result shape or type differs from the source's
// (test_matrix_maintenance1.cpp): a 16x16 f16 accumulator transposed into an f32 B matrix
// (OpCooperativeMatrixTransposeNV changing the component type), a Row sum into a 16x48
// result (three times a listed shape), and a 2x2 max of a 32x32 matrix (twice a listed
// shape) into 16x16. One subgroup; the workgroup size is specialization constant 0.
#extension GL_GOOGLE_include_directive : require
#define NV2 1
#include "m1_common.glsl"
layout(set = 0, binding = 0) readonly buffer BX { float16_t x[]; };   // 32x32, row-major
layout(set = 0, binding = 1) writeonly buffer BT { float t[]; };      // 16x16: transpose of x's top-left 16x16
layout(set = 0, binding = 2) writeonly buffer BR { float16_t r[]; };  // 16x48: row sums of that 16x16
layout(set = 0, binding = 3) writeonly buffer BQ { float16_t q[]; };  // 16x16: 2x2 max of x

float16_t add(const in float16_t a, const in float16_t b) { return a + b; }
float16_t maximum(const in float16_t a, const in float16_t b) { return max(a, b); }

void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc;
  coopMatLoad(acc, x, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> bt;
  coopMatTransposeNV(bt, acc);
  coopMatStore(bt, t, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 48, gl_MatrixUseAccumulator> wide;
  REDUCE(wide, acc, REDUCE_ROW, add);
  coopMatStore(wide, r, 0, 48, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float16_t, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator> big;
  coopMatLoad(big, x, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> halved;
  REDUCE(halved, big, REDUCE_2X2, maximum);
  coopMatStore(halved, q, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
