#version 460
// Integer element-wise operations on cooperative vectors (test_jit_coopvec.cpp).
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint L = 8;
layout(set = 0, binding = 0) buffer In { int x[]; } inb;
layout(set = 0, binding = 1) buffer Out { int y[]; } outb;
coopvecNV<int, L> g;  // a Private variable, also written one component at a time

void main() {
  uint i = gl_GlobalInvocationID.x;
  coopvecNV<int, L> a, b;
  coopVecLoadNV(a, inb.x, i * 2 * L * 4);
  coopVecLoadNV(b, inb.x, i * 2 * L * 4 + L * 4);
  uint o = i * 5 * L * 4;
  coopvecNV<int, L> r = (a * b - a + b) / coopvecNV<int, L>(3) + (-b);
  coopVecStoreNV(r, outb.y, o);
  r = ((a & b) | (a ^ coopvecNV<int, L>(0x55))) + (~b) + (a << coopvecNV<int, L>(3)) + (b >> coopvecNV<int, L>(1));
  coopVecStoreNV(r, outb.y, o + L * 4);
  coopvecNV<uint, L> ua = coopvecNV<uint, L>(a), ub = coopvecNV<uint, L>(b);
  coopvecNV<uint, L> ur = ua / (ub | coopvecNV<uint, L>(1)) + (ua >> coopvecNV<uint, L>(28));
  coopVecStoreNV(ur, outb.y, o + 2 * L * 4);
  r = max(min(a, b), clamp(b, coopvecNV<int, L>(-7), coopvecNV<int, L>(9)));
  coopVecStoreNV(r, outb.y, o + 3 * L * 4);
  g = b;
  g[0] = 77;
  coopVecStoreNV(g + a, outb.y, o + 4 * L * 4);
}
