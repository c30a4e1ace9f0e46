#version 450
// A register-blocked SGEMM written the way GPU SGEMMs usually are, unlike gemm_blocked.comp
// (bench_gemm gemm_blocked8 128): C = A * B, row-major, fp32. A 16x16 workgroup computes a
// 128x128 tile of C; each invocation owns a contiguous 8x8 block of it (rows 8*ty..8*ty+7,
// columns 8*tx..8*tx+7) in acc[8][8], so neighbouring invocations are 8 elements apart.
// Per step along K the workgroup stages A transposed (As[k][m]) and B (Bs[k][n]) through
// shared memory with vec4 loads, 8 deep; each invocation reads its 8 A and 8 B values as
// two vec4s each. The edges are zero-filled; M, N, K are any size.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; } pc;

const uint BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
shared vec4 As[BK][BM / 4];
shared vec4 Bs[BK][BN / 4];

float at_a(uint r, uint k) { return (r < pc.M && k < pc.K) ? a[r * pc.K + k] : 0.0; }
float at_b(uint k, uint n) { return (k < pc.K && n < pc.N) ? b[k * pc.N + n] : 0.0; }

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = gl_LocalInvocationIndex;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  float acc[TM][TN];
  for (uint i = 0; i < TM; ++i)
    for (uint j = 0; j < TN; ++j) acc[i][j] = 0.0;
  for (uint t = 0; t < pc.K; t += BK) {
    // A: 128 rows x 8 k = 256 vec4s of 4 rows each at one k, one per invocation.
    {
      uint k = tid % BK, r = (tid / BK) * 4u;
      As[k][r / 4u] = vec4(at_a(row0 + r, t + k), at_a(row0 + r + 1u, t + k), at_a(row0 + r + 2u, t + k),
                           at_a(row0 + r + 3u, t + k));
    }
    // B: 8 k x 128 columns = 256 vec4s, one per invocation.
    {
      uint k = tid / (BN / 4u), n = (tid % (BN / 4u)) * 4u;
      Bs[k][n / 4u] = vec4(at_b(t + k, col0 + n), at_b(t + k, col0 + n + 1u), at_b(t + k, col0 + n + 2u),
                           at_b(t + k, col0 + n + 3u));
    }
    barrier();
    for (uint k = 0; k < BK; ++k) {
      vec4 a0 = As[k][ty * 2u], a1 = As[k][ty * 2u + 1u];
      vec4 b0 = Bs[k][tx * 2u], b1 = Bs[k][tx * 2u + 1u];
      float av[TM] = float[](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w);
      float bv[TN] = float[](b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w);
      for (uint i = 0; i < TM; ++i)
        for (uint j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
  for (uint i = 0; i < TM; ++i)
    for (uint j = 0; j < TN; ++j) {
      uint r = row0 + ty * TM + i, cc = col0 + tx * TN + j;
      if (r < pc.M && cc < pc.N) c[r * pc.N + cc] = acc[i][j];
    }
}
