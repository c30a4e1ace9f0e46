#version 450
// Uniform and divergent control flow nested in each other (uniformity.h): one output per
// invocation for each of the four shapes, checked against shader_references.h.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { int o[]; };
layout(push_constant) uniform P { int n; int flag; } pc;
shared int ring[64];

void main() {
  int lid = int(gl_LocalInvocationID.x);
  int base = int(gl_WorkGroupID.x) * 64 * 5 + lid;
  // 1. A divergent branch inside a uniform loop.
  int a = 0;
  for (int i = 0; i < pc.n; ++i) {
    if ((lid + i) % 3 == 0) a += i;
    else a -= 1;
  }
  o[base] = a;
  // 2. A uniform branch (and a uniform loop) inside a divergent one.
  int b = -5;
  if (lid % 2 == 1) {
    if (pc.flag != 0) b = lid * 2;
    else b = 7;
    for (int j = 0; j < 4; ++j) b += j;
  }
  o[base + 64] = b;
  // 3. A loop on a uniform condition with a divergent break.
  int c = 0, i = 0;
  for (; i < 16; ++i) {
    if (i > lid % 16) break;
    c += i;
  }
  o[base + 128] = c * 100 + i;
  // 4. Some lanes return; the others run a uniform loop with barriers.
  if (lid >= 48) {
    o[base + 192] = -1;
    o[base + 256] = -1;
    return;
  }
  int d = lid;
  for (int k = 0; k < 4; ++k) {
    ring[lid] = d;
    barrier();
    d = ring[(lid + 1) % 48] + k;
    barrier();
  }
  o[base + 192] = d;
  o[base + 256] = pc.n + pc.flag;
}
