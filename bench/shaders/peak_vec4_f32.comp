#version 450
#extension GL_GOOGLE_include_directive : require
// Peak throughput (f32): 2 chains of vec4, 8 components live (peak_body.glsl).
#define T vec4
#define S float
#define W 4
#include "peak_body.glsl"
