#version 450
// The dispatch's tile cache (jit/src/coopmat/lower_tile_cache.cpp) must not serve a tile from a
// buffer that a writable binding of the same dispatch overlaps. Each step loads the same
// 8-bit A tile from the read-only binding 0, multiplies it, then flips the low bit of every
// byte of that tile through binding 2: where binding 2 is the same buffer as binding 0, the
// next step must see the flipped tile, not the one packed before. test_cooperative_matrix.cpp
// runs it with the buffers aliased and apart and replays the steps on the host.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer BA { int8_t a[]; };  // one 16 x 32 tile
layout(set = 0, binding = 1) readonly buffer BB { int8_t b[]; };  // one 32 x 16 tile
layout(set = 0, binding = 2) buffer BW { uint w[]; };             // binding 0's bytes, or others
layout(set = 0, binding = 3) writeonly buffer BD { int d[]; };    // 16 x 16
layout(push_constant) uniform P { uint steps, tiles; } pc;  // tiles: 1
void main() {
  coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
      coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0);
  for (uint s = 0; s < pc.steps; ++s) {
    // Arrays indexed at run time, as in a GEMM's register block: the JIT keeps them as
    // variables with packed copies (single matrices become SSA values and take another path).
    coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> ma[1];
    coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> mb[1];
    for (uint j = 0; j < pc.tiles; ++j) {
      coopMatLoad(ma[j], a, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
      coopMatLoad(mb[j], b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    }
    for (uint j = 0; j < pc.tiles; ++j) acc = coopMatMulAdd(ma[j], mb[j], acc);
    // (A trip count the same in every lane: a loop some lanes leave early would make the
    // matrix variables per-lane, which the packed path does not take.)
    for (uint i = 0; i < 128 / gl_SubgroupSize; ++i) w[i * gl_SubgroupSize + gl_SubgroupInvocationID] ^= 0x01010101u;
    controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
  }
  coopMatStore(acc, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
