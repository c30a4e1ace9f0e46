#version 460
// Cooperative-vector loads and stores at the end of a bound range, under robust buffer
// access (test_jit_coopvec.cpp): components outside read zero and are not written.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint L = 8;
layout(set = 0, binding = 0) buffer In { float x[]; } inb;
layout(set = 0, binding = 1) buffer Out { float y[]; } outb;
void main() {
  uint i = gl_GlobalInvocationID.x;
  coopvecNV<float, L> v;
  coopVecLoadNV(v, inb.x, i * L * 4);
  coopVecStoreNV(v + coopvecNV<float, L>(1.0), outb.y, i * L * 4);
}
