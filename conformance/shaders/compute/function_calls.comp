#version 450
// Functions of every shape glslang emits calls for, each called the way real shaders call
// them (test_uniformity.cpp inlines them and checks each element against a C++ reference):
// in, out and inout parameters, a loop inside a callee, calls inside a loop, inside divergent
// control flow and inside another callee, and one callee with an early return, which stays
// a call.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { float v[]; };
layout(push_constant) uniform P { uint n; } pc;

uint offset_of(uint i, uint j, uint stride, bool col_major) { return col_major ? stride * j + i : stride * i + j; }

float poly(float x, int terms) {
  float s = 0.0;
  for (int k = 0; k < terms; ++k) s = s * x + float(k + 1);
  return s;
}

void accumulate(inout float acc, float x) { acc += x * 2.0; }

void split(float x, out float lo, out float hi) {
  lo = floor(x);
  hi = x - lo;
}

float clamp_early(float x) {
  if (x < 0.0) return 0.0;
  return x * 0.5;
}

float nested(float x) {
  float a = 1.0;
  accumulate(a, poly(x, 3));
  return a;
}

void main() {
  uint i = gl_GlobalInvocationID.x;
  float x = v[i];
  float acc = float(offset_of(2u, 3u, pc.n, false)) + float(offset_of(2u, 3u, pc.n, true));
  if (i % 3u == 0u) accumulate(acc, x);
  for (int k = 0; k < 4; ++k) acc += nested(x + float(k));
  float lo, hi;
  split(x, lo, hi);
  acc += lo * 3.0 + hi + clamp_early(x - 1.0);
  v[i] = acc;
}
