#version 450
// exp and exp2 per invocation (vector code, lower/vector_exp.cpp) over a sweep of inputs;
// test_jit_compute.cpp measures the error in ULP against a double-precision reference.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer E { float e[]; };
layout(set = 0, binding = 2) writeonly buffer E2 { float e2[]; };
layout(push_constant) uniform P { uint n; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  e[i] = exp(x[i]);
  e2[i] = exp2(x[i]);
}
