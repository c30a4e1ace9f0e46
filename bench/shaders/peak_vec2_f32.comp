#version 450
#extension GL_GOOGLE_include_directive : require
// Peak throughput (f32): 4 chains of vec2, 8 components live (peak_body.glsl).
#define T vec2
#define S float
#define W 2
#include "peak_body.glsl"
