#version 450
// A register-blocked shared-memory SGEMM of the kind production GEMM shaders use
// (bench_gemm gemm_blocked 64): C = A * B, row-major, fp32. A 16x16 workgroup computes a
// 64x64 tile of C; each invocation accumulates a 4x4 block of it in `acc[4][4]` (rows
// ty + 16i, columns tx + 16j, so that neighbouring invocations touch neighbouring
// elements). Per step along K the workgroup stages a 64x16 tile of A and a 16x64 tile of
// B in shared memory (zero-filled at the edges). Every inner loop has a constant trip
// count: a compiler that unrolls them keeps acc, av and bv in registers.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; } pc;

const uint BM = 64, BN = 64, BK = 16;
shared float As[BM][BK];
shared float Bs[BK][BN];

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  float acc[4][4];
  for (uint i = 0; i < 4u; ++i)
    for (uint j = 0; j < 4u; ++j) acc[i][j] = 0.0;
  for (uint t = 0; t < pc.K; t += BK) {
    for (uint l = 0; l < 4u; ++l) {
      uint e = tid + 256u * l;  // 1024 elements in each tile, 4 per invocation
      uint ar = e / BK, ak = e % BK;
      As[ar][ak] = (row0 + ar < pc.M && t + ak < pc.K) ? a[(row0 + ar) * pc.K + t + ak] : 0.0;
      uint bk = e / BN, bc = e % BN;
      Bs[bk][bc] = (t + bk < pc.K && col0 + bc < pc.N) ? b[(t + bk) * pc.N + col0 + bc] : 0.0;
    }
    barrier();
    for (uint k = 0; k < BK; ++k) {
      float av[4], bv[4];
      for (uint i = 0; i < 4u; ++i) av[i] = As[ty + 16u * i][k];
      for (uint j = 0; j < 4u; ++j) bv[j] = Bs[k][tx + 16u * j];
      for (uint i = 0; i < 4u; ++i)
        for (uint j = 0; j < 4u; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
  for (uint i = 0; i < 4u; ++i)
    for (uint j = 0; j < 4u; ++j) {
      uint r = row0 + ty + 16u * i, cc = col0 + tx + 16u * j;
      if (r < pc.M && cc < pc.N) c[r * pc.N + cc] = acc[i][j];
    }
}
