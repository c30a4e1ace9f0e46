#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Peak arithmetic throughput (vec4_f16): 8 independent chains of c = a * c + b per
// invocation, `iters` times (bench_peak). A SPIR-V shape GPU peak benchmarks use; the
// vector variants show whether vec4 locals stay in registers.
#define T f16vec4
#define S float16_t
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer O { T o[]; };
layout(push_constant) uniform P { uint iters; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  T a = T(S(0.9990234375)), b = T(S(0.0009765625) * S(gl_LocalInvocationID.x & 7u));
  T c0 = T(S(0) * S(0.125));
  T c1 = T(S(1) * S(0.125));
  T c2 = T(S(2) * S(0.125));
  T c3 = T(S(3) * S(0.125));
  T c4 = T(S(4) * S(0.125));
  T c5 = T(S(5) * S(0.125));
  T c6 = T(S(6) * S(0.125));
  T c7 = T(S(7) * S(0.125));
  for (uint n = 0; n < pc.iters; ++n) {
    c0 = a * c0 + b; c1 = a * c1 + b; c2 = a * c2 + b; c3 = a * c3 + b;
    c4 = a * c4 + b; c5 = a * c5 + b; c6 = a * c6 + b; c7 = a * c7 + b;
  }
  o[i] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7;
}
