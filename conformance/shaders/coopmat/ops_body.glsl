// Element-wise operations on accumulator matrices (test_jit_coopmat.cpp): T is the
// component type, FLOAT says whether it is a float type. Each subgroup owns tile t of
// 16x16; out has 8 tiles per input tile (one per result below) plus the length.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer BX { T x[]; };
layout(set = 0, binding = 1) readonly buffer BY { T y[]; };
layout(set = 0, binding = 2) writeonly buffer BO { T o[]; };
layout(set = 0, binding = 3) writeonly buffer BL { uint len[]; };
#define MAT coopmat<T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
const MAT two = MAT(T(2));
void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  MAT a, b;
  coopMatLoad(a, x, t * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, y, t * 256, 16, gl_CooperativeMatrixLayoutColumnMajor);  // b is y transposed
  uint base = t * 256 * 8;
  coopMatStore(a + b, o, base, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(a - b, o, base + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(a * b, o, base + 512, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(-a, o, base + 768, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(a / b, o, base + 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
#if FLOAT
  coopMatStore(a * T(3), o, base + 1280, 16, gl_CooperativeMatrixLayoutRowMajor);
#else
  coopMatStore(a * MAT(T(3)), o, base + 1280, 16, gl_CooperativeMatrixLayoutRowMajor);
#endif
  // Per-invocation components: each lane doubles and offsets its own.
  MAT c = a;
  for (int i = 0; i < c.length(); ++i) c[i] = c[i] * T(2) + T(1);
  coopMatStore(c, o, base + 1536, 16, gl_CooperativeMatrixLayoutRowMajor);
  // A constant, a splat, and a conversion round trip through the other accumulator type.
  MAT d = two + MAT(T(5)) + MAT(CONV(a));
  coopMatStore(d, o, base + 1792, 16, gl_CooperativeMatrixLayoutColumnMajor);
  len[gl_GlobalInvocationID.x] = a.length();
}
