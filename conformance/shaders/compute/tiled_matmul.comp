#version 450
// Tiled matrix product C = A * B (uint, wrapping) through workgroup memory: each 16x16
// workgroup walks the whole K dimension in 16-wide steps, and every step has two
// barrier phases (tiles loaded -> tiles consumed), so a workgroup's subgroups meet at
// 2 * K / 16 barriers. A missing or broken barrier, or workgroups of different threads
// sharing workgroup memory, changes the result. M, N and K are multiples of 16.
layout(local_size_x = 16, local_size_y = 16) in;
layout(push_constant) uniform Dims { uint M, N, K; } dims;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };   // M x K, row-major
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };   // K x N, row-major
layout(set = 0, binding = 2) writeonly buffer C { uint c[]; };  // M x N, row-major
shared uint tile_a[16][16];
shared uint tile_b[16][16];
void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint row = gl_WorkGroupID.y * 16u + ty, col = gl_WorkGroupID.x * 16u + tx;
  uint acc = 0u;
  for (uint k0 = 0u; k0 < dims.K; k0 += 16u) {
    tile_a[ty][tx] = a[row * dims.K + k0 + tx];
    tile_b[ty][tx] = b[(k0 + ty) * dims.N + col];
    barrier();
    for (uint k = 0u; k < 16u; ++k) acc += tile_a[ty][k] * tile_b[k][tx];
    barrier();
  }
  c[row * dims.N + col] = acc;
}
