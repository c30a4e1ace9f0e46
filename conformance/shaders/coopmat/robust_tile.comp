#version 450
// cooperativeMatrixRobustBufferAccess (e2e_cooperative_matrix): one subgroup loads a
// 16x16 u32 tile starting at element `src` of its bound range and stores it at element
// `dst` of another, with row stride `ld`: rows past either range's end must read 0 and
// be dropped, never touch memory outside.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer S { uint s[]; };
layout(set = 0, binding = 1) writeonly buffer D { uint d[]; };
layout(push_constant) uniform P { uint src, dst, ld; } pc;
void main() {
  coopmat<uint, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, s, pc.src, pc.ld, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(m, d, pc.dst, pc.ld, gl_CooperativeMatrixLayoutRowMajor);
}
