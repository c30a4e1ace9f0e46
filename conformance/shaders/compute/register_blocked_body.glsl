// A register-blocked shared-memory GEMM (register_blocked.comp and
// register_blocked_subgroup.comp include this): C = A * B, row-major, fp32, M = N = 64 per
// workgroup, K from push constants. A 16x16 workgroup stages 64x8 of A and 8x64 of B per
// step; each invocation accumulates 4x4 outputs (rows ty + 16i, columns tx + 16j) in
// registers, 16 values carried round the K loop. Inputs are small integers, so every sum is
// exact and the test compares with ==.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint K; } pc;

shared float As[64][8];
shared float Bs[8][64];

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  uint row0 = gl_WorkGroupID.y * 64u, col0 = gl_WorkGroupID.x * 64u;
  uint N = gl_NumWorkGroups.x * 64u;
  float acc[4][4];
  for (uint i = 0; i < 4u; ++i)
    for (uint j = 0; j < 4u; ++j) acc[i][j] = 0.0;
  for (uint t = 0; t < pc.K; t += 8u) {
    for (uint l = 0; l < 2u; ++l) {
      uint e = tid + 256u * l;
      As[e / 8u][e % 8u] = a[(row0 + e / 8u) * pc.K + t + e % 8u];
      Bs[e / 64u][e % 64u] = b[(t + e / 64u) * N + col0 + e % 64u];
    }
    barrier();
    for (uint k = 0; k < 8u; ++k) {
      float av[4], bv[4];
      for (uint i = 0; i < 4u; ++i) av[i] = As[ty + 16u * i][k];
      for (uint j = 0; j < 4u; ++j) bv[j] = Bs[k][tx + 16u * j];
      for (uint i = 0; i < 4u; ++i)
        for (uint j = 0; j < 4u; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
#ifdef OBSERVES_SUBGROUP
  if (gl_SubgroupSize == 0u) acc[0][0] = -1.0;  // never: only makes the width observable
#endif
  for (uint i = 0; i < 4u; ++i)
    for (uint j = 0; j < 4u; ++j) c[(row0 + ty + 16u * i) * N + col0 + tx + 16u * j] = acc[i][j];
}
