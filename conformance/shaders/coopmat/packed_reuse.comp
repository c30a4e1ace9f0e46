#version 450
// The multiply-add's packed-operand caches (jit/src/coopmat/lower_coopmat_packed.cpp) against every
// kind of store that must refresh them: A tiles reloaded every other step (the odd steps
// reuse their packed copies), a whole-array store that swaps them, an element-wise result
// stored into one of them, a B tile reloaded every fourth step, and a variable whose loads
// feed two combinations (f32 and f16 accumulators: it gets no cache). test_jit_coopmat.cpp
// replays the same steps in double.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };  // 4 tiles of 16 x 16
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };  // 4 tiles of 16 x 16
layout(set = 0, binding = 2) writeonly buffer BD { float d[]; };     // acc0, acc1, acc2
layout(set = 0, binding = 3) writeonly buffer BE { float16_t e[]; }; // acc16
layout(push_constant) uniform P { uint steps; } pc;
const uint T = 256;
#define ROW gl_CooperativeMatrixLayoutRowMajor
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> mixed;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc0 = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc1 = acc0, acc2 = acc0;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc16 =
      coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float16_t(0.0));
  coopMatLoad(mb[0], b, 0, 16, ROW);
  coopMatLoad(mb[1], b, T, 16, ROW);
  coopMatLoad(mixed, a, 3 * T, 16, ROW);
  for (uint s = 0; s < pc.steps; ++s) {
    if (s % 2 == 0) {
      coopMatLoad(ma[0], a, ((s / 2) % 4) * T, 16, ROW);
      coopMatLoad(ma[1], a, ((s / 2 + 1) % 4) * T, 16, ROW);
    }
    acc0 = coopMatMulAdd(ma[0], mb[s % 2], acc0);
    acc1 = coopMatMulAdd(ma[1], mb[(s + 1) % 2], acc1);
    if (s % 3 == 1) {
      coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> swapped[2];
      swapped[0] = ma[1];
      swapped[1] = ma[0];
      ma = swapped;
      ma[0] = ma[0] * float16_t(2.0);
    }
    if (s % 4 == 3) coopMatLoad(mb[1], b, ((s / 4 + 2) % 4) * T, 16, ROW);
    acc2 = coopMatMulAdd(ma[0], mb[0], acc2);
    acc16 = coopMatMulAdd(mixed, mb[1], acc16);
    acc2 = coopMatMulAdd(mixed, mb[1], acc2);
  }
  coopMatStore(acc0, d, 0, 16, ROW);
  coopMatStore(acc1, d, T, 16, ROW);
  coopMatStore(acc2, d, 2 * T, 16, ROW);
  coopMatStore(acc16, e, 0, 16, ROW);
}
