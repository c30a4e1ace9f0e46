#version 460
// Arrays and structs holding cooperative vectors (test_jit_coopvec.cpp): element and
// component access with constant, uniform and per-invocation indices, whole-array and
// struct copies, arrays passed to, changed by and returned from functions, a Private
// array written in divergent control flow, and constant arrays. Invocation i reads its
// a and b (length L) at (2i) * L and (2i + 1) * L and writes 8 vectors at (8i + k) * L.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint L = 8;
layout(std430, binding = 0) readonly buffer In { float x[]; } inb;
layout(std430, binding = 1) writeonly buffer Out { float x[]; } outb;
layout(push_constant) uniform P { uint pick; } pc;  // 2: a uniform index known only at run time

struct Tagged {
  float scale;
  coopvecNV<float, L> v[2];
  uint tag;
};

coopvecNV<float, L> priv[3];

coopvecNV<float, L>[2] make_pair(coopvecNV<float, L> x, coopvecNV<float, L> y) {
  coopvecNV<float, L> r[2] = {x + y, x - y};
  return r;
}
coopvecNV<float, L> sum3(coopvecNV<float, L> arr[3]) { return arr[0] + arr[1] + arr[2]; }
void twice(inout coopvecNV<float, L> arr[3]) {
  for (int k = 0; k < 3; ++k) arr[k] = arr[k] * 2.0;
}

void emit(uint i, uint k, coopvecNV<float, L> v) { coopVecStoreNV(v, outb.x, (i * 8 + k) * L * 4); }

void main() {
  const uint i = gl_GlobalInvocationID.x;
  coopvecNV<float, L> a, b;
  coopVecLoadNV(a, inb.x, (i * 2) * L * 4);
  coopVecLoadNV(b, inb.x, (i * 2 + 1) * L * 4);

  coopvecNV<float, L> arr[3] = {a, b, a - b};
  // 0: components through constant element indices.
  coopvecNV<float, L> o0;
  for (int j = 0; j < L; ++j) o0[j] = arr[1][j] * 3.0 + arr[2][j];
  emit(i, 0, o0);
  // 1: elements picked per invocation (each lane its own element), and a run-time uniform one.
  const uint d = i % 3;
  emit(i, 1, arr[d] + arr[(d + 1) % 3] * 4.0 + arr[pc.pick]);
  // 2: a per-invocation store, then the whole array read back.
  arr[d] = arr[d] * 10.0;
  emit(i, 2, arr[0] + arr[1] * 100.0 + arr[2] * 1000.0);
  // 3: a whole-array copy changed through an inout parameter; by value; a returned array.
  coopvecNV<float, L> copy[3] = arr;
  twice(copy);
  emit(i, 3, sum3(copy) - arr[0] + make_pair(a, b)[1]);
  // 4: a struct: copied, a component written through nested members.
  Tagged t;
  t.scale = float(i);
  t.v[0] = a;
  t.v[1] = b;
  t.tag = i * 7;
  Tagged u = t;
  u.v[1][0] = -1.0;
  emit(i, 4, u.v[0] * u.scale + u.v[1] + coopvecNV<float, L>(float(u.tag)) + t.v[1]);
  // 5: a Private array written in divergent control flow.
  priv[0] = coopvecNV<float, L>(float(i));
  if ((i & 1) == 0) priv[1] = a;
  else priv[1] = b;
  // (pc.pick is 2: a vector made from a uniform value, taking nothing away.)
  const coopvecNV<float, L> same[2] = {coopvecNV<float, L>(float(pc.pick)), coopvecNV<float, L>(2.0)};
  emit(i, 5, priv[0] + priv[1] + same[0] - same[1]);
  // 6: a constant array, element by a uniform loop counter.
  const coopvecNV<float, L> k2[2] = {coopvecNV<float, L>(1.0), coopvecNV<float, L>(2.0)};
  coopvecNV<float, L> acc = coopvecNV<float, L>(0.0);
  for (int k = 0; k < 2; ++k) acc += k2[k] * arr[k + 1];
  emit(i, 6, acc);
  // 7: arrays of arrays, an element chosen per invocation at both levels.
  coopvecNV<float, L> grid[2][2] = {{a, b}, {b, a + b}};
  emit(i, 7, grid[i & 1][(i >> 1) & 1] + grid[1][1]);
}
