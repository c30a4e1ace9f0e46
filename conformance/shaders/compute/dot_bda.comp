#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_integer_dot_product : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Buffer device addresses from push constants, and packed / vector integer dot products.
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant) uniform P { Words src; Words dst; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint a = pc.src.v[i];
  uint b = pc.src.v[i + 64u];
  int sdot = dotPacked4x8EXT(int(a), int(b));            // signed x signed
  uint udot = dotPacked4x8EXT(a, b);                      // unsigned x unsigned
  int acc = dotPacked4x8AccSatEXT(int(a), int(b), 2147483000);  // saturates near INT_MAX
  pc.dst.v[i * 3u] = uint(sdot);
  pc.dst.v[i * 3u + 1u] = udot;
  pc.dst.v[i * 3u + 2u] = uint(acc);
}
