#version 450
// Divergent loops, breaks, continues, a switch and a function call: each invocation
// counts Collatz steps of its index (capped), then classifies the count.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Out { uint steps[]; } o;
layout(set = 0, binding = 1) buffer Out2 { uint kinds[]; } o2;

uint classify(uint s) {
  switch (s % 4u) {
    case 0u: return 10u;
    case 1u: return 20u;
    case 3u: return 40u;
    default: break;
  }
  return 30u;
}

void main() {
  uint i = gl_GlobalInvocationID.x;
  uint v = i + 1u;
  uint s = 0u;
  while (v != 1u) {
    if (s >= 200u) break;
    s++;
    if ((v & 1u) == 0u) { v >>= 1u; continue; }
    v = 3u * v + 1u;
  }
  o.steps[i] = s;
  o2.kinds[i] = classify(s);
}
