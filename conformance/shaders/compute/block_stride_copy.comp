#version 450
// A tile copied by a block-stride loop, `for (i = tid; i < n; i += workgroup size)`, the way
// staged GEMMs and ggml's shaders copy tiles into shared memory: the loop counter keeps its
// lane pattern from round to round (test_uniformity.cpp checks the results, and that the
// copies are whole-register windows rather than gathers and scatters).
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint ROWS = 16;
layout(set = 0, binding = 0) buffer B { vec4 v[]; };
layout(push_constant) uniform P { uint row_stride; } pc;  // in vec4s
shared vec4 tile[ROWS * 9];

void main() {
  for (uint i = gl_LocalInvocationIndex; i < ROWS * 8u; i += 64u) {
    uint r = i / 8u, x = i % 8u;
    tile[r * 9u + x] = v[(gl_WorkGroupID.x * ROWS + r) * pc.row_stride + x] * 3.0;
  }
  barrier();
  for (uint i = gl_LocalInvocationIndex; i < ROWS * 8u; i += 64u) {
    uint r = i / 8u, x = i % 8u;
    v[(gl_WorkGroupID.x * ROWS + r) * pc.row_stride + x] = tile[((r + 1u) % ROWS) * 9u + x] + vec4(1.0);
  }
}
