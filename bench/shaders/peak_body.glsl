// The body of every peak_<variant>.comp (bench_peak): independent chains of c = a * c + b,
// `iters` times, over values of type T with W components of scalar type S, so that every
// variant keeps the same 8 scalar components live: 8 scalar chains, 4 of vec2, 2 of vec4.
// With a SIMD lane per invocation that is 8 vector registers of state in each variant
// (AVX2 has 16), so a vector variant can match the scalar one per component exactly when
// the JIT splits vector locals into per-component registers.
//
// The including file defines T, S, W, and INTEGER for the int32 variants. Component k of
// the 8 (component k % W of chain k / W) starts at k / 8 (floats) or at the invocation
// index + k (int32); the result is the sum of all 8, added one at a time in component
// order in every variant (fp16 rounds each addition; bench_peak.cpp's reference adds in
// the same order). Float constants are exact in fp16 (1 - 2^-10, 2^-10): glslang rounds
// a literal like float16_t(0.999) toward zero, which a reference would have to mimic.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer O { S o[]; };
layout(push_constant) uniform P { uint iters; } pc;

#ifdef INTEGER
#define START(k) (int(i) + (k))
#define A_VALUE (int(gl_LocalInvocationID.x) | 1)
#define B_VALUE 3
#else
#define START(k) (S(k) * S(0.125))
#define A_VALUE S(0.9990234375)
#define B_VALUE (S(0.0009765625) * S(gl_LocalInvocationID.x & 7u))
#endif

#if W == 1
#define INIT(k) T(START(k))
#define ADD_ALL(t, v) t += v;
#elif W == 2
#define INIT(k) T(START(k), START(k + 1))
#define ADD_ALL(t, v) t += v.x; t += v.y;
#else
#define INIT(k) T(START(k), START(k + 1), START(k + 2), START(k + 3))
#define ADD_ALL(t, v) t += v.x; t += v.y; t += v.z; t += v.w;
#endif

void main() {
  uint i = gl_GlobalInvocationID.x;
  T a = T(A_VALUE), b = T(B_VALUE);
  T c0 = INIT(0), c1 = INIT(W);
#if W <= 2
  T c2 = INIT(2 * W), c3 = INIT(3 * W);
#endif
#if W == 1
  T c4 = INIT(4), c5 = INIT(5), c6 = INIT(6), c7 = INIT(7);
#endif
  for (uint n = 0; n < pc.iters; ++n) {
    c0 = a * c0 + b; c1 = a * c1 + b;
#if W <= 2
    c2 = a * c2 + b; c3 = a * c3 + b;
#endif
#if W == 1
    c4 = a * c4 + b; c5 = a * c5 + b; c6 = a * c6 + b; c7 = a * c7 + b;
#endif
  }
  S t = S(0);
  ADD_ALL(t, c0) ADD_ALL(t, c1)
#if W <= 2
  ADD_ALL(t, c2) ADD_ALL(t, c3)
#endif
#if W == 1
  ADD_ALL(t, c4) ADD_ALL(t, c5) ADD_ALL(t, c6) ADD_ALL(t, c7)
#endif
  o[i] = t;
}
