#version 460
// Cooperative-vector loads and stores through PhysicalStorageBuffer and Workgroup
// pointers (test_jit_coopvec.cpp): each invocation passes its vector, doubled, to its
// neighbour through shared memory.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint L = 8;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Floats { float v[]; };
layout(push_constant) uniform P { Floats src; Floats dst; } pc;
shared float sh[16 * L];
void main() {
  uint i = gl_LocalInvocationID.x;
  coopvecNV<float, L> v;
  coopVecLoadNV(v, pc.src.v, i * L * 4);
  coopVecStoreNV(v * 2.0, sh, i * L * 4);
  barrier();
  coopvecNV<float, L> w;
  coopVecLoadNV(w, sh, ((i + 1) % 16) * L * 4);
  coopVecStoreNV(w, pc.dst.v, i * L * 4);
}
