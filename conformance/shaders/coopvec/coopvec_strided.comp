#version 460
// Cooperative-vector loads and stores whose lanes' vectors sit at a common stride
// (test_jit_coopvec.cpp): back to back, padded, overlapping, the same for every lane,
// in reverse lane order, and with some lanes not running. Invocation i loads at element
// (rev ? 31 - i : i) * pc.s and stores its vector plus 1, kept within [-20, 24] (f16 max,
// min and clamp), at element (rev ? 31 - i : i) * pc.t.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint L = 8;
layout(set = 0, binding = 0) readonly buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) writeonly buffer Out { float16_t y[]; } outb;
layout(push_constant) uniform P { uint s, t, rev, skip; } pc;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i % 8 == pc.skip) return;  // pc.skip >= 8: every lane runs
  const uint j = pc.rev != 0 ? 31 - i : i;
  coopvecNV<float16_t, L> v;
  coopVecLoadNV(v, inb.x, j * pc.s * 2);
  const coopvecNV<float16_t, L> lo = coopvecNV<float16_t, L>(float16_t(-20.0));
  const coopvecNV<float16_t, L> w = max(v + coopvecNV<float16_t, L>(float16_t(1.0)), lo);
  coopVecStoreNV(min(clamp(w, lo, coopvecNV<float16_t, L>(float16_t(25.0))), coopvecNV<float16_t, L>(float16_t(24.0))),
                 outb.y, j * pc.t * 2);
}
