#version 450
// A staging copy as tiled GEMMs write it: four invocations per 64-byte row, a vec4 each, rows
// a buffer stride (a specialization constant, as vk_cooperative_matrix_perf has it, or a push
// constant, as ggml has it) apart in the source and 80 bytes apart in shared memory (a skew), a
// barrier, then each invocation reads another invocation's vec4 back. test_uniformity.cpp
// checks the results and that the rows are copied as windows of whole-register loads and
// stores.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { vec4 v[]; };
layout(constant_id = 0) const uint ROW_STRIDE = 64;  // in vec4s
layout(constant_id = 1) const bool RUNTIME_STRIDE = false;  // the stride from push constants instead
layout(push_constant) uniform P { uint row_stride; } pc;
shared vec4 tile[16 * 5];

void main() {
  uint row = gl_LocalInvocationID.x / 4u, col = gl_LocalInvocationID.x % 4u;
  uint stride = RUNTIME_STRIDE ? pc.row_stride : ROW_STRIDE;
  uint src = (gl_WorkGroupID.x * 16u + row) * stride + col;
  tile[row * 5u + col] = v[src] * 2.0;
  barrier();
  uint other = (gl_LocalInvocationID.x + 4u) % 64u;
  uint orow = other / 4u, ocol = other % 4u;
  vec4 got = tile[orow * 5u + ocol];
  barrier();
  v[src] = got + vec4(float(gl_LocalInvocationID.x));
}
