#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
// One result per invocation for several subgroup operation classes; odd invocations
// sit out the arithmetic to test inactive lanes.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out {
  uint sum[64]; uint incl[64]; uint excl[64]; uint bcount[64]; uint first[64];
  uint shuf[64]; uint maxv[64]; uint elect_[64]; uint sgsize[64];
} o;
void main() {
  uint l = gl_LocalInvocationID.x;
  uint v = l * 3u + 1u;
  o.sgsize[l] = gl_SubgroupSize;
  if ((l & 1u) == 0u) {
    o.sum[l] = subgroupAdd(v);
    o.incl[l] = subgroupInclusiveAdd(v);
    o.excl[l] = subgroupExclusiveAdd(v);
    o.maxv[l] = subgroupMax(v);
    o.elect_[l] = subgroupElect() ? 1u : 0u;
  }
  uvec4 b = subgroupBallot(l % 3u == 0u);
  o.bcount[l] = subgroupBallotBitCount(b);
  o.first[l] = subgroupBroadcastFirst(v);
  o.shuf[l] = subgroupShuffleXor(v, 1u);
}
