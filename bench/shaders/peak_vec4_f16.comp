#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Peak throughput (f16): 2 chains of vec4, 8 components live (peak_body.glsl).
#define T f16vec4
#define S float16_t
#define W 4
#include "peak_body.glsl"
