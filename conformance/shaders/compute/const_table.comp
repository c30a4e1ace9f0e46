#version 450
// A constant table indexed per invocation (test_jit_compute.cpp): glslang keeps it in a
// Function variable initialized with the constant and stores the constant again; the
// JIT shares one read-only copy among the lanes (lower_memory.cpp, constant_table_var).
// A second table of structs, indexed by a uniform value, stays in rep layout.
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer I { uint idx[]; };
layout(set = 0, binding = 1) writeonly buffer O { uvec2 o[]; };
struct S { uint16_t a; float b; uvec2 c; };
const uvec2 grid[16] = uvec2[](uvec2(1, 2), uvec2(3, 5), uvec2(8, 13), uvec2(21, 34), uvec2(55, 89), uvec2(144, 233),
                               uvec2(377, 610), uvec2(987, 1597), uvec2(2584, 4181), uvec2(6765, 10946),
                               uvec2(17711, 28657), uvec2(46368, 75025), uvec2(0xFFFFFFFFu, 7), uvec2(9, 0x80000000u),
                               uvec2(11, 12), uvec2(13, 14));
const S structs[3] = S[](S(uint16_t(1), 0.5, uvec2(7, 8)), S(uint16_t(65535), 2.75, uvec2(9, 10)),
                         S(uint16_t(3), 4.25, uvec2(11, 12)));
void main() {
  uint i = gl_GlobalInvocationID.x;
  uvec2 g = grid[idx[i] & 15u];
  S s = structs[gl_WorkGroupID.x % 3u];
  S t = structs[idx[i] % 3u];
  o[i] = g + uvec2(uint(s.a) + uint(s.b * 4.0), s.c.y) + uvec2(t.c.x, uint(t.a));
}
