#version 450
// 1-D sum (bench_reduce) through shared memory: each of 256 invocations adds 16 elements
// (strided by 256, so neighbouring invocations read neighbouring elements), then a tree
// of barrier-separated steps halves the 256 partial sums to one, which invocation 0 writes
// as the workgroup's partial. The host adds the partials. The grid is 2-D so that any n
// fits the 65535-workgroup limit of one axis.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Partial { float partial[]; };
layout(push_constant) uniform P { uint n; } pc;

const uint WG = 256, PER = 16;
shared float s[WG];

void main() {
  uint l = gl_LocalInvocationID.x;
  uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint base = wg * (WG * PER) + l;
  float acc = 0.0;
  for (uint k = 0; k < PER; ++k) {
    uint i = base + WG * k;
    if (i < pc.n) acc += x[i];
  }
  s[l] = acc;
  barrier();
  for (uint h = WG / 2u; h > 0u; h >>= 1) {
    if (l < h) s[l] += s[l + h];
    barrier();
  }
  if (l == 0u) partial[wg] = s[0];
}
