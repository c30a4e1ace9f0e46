#version 450
#extension GL_GOOGLE_include_directive : require
// Peak throughput (f32): 8 chains of scalars, 8 components live (peak_body.glsl).
#define T float
#define S float
#define W 1
#include "peak_body.glsl"
