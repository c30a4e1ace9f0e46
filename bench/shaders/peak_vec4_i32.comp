#version 450
#extension GL_GOOGLE_include_directive : require
// Peak throughput (i32): 2 chains of vec4, 8 components live (peak_body.glsl).
#define T ivec4
#define S int
#define W 4
#define INTEGER
#include "peak_body.glsl"
