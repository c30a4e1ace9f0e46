#version 450
// A uniform offset computed by a function (vk_cooperative_matrix_perf's coordToOffset):
// inlined, the offset stays uniform and the load and store behind it are whole-vector
// accesses (test_uniformity.cpp checks the optimized IR has no gather or scatter).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { float v[]; };
layout(push_constant) uniform P { uint n; } pc;

uint offset_of(uint i, uint j, uint stride, bool col_major) { return col_major ? stride * j + i : stride * i + j; }

float scaled(float x, float by) { return x * by + 1.0; }

void main() {
  uint base = offset_of(gl_WorkGroupID.x, 0u, pc.n, false);
  uint i = base + gl_LocalInvocationID.x;
  v[i] = scaled(v[i], 2.0);
}
