#version 450
// Vectors loaded per invocation at addresses a fixed number of bytes apart, as ggml's
// mat-vec shaders load them (lower_memory_fast.cpp: one wide load and shuffles instead of a
// gather per component): a vec4 per lane through (offset + 4*t) / 4, f16vec2 pairs 8 bytes
// apart, vec3 in a 16-byte std430 stride, an index that wraps below zero and back (only
// lanes t >= 1 read), a divergent tail, and a loop some lanes leave early whose counter
// addresses the loads inside it and is written after it (loop_close.h).
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P {
  uint n;       // invocations whose tail load runs
  uint wrap;    // added to 4*t before dividing: 0xFFFFFFFC makes lane t read element t-1
} p;
layout(set = 0, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(set = 0, binding = 1) readonly buffer H2 { f16vec2 h2[]; };
layout(set = 0, binding = 2) readonly buffer A3 { vec3 a3[]; };
layout(set = 0, binding = 3) writeonly buffer O { float o[]; };

void main() {
  const uint t = gl_LocalInvocationID.x, g = gl_WorkGroupID.x;
  const uint base = g * 64u * 4u;
  const uint gid = g * 64u + t;
  vec4 x = a4[(base + 4u * t) / 4u];
  vec2 y0 = vec2(h2[(base + 4u * t) / 2u]);
  vec2 y1 = vec2(h2[(base + 4u * t) / 2u + 1u]);
  vec3 z = a3[gid];
  float w = -1.0;
  if (t >= 1u) {
    vec4 q = a4[(p.wrap + 4u * (g * 64u + t)) / 4u];
    w = q.x + 2.0 * q.w;
  }
  float tail = -2.0;
  if (gid < p.n) tail = a4[gid].y;
  // Lanes leave after (t % 5) + 1 iterations.
  uint i = 0u;
  float acc = 0.0;
  for (; i < (t % 5u) + 1u; ++i) acc += a4[(base + 4u * i) / 4u + t].z;
  o[gid * 8u + 0u] = x.x + 2.0 * x.y + 4.0 * x.z + 8.0 * x.w;
  o[gid * 8u + 1u] = y0.x + 2.0 * y0.y;
  o[gid * 8u + 2u] = y1.x + 2.0 * y1.y;
  o[gid * 8u + 3u] = z.x + 2.0 * z.y + 4.0 * z.z;
  o[gid * 8u + 4u] = w;
  o[gid * 8u + 5u] = tail;
  o[gid * 8u + 6u] = acc;
  o[gid * 8u + 7u] = float(i);
}
