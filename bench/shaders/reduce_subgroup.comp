#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
// 1-D sum (bench_reduce) through subgroup operations: each of 256 invocations adds 16
// elements (strided by 256) as in reduce_shared.comp, subgroupAdd sums each subgroup,
// one slot per subgroup in shared memory carries those across the workgroup, and the
// first subgroup adds the slots (again with subgroupAdd) into the workgroup's partial.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Partial { float partial[]; };
layout(push_constant) uniform P { uint n; } pc;

const uint WG = 256, PER = 16;
shared float s[WG];  // one per subgroup: enough for any subgroup size

void main() {
  uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint base = wg * (WG * PER) + gl_LocalInvocationID.x;
  float acc = 0.0;
  for (uint k = 0; k < PER; ++k) {
    uint i = base + WG * k;
    if (i < pc.n) acc += x[i];
  }
  float sum = subgroupAdd(acc);
  if (gl_SubgroupInvocationID == 0u) s[gl_SubgroupID] = sum;
  barrier();
  if (gl_SubgroupID == 0u) {
    float v = 0.0;
    for (uint j = gl_SubgroupInvocationID; j < gl_NumSubgroups; j += gl_SubgroupSize) v += s[j];
    v = subgroupAdd(v);
    if (gl_SubgroupInvocationID == 0u) partial[wg] = v;
  }
}
