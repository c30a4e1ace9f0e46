#version 450
// Division and remainder by a divisor from push constants, the same in every lane (ggml's
// element-wise shaders split flat indices into coordinates this way): lowered without
// per-lane division (lower_arith.cpp, udiv_by_uniform), and as addresses a lane pattern
// whose row must not cross a multiple of the divisor (lower_memory_fast.cpp,
// divide_by_uniform). test_jit_compute.cpp checks every output against C++.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Q { uint q[]; };
layout(set = 0, binding = 2) writeonly buffer R { uint r[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P { uint d; uint n; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  q[i] = x[i] / pc.d;
  r[i] = x[i] % pc.d;
  // An index split by d, column-major: lanes in one row of d read 2 apart (a window), and a row's end
  // moves them to the next column.
  y[i] = x[((i % pc.d) * 2u + i / pc.d) % pc.n];
}
