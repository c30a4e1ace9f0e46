#version 450
// Every invocation adds its index to one counter and takes a ticket.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer C { uint total; uint tickets; uint maxv; } c;
layout(set = 0, binding = 1) buffer T { uint got[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  atomicAdd(c.total, i);
  got[i] = atomicAdd(c.tickets, 1u);
  atomicMax(c.maxv, i);
}
