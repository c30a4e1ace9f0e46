#version 450
// GLSL.std.450 and core arithmetic on inputs x[i]; 32 results per invocation.
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) buffer Out { float f[]; };
layout(set = 0, binding = 2) buffer OutI { int k[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  float a = x[i];
  float b = x[i + 64u];
  uint o = i * 32u;
  f[o + 0u] = sqrt(abs(a));
  f[o + 1u] = inversesqrt(abs(a) + 1.0);
  f[o + 2u] = exp(a * 0.1);
  f[o + 3u] = log(abs(a) + 1.0);
  f[o + 4u] = pow(abs(a) + 0.5, 1.5);
  f[o + 5u] = sin(a);
  f[o + 6u] = cos(a);
  f[o + 7u] = atan(a, b);
  f[o + 8u] = floor(a);
  f[o + 9u] = fract(a);
  f[o + 10u] = clamp(a, -1.0, 2.0);
  f[o + 11u] = mix(a, b, 0.25);
  f[o + 12u] = step(b, a);
  f[o + 13u] = smoothstep(-1.0, 3.0, a);
  f[o + 14u] = fma(a, b, 1.0);
  f[o + 15u] = length(vec3(a, b, 1.0));
  f[o + 16u] = normalize(vec2(a, b + 4.0)).y;
  f[o + 17u] = cross(vec3(a, b, 1.0), vec3(1.0, a, b)).z;
  f[o + 18u] = ldexp(a, int(i % 5u) - 2);
  int e; f[o + 19u] = frexp(a + 10.0, e); k[o + 0u] = e;
  float w; f[o + 20u] = modf(a, w); f[o + 21u] = w;
  f[o + 22u] = reflect(vec2(a, b), vec2(0.6, 0.8)).x;
  f[o + 23u] = unpackUnorm4x8(packUnorm4x8(vec4(fract(a), 0.5, 1.0, 0.0))).x;
  f[o + 24u] = unpackHalf2x16(packHalf2x16(vec2(a, b))).y;
  f[o + 25u] = sign(a) * min(a, b) + max(a, b);
  f[o + 26u] = mod(a, 1.5);
  f[o + 27u] = a / (b + 100.0) - b * 0.5;
  int ia = int(a * 10.0), ib = int(b * 10.0);
  k[o + 1u] = findLSB(ia);
  k[o + 2u] = findMSB(ia);
  k[o + 3u] = bitCount(ia);
  k[o + 4u] = bitfieldExtract(ia, 3, 5);
  k[o + 5u] = bitfieldInsert(ia, ib, 4, 6);
  k[o + 6u] = bitfieldReverse(ia);
  k[o + 7u] = ib != 0 ? ia / ib : 0;
  k[o + 8u] = ib != 0 ? ia % ib : 0;
  k[o + 9u] = abs(ia) + sign(ib) + min(ia, ib) + max(ia, ib);
  k[o + 10u] = ia / (i > 1000u ? 1 : 0);  // division by zero: any value, never a trap
  k[o + 11u] = (ia << 3) ^ (ib >> 2);
}
