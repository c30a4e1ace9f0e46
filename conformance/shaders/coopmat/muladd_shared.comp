#version 450
// Multiply-add through workgroup memory (e2e_cooperative_matrix): the workgroup copies
// its subgroups' f16 A and B tiles and f32 C tiles into shared arrays, each subgroup
// loads its matrices from there (B column-major), stores its result back into shared
// memory column-major, and the workgroup copies D out row-major.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
const uint T = 16, SUBGROUPS = 2;  // 16x16x16 tiles, two subgroups per workgroup
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) readonly buffer BC { float c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { float d[]; };
shared float16_t sa[SUBGROUPS * T * T], sb[SUBGROUPS * T * T];
shared float sc[SUBGROUPS * T * T];
void main() {
  uint base = gl_WorkGroupID.x * SUBGROUPS * T * T;
  for (uint i = gl_LocalInvocationIndex; i < SUBGROUPS * T * T; i += gl_WorkGroupSize.x) {
    sa[i] = a[base + i];
    // B's tile arrives row-major; shared memory holds it column-major.
    uint t = i / (T * T), r = (i / T) % T, col = i % T;
    sb[t * T * T + col * T + r] = b[base + i];
    sc[i] = c[base + i];
  }
  barrier();
  uint s = gl_SubgroupID * T * T;
  coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseB> mb;
  coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> mc;
  coopMatLoad(ma, sa, s, T, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, sb, s, T, gl_CooperativeMatrixLayoutColumnMajor);
  coopMatLoad(mc, sc, s, T, gl_CooperativeMatrixLayoutRowMajor);
  mc = coopMatMulAdd(ma, mb, mc);
  barrier();
  coopMatStore(mc, sc, s, T, gl_CooperativeMatrixLayoutColumnMajor);
  barrier();
  for (uint i = gl_LocalInvocationIndex; i < SUBGROUPS * T * T; i += gl_WorkGroupSize.x) {
    uint t = i / (T * T), r = (i / T) % T, col = i % T;
    d[base + i] = sc[t * T * T + col * T + r];
  }
}
