#version 450
// A few microseconds of arithmetic per workgroup (bench_dispatch): d[i] is replaced by an
// integer hash iterated pc.iters times. Dispatches of many such workgroups are worth
// spreading over threads, and show whether a driver's threads are awake to take them.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer D { uint d[]; };
layout(push_constant) uniform P { uint iters; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint x = d[i];
  for (uint k = 0; k < pc.iters; ++k) x = (x ^ (x >> 15)) * 2654435761u + k;
  d[i] = x;
}
