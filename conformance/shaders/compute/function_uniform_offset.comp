#version 450
// A uniform offset computed by a function (vk_cooperative_matrix_perf's coordToOffset), with
// the layout chosen by a specialization constant and the coordinates kept in a uvec2 read
// through its components: inlined, the constant branch folded and the vector promoted, the
// offset stays uniform and the load and store behind it are whole-vector accesses
// (test_uniformity.cpp checks the optimized IR has no gather or scatter).
layout(local_size_x = 64) in;
layout(constant_id = 0) const bool COL_MAJOR = false;
layout(set = 0, binding = 0) buffer B { float v[]; };
layout(push_constant) uniform P { uint n; } pc;

// An if / else, as glslang emits some ternaries: a branch on the constant once inlined.
uint offset_of(uint i, uint j, uint stride, bool col_major) {
  uint o;
  if (col_major)
    o = stride * j + i;
  else
    o = stride * i + j;
  return o;
}

float scaled(float x, float by) { return x * by + 1.0; }

void main() {
  uvec2 tile = uvec2(gl_WorkGroupID.x, 1u);
  uint base = offset_of(tile.x, tile.y, pc.n, COL_MAJOR);
  // A lane-varying offset through the same helper: consecutive lanes, consecutive elements.
  uint lane = COL_MAJOR ? offset_of(gl_LocalInvocationID.x, 0u, 0u, COL_MAJOR) : offset_of(0u, gl_LocalInvocationID.x, 0u, COL_MAJOR);
  uint i = base + lane;
  v[i] = scaled(v[i], 2.0);
}
