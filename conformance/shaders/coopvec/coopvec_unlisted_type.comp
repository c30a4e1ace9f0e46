#version 460
// A cooperative vector of int16 components, a type no VkCooperativeVectorPropertiesNV
// entry of coopvk names: pipeline creation must fail
// (VUID-RuntimeSpirv-OpTypeCooperativeVector-10095; e2e_cooperative_vector).
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint L = 8;
layout(set = 0, binding = 0) buffer In { int16_t x[]; } inb;
layout(set = 0, binding = 3) buffer Out { int16_t y[]; } outb;
void main() {
  coopvecNV<int16_t, L> v;
  coopVecLoadNV(v, inb.x, gl_GlobalInvocationID.x * 16);
  coopVecStoreNV(v + v, outb.y, gl_GlobalInvocationID.x * 16);
}
