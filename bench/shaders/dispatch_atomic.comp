#version 450
// Adds pc.add to element gl_GlobalInvocationID.x of a small buffer atomically
// (bench_dispatch): dispatches of it need no barrier between them to give an exact sum.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer D { uint d[]; };
layout(push_constant) uniform P { uint add; } pc;
void main() { atomicAdd(d[gl_GlobalInvocationID.x], pc.add); }
