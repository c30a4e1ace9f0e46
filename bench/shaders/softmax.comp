#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
// Row-wise softmax (bench_softmax): y = exp(x - max(x)) / sum(exp(x - max(x))) over rows of
// 4096 floats, one 256-invocation workgroup per row, 16 elements per invocation (strided
// by 256) held in a local array between the passes. Both reductions are subgroupMax /
// subgroupAdd, then one shared slot per subgroup, which every invocation reads back in the
// same order (so all of them agree on the max and the sum).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint rows; } pc;

const uint WG = 256, COLS = 4096, PER = COLS / WG;
shared float row_max[WG], row_sum[WG];  // one slot per subgroup

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= pc.rows) return;  // the whole workgroup leaves: no barrier is skipped by part of it
  uint base = row * COLS + gl_LocalInvocationID.x;
  float v[PER];
  float m = uintBitsToFloat(0xFF800000u);  // -infinity
  for (uint k = 0; k < PER; ++k) {
    v[k] = x[base + WG * k];
    m = max(m, v[k]);
  }
  m = subgroupMax(m);
  if (gl_SubgroupInvocationID == 0u) row_max[gl_SubgroupID] = m;
  barrier();
  m = row_max[0];
  for (uint j = 1u; j < gl_NumSubgroups; ++j) m = max(m, row_max[j]);

  float s = 0.0;
  for (uint k = 0; k < PER; ++k) {
    v[k] = exp(v[k] - m);
    s += v[k];
  }
  s = subgroupAdd(s);
  if (gl_SubgroupInvocationID == 0u) row_sum[gl_SubgroupID] = s;
  barrier();
  s = 0.0;
  for (uint j = 0u; j < gl_NumSubgroups; ++j) s += row_sum[j];
  for (uint k = 0; k < PER; ++k) y[base + WG * k] = v[k] / s;
}
