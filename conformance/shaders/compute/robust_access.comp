#version 450
// Out-of-bounds buffer accesses under robustBufferAccess (e2e_robust_buffer_access): reads
// past the bound range by divergent and uniform indices, a struct read from a uniform
// buffer past its range, and stores past the range of the output.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { uint v[]; } src;
layout(set = 0, binding = 1) writeonly buffer Out { uint o[]; } dst;
layout(set = 0, binding = 2) uniform U { uvec4 u[4]; } ubo;
layout(push_constant) uniform P { uint far; } pc;
void main() {
  uint i = gl_LocalInvocationID.x;
  uint a = src.v[i * 8u];   // past the end from lane 32 on
  uint b = src.v[pc.far];   // one uniform index, far past the end
  uvec4 c = ubo.u[i % 8u];  // past the end for i % 8 >= 4
  dst.o[i] = a;
  dst.o[64u + i] = b;
  dst.o[128u + i] = c.x + c.y + c.z + c.w;
  dst.o[192u + i * 4u] = 0xC0DE0000u + i;  // past the end from lane 2 on (range 200 uints)
}
