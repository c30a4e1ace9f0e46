#version 450
// One link of a chain of dependent dispatches (e2e_dispatch_chain): every invocation reads
// two elements of src, which other workgroups of the dispatch before wrote (one its
// neighbour's, one far away), hashes them for a while (so that a workgroup lasts long
// enough to be still running on another thread when a wrong next link starts), and writes
// one element of dst. A dispatch that started before the one before it had finished, or
// whose writes were not all visible to the next, changes the chain's result.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer S { uint s[]; };
layout(set = 0, binding = 1) writeonly buffer D { uint d[]; };
layout(push_constant) uniform P {
  uint step;  // the link's index
  uint m;     // elements in each buffer
} pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint a = s[(i + 1) % pc.m];
  uint b = s[(i * 7 + pc.step) % pc.m];
  uint x = (a * 2654435761u) ^ (b + pc.step);
  for (uint k = 0; k < 48; ++k) x = (x ^ (x >> 15)) * 2246822519u + k;
  d[i] = x;
}
