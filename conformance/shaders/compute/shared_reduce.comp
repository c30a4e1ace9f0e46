#version 450
// Shared-memory tree reduction with barriers: one sum per workgroup of 128.
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer In { uint v[]; };
layout(set = 0, binding = 1) buffer Out { uint sums[]; };
shared uint tmp[128];
void main() {
  uint l = gl_LocalInvocationID.x;
  tmp[l] = v[gl_GlobalInvocationID.x];
  barrier();
  for (uint s = 64u; s > 0u; s >>= 1u) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier();
  }
  if (l == 0u) sums[gl_WorkGroupID.x] = tmp[0];
}
