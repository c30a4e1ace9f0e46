#version 450
// Each workgroup records its absolute id and the dispatch's group counts, plus a tag
// from a uniform buffer: checks vkCmdDispatchBase, vkCmdDispatchIndirect and UBOs.
layout(local_size_x = 4, local_size_y = 2, local_size_z = 1) in;
layout(set = 0, binding = 0) buffer Out { uint ids[]; };
layout(set = 0, binding = 1) uniform U { uint tag; } u;
void main() {
  uvec3 w = gl_WorkGroupID;
  uint slot = (w.z * 8u + w.y) * 8u + w.x;  // ids below 8 in each dimension
  if (gl_LocalInvocationIndex == 0u) {
    ids[slot * 2u] = u.tag + w.x + 100u * w.y + 10000u * w.z;
    ids[slot * 2u + 1u] = gl_NumWorkGroups.x + 100u * gl_NumWorkGroups.y + 10000u * gl_NumWorkGroups.z;
  }
}
