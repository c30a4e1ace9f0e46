#version 450
#extension GL_KHR_shader_subgroup_ballot : require
// subgroupBroadcastDynamicId: subgroupBroadcast with an id that is not a constant but is
// dynamically uniform (SPIR-V 1.5+), here read from a push constant and computed per loop trip.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint o[]; };
layout(push_constant) uniform Push { uint lane; } pc;
void main() {
  uint v = gl_GlobalInvocationID.x * 3u + 1u;
  uint acc = subgroupBroadcast(v, pc.lane);
  for (uint k = 1u; k < 4u; ++k) acc += subgroupBroadcast(v, (pc.lane + k) % gl_SubgroupSize) << (8u * k);
  o[gl_GlobalInvocationID.x] = acc;
}
