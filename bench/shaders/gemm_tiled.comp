#version 450
// The textbook shared-memory tiled SGEMM (bench_gemm): C = A * B, row-major, fp32, no
// cooperative matrices. Each 16x16 workgroup computes one 16x16 tile of C, one element
// per invocation; per step along K the workgroup stages a 16x16 tile of A and of B in
// shared memory (zero-filled at the edges), meets at a barrier, and accumulates.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; } pc;

const uint TILE = 16;
shared float As[TILE][TILE];
shared float Bs[TILE][TILE];

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint col = gl_WorkGroupID.x * TILE + tx;
  uint row = gl_WorkGroupID.y * TILE + ty;
  float acc = 0.0;
  for (uint t = 0; t < pc.K; t += TILE) {
    As[ty][tx] = (row < pc.M && t + tx < pc.K) ? a[row * pc.K + t + tx] : 0.0;
    Bs[ty][tx] = (t + ty < pc.K && col < pc.N) ? b[(t + ty) * pc.N + col] : 0.0;
    barrier();
    for (uint k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    barrier();
  }
  if (row < pc.M && col < pc.N) c[row * pc.N + col] = acc;
}
