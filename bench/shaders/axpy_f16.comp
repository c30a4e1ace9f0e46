#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
// Element-wise z = a * x + y over n float16_t values, fp16 arithmetic (bench_elementwise
// axpy_f16); needs shaderFloat16 and storageBuffer16BitAccess. `a` arrives as a float
// (16-bit push constants would need one more feature) and is narrowed once.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X { float16_t x[]; };
layout(set = 0, binding = 1) readonly buffer Y { float16_t y[]; };
layout(set = 0, binding = 2) writeonly buffer Z { float16_t z[]; };
layout(push_constant) uniform P { float a; uint n; } pc;
void main() {
  uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
  if (i < pc.n) z[i] = float16_t(pc.a) * x[i] + y[i];
}
