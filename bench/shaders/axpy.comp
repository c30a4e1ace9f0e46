#version 450
// Element-wise z = a * x + y over n floats (bench_elementwise). The grid is 2-D because
// 16M invocations need more than 65535 workgroups of 256 along one axis.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(set = 0, binding = 2) writeonly buffer Z { float z[]; };
layout(push_constant) uniform P { float a; uint n; } pc;
void main() {
  uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i < pc.n) z[i] = pc.a * x[i] + y[i];
}
