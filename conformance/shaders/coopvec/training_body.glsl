// The training accumulations (test_jit_coopvec.cpp): every invocation adds its outer
// product into one matrix and its vector into one array, so the adds race.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint M = 8;
layout(constant_id = 1) const uint N = 8;
layout(constant_id = 2) const int LAYOUT = 3;
layout(set = 0, binding = 0) buffer In { float16_t x[]; } inb;  // a (M) then b (N) per invocation
layout(set = 0, binding = 1) buffer Mat { MAT_T m[]; } mat;
layout(set = 0, binding = 2) buffer Sum { MAT_T s[]; } sum;
layout(push_constant) uniform P { uint stride; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i % 7 == 5) return;
  coopvecNV<float16_t, M> a;
  coopvecNV<float16_t, N> b;
  coopVecLoadNV(a, inb.x, i * (M + N) * 2);
  coopVecLoadNV(b, inb.x, i * (M + N) * 2 + M * 2);
  coopVecOuterProductAccumulateNV(a, b, mat.m, 0, pc.stride, LAYOUT, MAT_INTERP);
  coopvecNV<MAT_T, M> v = coopvecNV<MAT_T, M>(a);
  coopVecReduceSumAccumulateNV(v, sum.s, 0);
}
