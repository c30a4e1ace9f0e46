#version 450
// A 16x16 workgroup squares its 16x16 block of v through shared memory: each invocation
// reads row gl_LocalInvocationID.y of the tile, the way register-blocked GEMMs read their A
// tile. A subgroup of 32 holds two rows, so the row index is (32 * subgroup + lane) / 16 % 16,
// a lane pattern exact in every subgroup (test_uniformity.cpp checks that no gather is left
// for it, and the results).
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) buffer B { float v[]; };
shared float t[16][17];

void main() {
  uint x = gl_LocalInvocationID.x, y = gl_LocalInvocationID.y;
  uint base = gl_WorkGroupID.x * 256u;
  t[y][x] = v[base + y * 16u + x];
  barrier();
  float acc = 0.0;
  for (uint k = 0; k < 16u; ++k) acc += t[y][k] * t[k][x];
  v[base + y * 16u + x] = acc;
}
