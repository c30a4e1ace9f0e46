#version 450
// Uniform loops with constant trip counts over a private array indexed by the loop
// counters (test_uniformity.cpp checks the optimized IR: unrolled, `acc` in registers,
// consecutive accesses as plain vector loads and stores, nothing masked or gathered).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { float v[]; };
void main() {
  uint g = gl_GlobalInvocationID.x;
  uint stride = 64u * gl_NumWorkGroups.x;
  float acc[4];
  for (uint i = 0; i < 4u; ++i) acc[i] = v[g + stride * i];
  for (uint k = 0; k < 8u; ++k)
    for (uint i = 0; i < 4u; ++i) acc[i] = acc[i] * 0.5 + float(k);
  for (uint i = 0; i < 4u; ++i) v[g + stride * i] = acc[i];
}
