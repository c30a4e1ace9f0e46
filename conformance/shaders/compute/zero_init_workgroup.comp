#version 450
#extension GL_EXT_null_initializer : require
// shaderZeroInitializeWorkgroupMemory: workgroup variables with a null initializer ({})
// read as zero at the start of every workgroup, although the workgroup run before it on
// the same thread left them non-zero.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint bad[]; };
struct S { float f; uint u[3]; vec4 v; };
shared uint words[64] = {};
shared S s = {};
shared double d = {};
void main() {
  uint l = gl_LocalInvocationID.x;
  uint nonzero = 0u;
  if (words[(l + 1u) % 64u] != 0u) nonzero |= 1u;
  if (s.f != 0.0 || s.u[l % 3u] != 0u || s.v != vec4(0.0)) nonzero |= 2u;
  if (d != 0.0) nonzero |= 4u;
  barrier();
  // Leave everything non-zero for whichever workgroup runs next.
  words[l] = gl_WorkGroupID.x + 1u;
  if (l == 0u) { s.f = 1.0; s.u = uint[3](1u, 2u, 3u); s.v = vec4(1.0); d = 2.0; }
  barrier();
  bad[gl_GlobalInvocationID.x] = nonzero;
}
