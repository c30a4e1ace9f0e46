#version 450
// Matrices packed straight from the buffer they are loaded from (store_packed_from_buffer(),
// jit/src/coopmat/lower_coopmat_packed.cpp): A and B tiles loaded into variables whose loads feed
// nothing but multiply-adds, mixed with the stores that must still go to the variable: a B
// tile loaded upside down through a negative run-time stride (the packers take no negative
// stride, so that store happens plainly) and a splat stored into a B variable, each followed
// by multiply-adds that must see it. test_jit_coopmat.cpp replays the steps in double.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };  // 4 tiles of 16 x 16
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };  // 4 tiles of 16 x 16
layout(set = 0, binding = 2) writeonly buffer BD { float d[]; };     // acc0, acc1
// back_stride: -16 as a 32-bit pattern, the rows of a tile from the last one up
layout(push_constant) uniform P { uint steps, back_stride; } pc;
const uint T = 256;
#define ROW gl_CooperativeMatrixLayoutRowMajor
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc0 = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc1 = acc0;
  for (uint s = 0; s < pc.steps; ++s) {
    coopMatLoad(ma, a, (s % 4) * T, 16, ROW);
    if (s % 3 == 0)
      coopMatLoad(mb[0], b, (s % 4) * T + 15 * 16, pc.back_stride, ROW);
    else
      coopMatLoad(mb[0], b, (s % 4) * T, 16, ROW);
    if (s % 5 == 2)
      mb[1] = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(float16_t(s % 3));
    else
      coopMatLoad(mb[1], b, ((s + 1) % 4) * T, 16, ROW);
    acc0 = coopMatMulAdd(ma, mb[0], acc0);
    acc1 = coopMatMulAdd(ma, mb[1], acc1);
  }
  coopMatStore(acc0, d, 0, 16, ROW);
  coopMatStore(acc1, d, T, 16, ROW);
}
