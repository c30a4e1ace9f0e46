#version 450
#extension GL_EXT_scalar_block_layout : require
// uniformBufferStandardLayout: a uniform block laid out by std430 rules, which std140 forbids
// (float and vec2 arrays at strides 4 and 8, an 8-byte struct not rounded up to 16). The
// extension only lets glslang write std430 for a uniform block; the module is validated with
// --uniform-buffer-standard-layout alone, so nothing beyond that feature is needed.
layout(local_size_x = 16) in;
struct P { float x; uint y; };
layout(std430, set = 0, binding = 0) uniform U {
  float f[16];  // offset 0, stride 4
  vec2 v[4];    // offset 64, stride 8
  P p[4];       // offset 96, stride 8
  uint tail;    // offset 128
} u;
layout(set = 0, binding = 1) buffer O { float o[]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  o[i * 4u + 0u] = u.f[i];
  o[i * 4u + 1u] = u.v[i % 4u].y;
  o[i * 4u + 2u] = u.p[i % 4u].x + float(u.p[i % 4u].y);
  o[i * 4u + 3u] = float(u.tail);
}
