#version 450
#extension GL_GOOGLE_include_directive : require
// Peak throughput (i32): 8 chains of scalars, 8 components live (peak_body.glsl).
#define T int
#define S int
#define W 1
#define INTEGER
#include "peak_body.glsl"
