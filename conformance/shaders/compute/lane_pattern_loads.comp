#version 450
// Loads whose addresses follow a pattern of the lane that is not a stride, as ggml's
// quantized blocks make them (lower_memory_fast.cpp, load_window): four invocations per
// 18-byte block through col / 32 and col % 32, 16-bit values and the block's f16 scale,
// and a vec4 at (col - col % 32 + iqs) / 4. `off` not a multiple of 32 breaks the pattern's
// run-time condition (the division's base), which must still give the same results.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
struct Block {
  float16_t d;
  uint16_t qs[8];
};
layout(set = 0, binding = 0) readonly buffer Q { Block q[]; };
layout(set = 0, binding = 1) readonly buffer V { vec4 v[]; };
layout(set = 0, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform P { uint off; } p;

void main() {
  const uint gid = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  const uint col = p.off + 8u * gid;
  const uint ib = col / 32u;
  const uint iqs = (col % 32u) / 2u;
  const float d = float(q[ib].d);
  const uint w0 = uint(q[ib].qs[iqs / 2u]);
  const uint w1 = uint(q[ib].qs[iqs / 2u + 1u]);
  const vec4 b = v[(col - col % 32u + iqs) / 4u];
  o[gid * 4u + 0u] = d;
  o[gid * 4u + 1u] = float(w0);
  o[gid * 4u + 2u] = float(w1);
  o[gid * 4u + 3u] = b.x + 2.0 * b.y + 4.0 * b.z + 8.0 * b.w;
}
