#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
// Subgroup operations on vectors work component by component.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uvec2 sums[64]; vec2 maxs[64]; uvec2 shuf[64]; } o;
void main() {
  uint l = gl_LocalInvocationID.x;
  o.sums[l] = subgroupInclusiveAdd(uvec2(l, 2u * l + 1u));
  o.maxs[l] = subgroupMax(vec2(float(l), -float(l)));
  o.shuf[l] = subgroupShuffleXor(uvec2(l, l * l), 3u);
}
