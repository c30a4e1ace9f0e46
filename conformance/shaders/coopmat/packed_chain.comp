#version 450
// Two multiply-adds that share A and accumulate into one matrix, then a third with the same
// A into another, every step. The tiles are arrays indexed at run time, so they stay in
// memory as a register block's do, and pair_muladds() fuses the first two calls into
// one whose second half reads what the first half wrote. test_jit_coopmat.cpp replays it in
// double.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };  // 4 tiles of 16 x 16
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };  // 4 tiles of 16 x 16
layout(set = 0, binding = 2) writeonly buffer BD { float d[]; };     // acc[which], acc[1 - which]
layout(push_constant) uniform P { uint steps, which; } pc;
const uint T = 256;
#define ROW gl_CooperativeMatrixLayoutRowMajor
void main() {
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[2];
  acc[0] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  acc[1] = acc[0];
  const uint w = pc.which, o = 1 - pc.which;
  for (uint s = 0; s < pc.steps; ++s) {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
    for (uint i = 0; i < 2; ++i) coopMatLoad(ma[i], a, ((s + i) % 4) * T, 16, ROW);
    for (uint j = 0; j < 2; ++j) coopMatLoad(mb[j], b, ((s + j) % 4) * T, 16, ROW);
    for (uint j = 0; j < 2; ++j) acc[w] = coopMatMulAdd(ma[w], mb[j], acc[w]);
    acc[o] = coopMatMulAdd(ma[w], mb[1], acc[o]);
  }
  coopMatStore(acc[w], d, 0, 16, ROW);
  coopMatStore(acc[o], d, T, 16, ROW);
}
