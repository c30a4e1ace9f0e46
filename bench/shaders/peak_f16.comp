#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Peak throughput (f16): 8 chains of scalars, 8 components live (peak_body.glsl).
#define T float16_t
#define S float16_t
#define W 1
#include "peak_body.glsl"
