#version 450
// Peak arithmetic throughput (vec4_i32): 8 independent chains of c = a * c + b per
// invocation, `iters` times (bench_peak). A SPIR-V shape GPU peak benchmarks use; the
// vector variants show whether vec4 locals stay in registers.
#define T ivec4
#define S int
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer O { T o[]; };
layout(push_constant) uniform P { uint iters; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  T a = T(int(gl_LocalInvocationID.x) | 1), b = T(3);
  T c0 = T(int(i) + 0);
  T c1 = T(int(i) + 1);
  T c2 = T(int(i) + 2);
  T c3 = T(int(i) + 3);
  T c4 = T(int(i) + 4);
  T c5 = T(int(i) + 5);
  T c6 = T(int(i) + 6);
  T c7 = T(int(i) + 7);
  for (uint n = 0; n < pc.iters; ++n) {
    c0 = a * c0 + b; c1 = a * c1 + b; c2 = a * c2 + b; c3 = a * c3 + b;
    c4 = a * c4 + b; c5 = a * c5 + b; c6 = a * c6 + b; c7 = a * c7 + b;
  }
  o[i] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7;
}
