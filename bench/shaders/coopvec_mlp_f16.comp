#version 460
// f16 throughout: bench_coopvec_mlp f16.
#extension GL_GOOGLE_include_directive : require
#define IN_T float16_t
#define MID_T float16_t
#define OUT_T float16_t
#define ESZ 2
#define OUT_ESZ 2
#define INTERP gl_ComponentTypeFloat16NV
#define BIAS_INTERP gl_ComponentTypeFloat16NV
#define BETWEEN(h) max(h, coopvecNV<float16_t, 64>(float16_t(0.0)))
#include "coopvec_mlp_body.glsl"
