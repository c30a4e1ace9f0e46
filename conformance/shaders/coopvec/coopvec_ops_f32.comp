#version 460
// Element-wise, composite and control-flow uses of float cooperative vectors
// (test_jit_coopvec.cpp computes the same per invocation in C++). L is a specialization
// constant so one shader covers every length.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint L = 8;

layout(set = 0, binding = 0) buffer In { float x[]; } inb;  // a and b: 2 * L per invocation
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;  // 8 results of L per invocation
layout(set = 0, binding = 2) buffer Out16 { float16_t h[]; } out16;  // L per invocation

coopvecNV<float, L> scaled(coopvecNV<float, L> v, float s) { return v * s; }

void main() {
  uint i = gl_GlobalInvocationID.x;
  uint base = i * 2 * L * 4;
  coopvecNV<float, L> a, b;
  coopVecLoadNV(a, inb.x, base);
  coopVecLoadNV(b, inb.x, base + L * 4);
  uint out0 = i * 8 * L * 4;
  // 0: arithmetic (exact on the test's small integers)
  coopvecNV<float, L> r = (a * b + a - b) / coopvecNV<float, L>(2.0) - (-a);
  coopVecStoreNV(r, outb.y, out0);
  // 1: min / max / clamp / step / fma, and a function returning a vector
  coopvecNV<float, L> lo = coopvecNV<float, L>(-2.0), hi = coopvecNV<float, L>(3.0);
  r = max(min(a, b), clamp(b, lo, hi)) + step(b, a) + fma(a, b, scaled(a, 0.5));
  coopVecStoreNV(r, outb.y, out0 + 1 * L * 4);
  // 2: exp / log / tanh / atan (within a tolerance)
  r = exp(a * 0.25) + log(b * b + coopvecNV<float, L>(1.0)) + tanh(a) + atan(b);
  coopVecStoreNV(r, outb.y, out0 + 2 * L * 4);
  // 3: components one by one: a[j] read and written with a loop index, and a lane-varying index
  coopvecNV<float, L> c = a;
  for (uint j = 0; j < L; ++j) c[j] = c[j] * 2.0 + float(j);
  c[i % L] = -1.0;
  coopVecStoreNV(c, outb.y, out0 + 3 * L * 4);
  // 4: a divergent branch and a loop carrying a vector (phis), lanes leaving early
  coopvecNV<float, L> acc = coopvecNV<float, L>(0.0);
  if ((i & 1) == 0) acc = a; else acc = b;
  for (uint n = 0; n < (i % 4); ++n) acc = acc + coopvecNV<float, L>(1.0);
  coopVecStoreNV(acc, outb.y, out0 + 4 * L * 4);
  // 5: select
  coopvecNV<float, L> s = (i % 3 == 0) ? a : b;
  coopVecStoreNV(s, outb.y, out0 + 5 * L * 4);
  // 6: conversions: to float16 and back, to int and back
  coopvecNV<float16_t, L> h = coopvecNV<float16_t, L>(a);
  coopVecStoreNV(h, out16.h, i * L * 2);
  coopvecNV<int, L> k = coopvecNV<int, L>(b);
  r = coopvecNV<float, L>(k * 3) + coopvecNV<float, L>(h);
  coopVecStoreNV(r, outb.y, out0 + 6 * L * 4);
  // 7: the last component extracted, and a uniform-address load (every lane reads 0..L-1)
  coopvecNV<float, L> u;
  coopVecLoadNV(u, inb.x, 0);
  r = u * a[L - 1];
  coopVecStoreNV(r, outb.y, out0 + 7 * L * 4);
}
