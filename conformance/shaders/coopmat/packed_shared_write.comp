#version 450
// Several subgroups load the same two 8-bit A tiles and one B tile every step (so they
// interleave and share their packing, lower_interleave.cpp), and the last one rewrites the
// first A tile's first row before each of its loads: its load must see its own store, not
// a copy another subgroup packed before it. The other subgroups race with that store, so
// only the last one's results are checked (test_jit_coopmat.cpp replays it). The tiles are
// arrays indexed in loops, as a register block's are, so they stay matrix variables.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer BA { int8_t a[]; };            // two 16 x 32 tiles
layout(set = 0, binding = 1) readonly buffer BB { int8_t b[]; };   // one 32 x 16 tile
layout(set = 0, binding = 2) writeonly buffer BD { int d[]; };     // two 16 x 16 per subgroup
layout(push_constant) uniform P { uint steps; } pc;
#define ROW gl_CooperativeMatrixLayoutRowMajor
void main() {
  coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[2];
  for (uint i = 0; i < 2; ++i) acc[i] = coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0);
  const bool writer = gl_SubgroupID == gl_NumSubgroups - 1;
  for (uint s = 0; s < pc.steps; ++s) {
    if (writer && gl_SubgroupInvocationID < 32) a[gl_SubgroupInvocationID] = int8_t(int(s) - int(gl_SubgroupInvocationID));
    coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> ma[2];
    coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> mb[1];
    for (uint i = 0; i < 2; ++i) coopMatLoad(ma[i], a, i * 512, 32, ROW);
    for (uint j = 0; j < 1; ++j) coopMatLoad(mb[j], b, 0, 16, ROW);
    for (uint i = 0; i < 2; ++i) acc[i] = coopMatMulAdd(ma[i], mb[0], acc[i]);
  }
  for (uint i = 0; i < 2; ++i) coopMatStore(acc[i], d, gl_SubgroupID * 512 + i * 256, 16, ROW);
}
