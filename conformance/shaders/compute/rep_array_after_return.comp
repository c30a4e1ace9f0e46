#version 450
// A private array in rep layout after a uniform early return (the shape that faulted on
// an under-aligned slot: the array stays in memory there, and its stores are aligned).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint rows; } pc;
void main() {
  uint row = gl_WorkGroupID.x;
  if (row >= pc.rows) return;
  uint base = row * 4096u + gl_LocalInvocationID.x;
  float v[16];
  for (uint k = 0; k < 16u; ++k) v[k] = x[base + 256u * k];
  for (uint k = 0; k < 16u; ++k) y[base + 256u * k] = v[k] * 2.0 + float(k);
}
