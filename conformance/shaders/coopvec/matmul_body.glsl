// One matrix-vector multiply(-add) per invocation, for test_jit_coopvec.cpp and
// e2e_cooperative_vector. A variant defines INPUT_T, RESULT_T, INTERP, MAT_INTERP,
// BIAS_INTERP, UNIFORM and, when it fixes whether there is a bias, HAS_BIAS
// (coopvec_variants.cmake); the lengths, layout, transpose (and the bias when HAS_BIAS is
// not defined) are specialization constants, the strides and the second matrix's offset
// push constants.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x = 16) in;
layout(constant_id = 0) const uint M = 8;
layout(constant_id = 1) const uint K = 8;
layout(constant_id = 2) const uint IN_LEN = 8;  // K, or K / 4 rounded up for packed inputs
layout(constant_id = 3) const int LAYOUT = 0;
layout(constant_id = 4) const bool TRANSPOSE = false;
#ifndef UNIFORM
#define UNIFORM 0
#endif
#ifdef HAS_BIAS
const bool WITH_BIAS = HAS_BIAS != 0;
#else
layout(constant_id = 5) const bool WITH_BIAS = true;
#endif

layout(set = 0, binding = 0) buffer In { INPUT_T x[]; } inb;
layout(set = 0, binding = 1) buffer Mat { uint m[]; } mat;
layout(set = 0, binding = 2) buffer Bias { uint b[]; } bias;
layout(set = 0, binding = 3) buffer Out { RESULT_T y[]; } outb;
layout(push_constant) uniform P {
  uint in_stride;   // bytes between the invocations' inputs
  uint out_stride;  // and outputs
  uint mat_stride;  // MatrixStride
  uint mat_bytes;   // odd invocations use the matrix (and bias) this far in
  uint bias_bytes;
} pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
#if UNIFORM
  // Every invocation on the first matrix and bias, the multiply the JIT batches over the
  // lanes; a nonzero mat_bytes asks for inactive lanes all the same (then lane by lane).
  if (pc.mat_bytes != 0 && i % 5 == 3) return;
  uint moff = 0, boff = 0;
#else
  if (i % 5 == 3) return;  // inactive lanes: their outputs stay as they were
  uint moff = (i & 1) * pc.mat_bytes, boff = (i & 1) * pc.bias_bytes;
#endif
  coopvecNV<INPUT_T, IN_LEN> v;
  coopVecLoadNV(v, inb.x, i * pc.in_stride);
  coopvecNV<RESULT_T, M> r;
  if (WITH_BIAS)
    coopVecMatMulAddNV(r, v, INTERP, mat.m, moff, MAT_INTERP, bias.b, boff, BIAS_INTERP, M, K,
                       LAYOUT, TRANSPOSE, pc.mat_stride);
  else
    coopVecMatMulNV(r, v, INTERP, mat.m, moff, MAT_INTERP, M, K, LAYOUT, TRANSPOSE, pc.mat_stride);
  coopVecStoreNV(r, outb.y, i * pc.out_stride);
}
