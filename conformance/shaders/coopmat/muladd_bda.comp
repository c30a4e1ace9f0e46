#version 450
// Multiply-add through PhysicalStorageBuffer pointers (e2e_cooperative_matrix): the
// tiles' addresses come in push constants; otherwise as muladd_body.glsl for f16 -> f32
// 16x16x16 with tight rows.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0) in;
layout(buffer_reference, std430) readonly buffer H { float16_t v[]; };
layout(buffer_reference, std430) buffer F { float v[]; };
layout(push_constant) uniform P { H a; H b; F c; F d; } pc;
void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
  coopMatLoad(ma, pc.a.v, t * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, pc.b.v, t * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mc, pc.c.v, t * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(coopMatMulAdd(ma, mb, mc), pc.d.v, t * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
