#version 450
// dst = src * MUL + pc.add, element by element (bench_dispatch). Bound with src and dst the
// same buffer it updates in place; ping-ponging between two buffers, each dispatch reads
// what the one before wrote. MUL is a specialization constant, so that two pipelines differ.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MUL = 1;
layout(set = 0, binding = 0) buffer S { uint s[]; };
layout(set = 0, binding = 1) buffer D { uint d[]; };
layout(push_constant) uniform P { uint add; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  d[i] = s[i] * MUL + pc.add;
}
