#version 450
// Two subgroups take turns at each step (lower_interleave.cpp) loading 8-bit A tiles into
// one matrix variable: the first loads tile s % 4 at step s, the second the tile the
// first loaded one step before. So the second looks for a tile the first packed into a
// copy it has since packed another tile into: the copy's tag must say so, and the second
// must pack the tile itself. test_jit_coopmat.cpp replays it.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
// BA is not readonly: a binding the shader may write keeps its tiles out of the dispatch's
// tile cache (lower_tile_cache.cpp), which would otherwise stand in for the sharing.
layout(set = 0, binding = 0) buffer BA { int8_t a[]; };            // four 16 x 32 tiles
layout(set = 0, binding = 1) readonly buffer BB { int8_t b[]; };   // one 32 x 16 tile
layout(set = 0, binding = 2) writeonly buffer BD { int d[]; };     // 16 x 16 per subgroup
layout(push_constant) uniform P { uint steps; } pc;
#define ROW gl_CooperativeMatrixLayoutRowMajor
void main() {
  coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[1];
  acc[0] = coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0);
  for (uint s = 0; s < pc.steps; ++s) {
    coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> ma[1];
    coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> mb[1];
    for (uint i = 0; i < 1; ++i) coopMatLoad(ma[i], a, ((s + 4 - gl_SubgroupID) % 4) * 512, 32, ROW);
    for (uint j = 0; j < 1; ++j) coopMatLoad(mb[j], b, 0, 16, ROW);
    acc[0] = coopMatMulAdd(ma[0], mb[0], acc[0]);
  }
  coopMatStore(acc[0], d, gl_SubgroupID * 256, 16, ROW);
}
