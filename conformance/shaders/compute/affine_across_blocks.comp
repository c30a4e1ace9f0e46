#version 450
// The loop of a strided reduction (bench/shaders/reduce_subgroup.comp): a lane-affine index
// i = base + 64 * k is computed in one block and used for a load in another (inside the
// divergent `if`), so it goes through a slot. test_uniformity.cpp checks that the load is
// still one (masked) vector load in the optimized IR: no gather, no run-time address test.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { float v[]; };
layout(push_constant) uniform P { uint n; } pc;
void main() {
  uint base = gl_WorkGroupID.x * 256u + gl_LocalInvocationID.x;
  float acc = 0.0;
  for (uint k = 0; k < 4u; ++k) {
    uint i = base + 64u * k;
    if (i < pc.n) acc += v[i];
  }
  v[base] = acc;
}
